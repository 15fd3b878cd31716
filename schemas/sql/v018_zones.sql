-- Places within places: zones (a floor, a hall, an office) hold beacons and other zones, to any
-- depth. A user is in a zone while at any beacon inside it; the aggregator keeps one zone session
-- per stay, at every level, beside the beacon sessions. A beacon registered with an iBeacon region
-- (ibeacon:<uuid> or ibeacon:<uuid>:<major>) stands for a zone of its own, keyed like the beacon,
-- without a row here (see docs/postgresql.md).

CREATE TABLE presence.zones (
    key        presence.slug PRIMARY KEY,
    venue_key  presence.slug REFERENCES presence.venues (key),
    name       text,
    parent_key presence.slug REFERENCES presence.zones (key) ON DELETE SET NULL CHECK (parent_key <> key),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE presence.beacons ADD COLUMN zone_key presence.slug REFERENCES presence.zones (key) ON DELETE SET NULL;

CREATE TRIGGER zones_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.zones
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();

-- A user's stay in a zone, from the enter of the first beacon inside it to the exit of the last.
-- Keys are text without foreign keys, as in sessions, so that history outlives registry changes.
CREATE TABLE presence.zone_sessions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_key    text NOT NULL,
    zone_key    text NOT NULL,
    venue_key   text,
    device      text NOT NULL,
    entered_at  timestamptz NOT NULL,
    exited_at   timestamptz,
    exit_reason text CHECK (exit_reason IN ('moved', 'timeout', 'incognito', 'removed')),
    enter_event uuid NOT NULL UNIQUE,
    exit_event  uuid UNIQUE,
    CHECK ((exited_at IS NULL) = (exit_reason IS NULL)),
    CHECK (exited_at IS NULL OR exited_at >= entered_at)
);

CREATE INDEX zone_sessions_open ON presence.zone_sessions (user_key, zone_key) WHERE exited_at IS NULL;
CREATE INDEX zone_sessions_zone_time ON presence.zone_sessions (zone_key, entered_at);
CREATE INDEX zone_sessions_user_time ON presence.zone_sessions (user_key, entered_at);
CREATE INDEX zone_sessions_exited ON presence.zone_sessions (exited_at);

-- One row per stay in a zone, at every level of nesting (contract v1).
CREATE VIEW presence.zone_sessions_v AS
SELECT user_key, zone_key, entered_at, exited_at, exit_reason, venue_key,
       EXTRACT(EPOCH FROM (COALESCE(exited_at, now()) - entered_at))::double precision AS dwell_seconds,
       id AS session_id
FROM presence.zone_sessions;

-- Who is in each zone now.
CREATE VIEW presence.zone_present_v AS
SELECT user_key, zone_key, venue_key, entered_at AS since
FROM presence.zone_sessions
WHERE exited_at IS NULL;

-- How many are in each zone now (zones nobody is in are absent).
CREATE VIEW presence.zone_occupancy_v AS
SELECT zone_key, count(DISTINCT user_key)::integer AS present
FROM presence.zone_sessions
WHERE exited_at IS NULL
GROUP BY zone_key;

-- Unique visitors per zone per 30-minute bucket of their arrival (as presence.visits_30m_v).
CREATE VIEW presence.zone_visits_30m_v AS
SELECT zone_key,
       date_bin('30 minutes', entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket_start,
       count(DISTINCT user_key)::integer AS unique_users
FROM presence.zone_sessions
GROUP BY 1, 2;

GRANT SELECT ON presence.zones TO presence_aggregator, presence_analyst;
GRANT SELECT, INSERT, UPDATE, DELETE ON presence.zones TO presence_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON presence.zone_sessions TO presence_aggregator;
GRANT SELECT, DELETE ON presence.zone_sessions TO presence_admin;
GRANT SELECT ON presence.zone_sessions_v, presence.zone_present_v, presence.zone_occupancy_v, presence.zone_visits_30m_v
    TO presence_admin, presence_analyst;
