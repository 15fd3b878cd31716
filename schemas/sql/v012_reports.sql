-- Analysts' reports. A visit is one session: a user at a beacon from enter to exit (open while
-- the user is there). Each report is a function of a time range [from_at, to_at), both optional
-- (all time), over the visits that began in it unless said otherwise, with a view beside it for
-- all time (who_was_where takes one time instead). They read presence.visits_v, so that they see
-- users and beacons but never devices, with the caller's rights. Times and buckets are UTC. Each
-- function is one SQL statement, which PostgreSQL inlines into the caller's query: the time range,
-- and a filter on a column the report groups by (beacon, venue, user), reach the indexes below.

-- Visits that began in a time range, across beacons (the existing indexes lead with beacon or user).
CREATE INDEX IF NOT EXISTS sessions_entered ON presence.sessions (entered_at);
-- Visits that overlap a time or a range (who was where, busiest times): an open visit has no end.
CREATE INDEX IF NOT EXISTS sessions_during ON presence.sessions USING gist (tstzrange(entered_at, exited_at, '[)'));

-- Dwell per beacon: closed visits only (an open visit's dwell is not known yet), median and 90th
-- percentile by percentile_cont (interpolated between the two nearest visits, as a spreadsheet's
-- MEDIAN and PERCENTILE.INC), in seconds.
CREATE OR REPLACE FUNCTION presence.dwell(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (beacon_key text, venue_key text, visits bigint, visitors bigint, median_dwell_seconds double precision,
               p90_dwell_seconds double precision, mean_dwell_seconds double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT d.beacon_key, d.venue_key, d.visits, d.visitors, d.percentiles[1], d.percentiles[2], d.mean
    FROM (
        SELECT v.beacon_key, v.venue_key, count(*) AS visits, count(DISTINCT v.user_key) AS visitors,
               percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY v.dwell_seconds) AS percentiles,
               avg(v.dwell_seconds) AS mean
        FROM presence.visits_v v
        WHERE v.entered_at >= from_at AND v.entered_at < to_at AND v.exited_at IS NOT NULL
        GROUP BY v.beacon_key, v.venue_key
    ) d
$$;

-- Visits per beacon per hour: each visit (open or closed) counts in the hour it began, so a
-- beacon's hours add up to its visits; unique_users counts each user once per hour.
CREATE OR REPLACE FUNCTION presence.visits_hourly(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (beacon_key text, venue_key text, hour timestamptz, visits bigint, unique_users bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.beacon_key, v.venue_key, date_bin('1 hour', v.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
           count(*), count(DISTINCT v.user_key)
    FROM presence.visits_v v
    WHERE v.entered_at >= from_at AND v.entered_at < to_at
    GROUP BY 1, 2, 3
$$;

-- Visits per beacon per UTC day, counted as in visits_hourly.
CREATE OR REPLACE FUNCTION presence.visits_daily(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (beacon_key text, venue_key text, day date, visits bigint, unique_users bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.beacon_key, v.venue_key, (v.entered_at AT TIME ZONE 'UTC')::date, count(*), count(DISTINCT v.user_key)
    FROM presence.visits_v v
    WHERE v.entered_at >= from_at AND v.entered_at < to_at
    GROUP BY 1, 2, 3
$$;

-- Who was where at a time: the visits under way then, entered at or before it and exited after
-- it. At a move's instant a user is at the new beacon only. An open visit lasts as far as asked:
-- a time after now gives who is there now.
CREATE OR REPLACE FUNCTION presence.who_was_where(at timestamptz)
RETURNS TABLE (user_key text, beacon_key text, venue_key text, entered_at timestamptz, exited_at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.user_key, v.beacon_key, v.venue_key, v.entered_at, v.exited_at
    FROM presence.visits_v v
    WHERE tstzrange(v.entered_at, v.exited_at, '[)') @> who_was_where.at
$$;

-- Each user's path per UTC day: the beacons of the visits that began that day in the order they
-- began, with the times of each (path[i] from entered_at[i] to exited_at[i]; NULL: still there).
CREATE OR REPLACE FUNCTION presence.user_paths(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (user_key text, day date, path text[], entered_at timestamptz[], exited_at timestamptz[], visits bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.user_key, (v.entered_at AT TIME ZONE 'UTC')::date,
           array_agg(v.beacon_key ORDER BY v.entered_at, v.session_id),
           array_agg(v.entered_at ORDER BY v.entered_at, v.session_id),
           array_agg(v.exited_at ORDER BY v.entered_at, v.session_id),
           count(*)
    FROM presence.visits_v v
    WHERE v.entered_at >= from_at AND v.entered_at < to_at
    GROUP BY 1, 2
$$;

-- Busiest times per venue, per UTC hour: the most users there at the same instant (peak_users)
-- and the average number there over the hour (mean_users: the person-hours spent in it). Visits
-- overlapping [from_at, to_at) count for the part inside it (here the range bounds the time, not
-- the start of visits); an open visit lasts until now. Per
-- calendar hour because that keeps both the moment and the pattern: the busiest hours are the
-- rows with the highest peak, and an hour-of-day or day-of-week profile is a GROUP BY over them
-- (the max of the peaks, the average of the means). Hours when nobody was there have no row.
-- `venue` chooses one venue before the work (a filter on the result would come after it: the
-- visits are read once for all the steps).
CREATE OR REPLACE FUNCTION presence.busiest(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity',
                                            venue text DEFAULT NULL)
RETURNS TABLE (venue_key text, hour timestamptz, peak_users bigint, mean_users double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    -- The number of users at a venue changes in steps: +1 at each arrival, -1 at each departure,
    -- and 0 on every hour, so that between two instants with steps the number is constant within
    -- one hour. Only spans of time count: steps at the same instant (a move's exit and enter) leave
    -- no span between them, so a move is never two people.
    WITH visits AS MATERIALIZED (
        SELECT v.venue_key, GREATEST(v.entered_at, from_at) AS since, LEAST(COALESCE(v.exited_at, now()), to_at) AS until
        FROM presence.visits_v v
        WHERE tstzrange(v.entered_at, v.exited_at, '[)') && tstzrange(from_at, to_at, '[)') AND v.entered_at <= now()
          AND (busiest.venue IS NULL OR v.venue_key = busiest.venue)
    ), steps AS (
        SELECT venue_key, since AS at, 1 AS delta FROM visits
        UNION ALL
        SELECT venue_key, until, -1 FROM visits
        UNION ALL
        SELECT span.venue_key, h.at, 0
        FROM (SELECT visits.venue_key, min(since) AS first, max(until) AS last FROM visits GROUP BY visits.venue_key) span
        CROSS JOIN LATERAL generate_series(date_bin('1 hour', span.first, TIMESTAMPTZ '2000-01-01 00:00:00+00') + INTERVAL '1 hour',
                                           span.last, INTERVAL '1 hour') AS h (at)
    ), levels AS (
        SELECT steps.venue_key, at, lead(at) OVER w AS next_at, sum(delta) OVER (w ROWS UNBOUNDED PRECEDING) AS level
        FROM steps
        WINDOW w AS (PARTITION BY steps.venue_key ORDER BY at, delta)
    )
    SELECT levels.venue_key, date_bin('1 hour', at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), max(level),
           sum(level * EXTRACT(EPOCH FROM (next_at - at)))::double precision / 3600
    FROM levels
    WHERE next_at > at
    GROUP BY 1, 2
    HAVING max(level) > 0
$$;

CREATE OR REPLACE VIEW presence.dwell_v AS SELECT * FROM presence.dwell();
CREATE OR REPLACE VIEW presence.visits_hourly_v AS SELECT * FROM presence.visits_hourly();
CREATE OR REPLACE VIEW presence.visits_daily_v AS SELECT * FROM presence.visits_daily();
CREATE OR REPLACE VIEW presence.user_paths_v AS SELECT * FROM presence.user_paths();
CREATE OR REPLACE VIEW presence.busiest_v AS SELECT * FROM presence.busiest();

REVOKE ALL ON FUNCTION presence.dwell(timestamptz, timestamptz), presence.visits_hourly(timestamptz, timestamptz),
    presence.visits_daily(timestamptz, timestamptz), presence.who_was_where(timestamptz), presence.user_paths(timestamptz, timestamptz),
    presence.busiest(timestamptz, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION presence.dwell(timestamptz, timestamptz), presence.visits_hourly(timestamptz, timestamptz),
    presence.visits_daily(timestamptz, timestamptz), presence.who_was_where(timestamptz), presence.user_paths(timestamptz, timestamptz),
    presence.busiest(timestamptz, timestamptz, text) TO presence_analyst, presence_admin;
GRANT SELECT ON presence.dwell_v, presence.visits_hourly_v, presence.visits_daily_v, presence.user_paths_v, presence.busiest_v
    TO presence_analyst, presence_admin;
