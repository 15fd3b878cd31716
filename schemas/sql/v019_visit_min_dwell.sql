-- Visits, not walk-bys: the analysts' visit counts (visits_30m_v, zone_visits_30m_v,
-- visits_hourly, visits_daily, `presencectl visits`, the page's chart) count a stay only once it
-- has lasted the venue's visit_min_dwell, so that a crowd walking down an aisle does not visit
-- every booth on it (15 s suits an expo). It is 0 until a venue sets it: every stay counts, as
-- the contract's visits_30m_v always has. The sessions keep every stay; occupancy, presence and
-- dwell figures are unchanged.

ALTER TABLE presence.settings
    ADD COLUMN visit_min_dwell interval NOT NULL DEFAULT '0 seconds' CHECK (visit_min_dwell >= interval '0');

-- Whether a stay from entered_at to exited_at (NULL: still there) counts as a visit.
CREATE FUNCTION presence.is_visit(entered_at timestamptz, exited_at timestamptz)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT COALESCE(exited_at, now()) - entered_at >= (SELECT s.visit_min_dwell FROM presence.settings s)
$$;

CREATE OR REPLACE VIEW presence.visits_30m_v AS
SELECT s.beacon_key,
       date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket_start,
       count(DISTINCT s.user_key)::integer AS unique_users
FROM presence.sessions s
WHERE presence.is_visit(s.entered_at, s.exited_at)
GROUP BY 1, 2;

CREATE OR REPLACE VIEW presence.zone_visits_30m_v AS
SELECT zone_key,
       date_bin('30 minutes', entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket_start,
       count(DISTINCT user_key)::integer AS unique_users
FROM presence.zone_sessions
WHERE presence.is_visit(entered_at, exited_at)
GROUP BY 1, 2;

CREATE OR REPLACE FUNCTION presence.visits_hourly(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (beacon_key text, venue_key text, hour timestamptz, visits bigint, unique_users bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.beacon_key, v.venue_key, date_bin('1 hour', v.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
           count(*), count(DISTINCT v.user_key)
    FROM presence.visits_v v
    WHERE v.entered_at >= from_at AND v.entered_at < to_at AND presence.is_visit(v.entered_at, v.exited_at)
    GROUP BY 1, 2, 3
$$;

CREATE OR REPLACE FUNCTION presence.visits_daily(from_at timestamptz DEFAULT '-infinity', to_at timestamptz DEFAULT 'infinity')
RETURNS TABLE (beacon_key text, venue_key text, day date, visits bigint, unique_users bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT v.beacon_key, v.venue_key, (v.entered_at AT TIME ZONE 'UTC')::date, count(*), count(DISTINCT v.user_key)
    FROM presence.visits_v v
    WHERE v.entered_at >= from_at AND v.entered_at < to_at AND presence.is_visit(v.entered_at, v.exited_at)
    GROUP BY 1, 2, 3
$$;
