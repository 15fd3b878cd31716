-- History by month (declarative partitioning), so that retention drops whole months instead of
-- deleting row by row, and what the aggregator works on stays small:
--   presence.sessions  by the month a session ended (exited_at, UTC). Open sessions (no end yet)
--                      live in sessions_default with sessions that ended in a month without a
--                      partition of its own; an exit moves its session into its month. All open
--                      sessions in one partition keep "one open session per user" a unique index.
--   presence.events    by the month of the event (at, UTC), the rest in events_default.
-- presence.maintain_history_partitions() makes the months ahead and moves rows out of the default
-- partitions into months of their own (the aggregator calls it every hour, `presencectl purge` and
-- this migration once); presence.drop_history_partitions() drops the months retention no longer
-- keeps. The tables keep their columns and the views theirs: readers see no difference.

DROP VIEW presence.sessions_v, presence.current_v, presence.visits_30m_v, presence.occupancy_30m_v, presence.visits_v, presence.present_v;

ALTER TABLE presence.sessions RENAME TO sessions_unpartitioned;
ALTER TABLE presence.events RENAME TO events_unpartitioned;

CREATE TABLE presence.sessions (
    id           bigint GENERATED ALWAYS AS IDENTITY,
    user_key     text NOT NULL,
    beacon_key   text NOT NULL,
    venue_key    text,
    device       text NOT NULL,
    entered_at   timestamptz NOT NULL,
    -- The last qualifying sighting at the beacon, kept fresh so that a restarted aggregator can
    -- close the session at the right time for someone who left while it was down.
    last_seen_at timestamptz NOT NULL,
    exited_at    timestamptz,
    exit_reason  text CHECK (exit_reason IN ('moved', 'timeout', 'incognito', 'removed')),
    enter_event  uuid NOT NULL,
    exit_event   uuid,
    CHECK ((exited_at IS NULL) = (exit_reason IS NULL)),
    CHECK (exited_at IS NULL OR exited_at >= entered_at)
) PARTITION BY RANGE (exited_at);

CREATE TABLE presence.sessions_default PARTITION OF presence.sessions DEFAULT;

CREATE TABLE presence.events (
    id           uuid NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    kind         text NOT NULL CHECK (kind IN ('enter', 'exit')),
    user_key     text NOT NULL,
    beacon_key   text NOT NULL,
    at           timestamptz NOT NULL,
    -- The PresenceEvent exactly as published.
    payload      text NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
) PARTITION BY RANGE (at);

CREATE TABLE presence.events_default PARTITION OF presence.events DEFAULT;

-- The month partition of `parent` (sessions or events) that holds [month, next month) in UTC,
-- made when missing, with the rows the default partition holds for it moved in. True when made.
CREATE FUNCTION presence.add_month_partition(parent text, month timestamp) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    first  timestamp := date_trunc('month', month);
    name   text := parent || '_' || to_char(first, 'YYYY_MM');
    key    text := CASE parent WHEN 'sessions' THEN 'exited_at' WHEN 'events' THEN 'at' END;
    lower  timestamptz := first AT TIME ZONE 'UTC';
    upper  timestamptz := (first + INTERVAL '1 month') AT TIME ZONE 'UTC';
BEGIN
    IF key IS NULL THEN
        RAISE EXCEPTION 'no monthly partitions for %', parent;
    END IF;
    IF to_regclass(format('presence.%I', name)) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TEMP TABLE moving_rows AS WITH moved AS (DELETE FROM presence.%I WHERE %I >= %L AND %I < %L RETURNING *) SELECT * FROM moved',
                   parent || '_default', key, lower, key, upper);
    EXECUTE format('CREATE TABLE presence.%I PARTITION OF presence.%I FOR VALUES FROM (%L) TO (%L)', name, parent, lower, upper);
    EXECUTE format('CREATE UNIQUE INDEX ON presence.%I (%I)', name, CASE parent WHEN 'sessions' THEN 'id' ELSE 'seq' END);
    EXECUTE format('INSERT INTO presence.%I OVERRIDING SYSTEM VALUE SELECT * FROM moving_rows', parent);
    DROP TABLE moving_rows;
    RETURN true;
END
$$;

-- Makes the months from this one to `ahead` from now, and a month for every row the default
-- partitions hold of a month without one (closed sessions, events). Returns how many were made.
CREATE FUNCTION presence.maintain_history_partitions(ahead interval DEFAULT INTERVAL '2 months') RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    month timestamp;
    made  integer := 0;
BEGIN
    FOR month IN SELECT generate_series(date_trunc('month', now() AT TIME ZONE 'UTC'), (now() + ahead) AT TIME ZONE 'UTC', INTERVAL '1 month') LOOP
        made := made + presence.add_month_partition('sessions', month)::integer + presence.add_month_partition('events', month)::integer;
    END LOOP;
    FOR month IN SELECT DISTINCT date_trunc('month', exited_at AT TIME ZONE 'UTC') FROM presence.sessions_default WHERE exited_at IS NOT NULL LOOP
        made := made + presence.add_month_partition('sessions', month)::integer;
    END LOOP;
    FOR month IN SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC') FROM presence.events_default LOOP
        made := made + presence.add_month_partition('events', month)::integer;
    END LOOP;
    RETURN made;
END
$$;

-- Drops the months that end before `sessions_before` (sessions) and `events_before` (events; a
-- month with an event not yet published stays); NULL drops none. Returns each dropped partition
-- with the rows it held.
CREATE FUNCTION presence.drop_history_partitions(sessions_before timestamptz, events_before timestamptz)
RETURNS TABLE (parent text, partition_name text, row_count bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    part    record;
    before  timestamptz;
    waiting boolean;
BEGIN
    FOR part IN
        SELECT p.relname AS parent_name, c.relname AS child_name,
               (to_date(right(c.relname, 7), 'YYYY_MM') + INTERVAL '1 month') AT TIME ZONE 'UTC' AS month_end
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent
        JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = 'presence' AND p.relname IN ('sessions', 'events') AND c.relname ~ '^(sessions|events)_[0-9]{4}_[0-9]{2}$'
        ORDER BY 1, 3
    LOOP
        before := CASE part.parent_name WHEN 'sessions' THEN sessions_before ELSE events_before END;
        CONTINUE WHEN before IS NULL OR part.month_end > before;
        IF part.parent_name = 'events' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM presence.%I WHERE published_at IS NULL)', part.child_name) INTO waiting;
            CONTINUE WHEN waiting;
        END IF;
        parent := part.parent_name;
        partition_name := part.child_name;
        EXECUTE format('SELECT count(*) FROM presence.%I', part.child_name) INTO row_count;
        EXECUTE format('DROP TABLE presence.%I', part.child_name);
        RETURN NEXT;
    END LOOP;
END
$$;

-- The history so far, month by month, ids kept.
SELECT presence.add_month_partition('sessions', m)
FROM (SELECT DISTINCT date_trunc('month', exited_at AT TIME ZONE 'UTC') AS m FROM presence.sessions_unpartitioned WHERE exited_at IS NOT NULL) months;
SELECT presence.add_month_partition('events', m)
FROM (SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC') AS m FROM presence.events_unpartitioned) months;
SELECT presence.maintain_history_partitions();

INSERT INTO presence.sessions OVERRIDING SYSTEM VALUE SELECT * FROM presence.sessions_unpartitioned;
INSERT INTO presence.events OVERRIDING SYSTEM VALUE SELECT * FROM presence.events_unpartitioned;
SELECT setval(pg_get_serial_sequence('presence.sessions', 'id'), max(id)) FROM presence.sessions HAVING max(id) IS NOT NULL;
SELECT setval(pg_get_serial_sequence('presence.events', 'seq'), max(seq)) FROM presence.events HAVING max(seq) IS NOT NULL;
DROP TABLE presence.sessions_unpartitioned, presence.events_unpartitioned;

CREATE UNIQUE INDEX sessions_default_id ON presence.sessions_default (id);
-- At most one open session per user: every open session is in the default partition.
CREATE UNIQUE INDEX sessions_one_open_per_user ON presence.sessions_default (user_key) WHERE exited_at IS NULL;
CREATE INDEX sessions_beacon_time ON presence.sessions (beacon_key, entered_at);
CREATE INDEX sessions_user_time ON presence.sessions (user_key, entered_at);
CREATE INDEX sessions_entered ON presence.sessions (entered_at);
CREATE INDEX sessions_during ON presence.sessions USING gist (tstzrange(entered_at, exited_at, '[)'));
CREATE INDEX sessions_enter_event ON presence.sessions (enter_event);

-- An event's time never changes, so (id, at) is as unique as its id.
ALTER TABLE presence.events ADD PRIMARY KEY (id, at);
CREATE UNIQUE INDEX events_default_seq ON presence.events_default (seq);
CREATE INDEX events_unpublished ON presence.events (seq) WHERE published_at IS NULL;
CREATE INDEX events_user_time ON presence.events (user_key, at);

CREATE VIEW presence.sessions_v AS
SELECT user_key, beacon_key, venue_key, device, entered_at, exited_at, exit_reason,
       last_seen_at,
       EXTRACT(EPOCH FROM (COALESCE(exited_at, now()) - entered_at))::double precision AS dwell_seconds,
       id AS session_id
FROM presence.sessions;

CREATE VIEW presence.current_v AS
SELECT user_key, beacon_key, venue_key, entered_at AS since, device, last_seen_at
FROM presence.sessions
WHERE exited_at IS NULL;

CREATE VIEW presence.visits_30m_v AS
SELECT s.beacon_key,
       date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket_start,
       count(DISTINCT s.user_key)::integer AS unique_users
FROM presence.sessions s
GROUP BY 1, 2;

CREATE VIEW presence.occupancy_30m_v AS
SELECT s.beacon_key, b.bucket_start, count(DISTINCT s.user_key)::integer AS unique_users
FROM presence.sessions s
CROSS JOIN LATERAL generate_series(
    date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
    date_bin('30 minutes', COALESCE(s.exited_at, now()), TIMESTAMPTZ '2000-01-01 00:00:00+00'),
    INTERVAL '30 minutes') AS b (bucket_start)
GROUP BY s.beacon_key, b.bucket_start;

CREATE VIEW presence.visits_v AS
SELECT user_key, beacon_key, venue_key, entered_at, exited_at, exit_reason,
       EXTRACT(EPOCH FROM (COALESCE(exited_at, now()) - entered_at))::double precision AS dwell_seconds,
       id AS session_id
FROM presence.sessions;

CREATE VIEW presence.present_v AS
SELECT user_key, beacon_key, venue_key, entered_at AS since
FROM presence.sessions
WHERE exited_at IS NULL;

GRANT SELECT, INSERT, UPDATE, DELETE ON presence.sessions, presence.events TO presence_aggregator;
GRANT SELECT, DELETE ON presence.sessions, presence.events TO presence_admin;
GRANT SELECT ON presence.sessions_v, presence.current_v, presence.visits_30m_v, presence.occupancy_30m_v, presence.visits_v,
    presence.present_v TO presence_admin;
GRANT SELECT ON presence.visits_v, presence.present_v, presence.visits_30m_v, presence.occupancy_30m_v TO presence_analyst;

REVOKE ALL ON FUNCTION presence.add_month_partition(text, timestamp), presence.maintain_history_partitions(interval),
    presence.drop_history_partitions(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION presence.maintain_history_partitions(interval), presence.drop_history_partitions(timestamptz, timestamptz)
    TO presence_aggregator, presence_admin;
