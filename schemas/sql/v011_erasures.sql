-- Erasures (`presencectl user forget`): one row per request, holding nothing about the user. The
-- transaction that forgets a user deletes their rows and adds one here; the aggregator, seeing
-- the count grow, drops the users its registry lost without writing or publishing anything about
-- them, and deletes again whatever it had stored of them meanwhile.

CREATE TABLE presence.erasures (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    requested_at timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER erasures_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.erasures
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();

GRANT SELECT ON presence.erasures TO presence_aggregator;
GRANT DELETE ON presence.sessions, presence.events, presence.notifications TO presence_aggregator;
GRANT SELECT, INSERT ON presence.erasures TO presence_admin;
