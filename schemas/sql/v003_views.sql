-- The views analysts rely on (contract v1). Extra columns go at the end.

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

-- Unique users per beacon per 30-minute bucket (buckets aligned to the hour, UTC), counting every
-- bucket a session overlaps.
CREATE VIEW presence.visits_30m_v AS
SELECT s.beacon_key, b.bucket_start, count(DISTINCT s.user_key)::integer AS unique_users
FROM presence.sessions s
CROSS JOIN LATERAL generate_series(
    date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
    date_bin('30 minutes', COALESCE(s.exited_at, now()), TIMESTAMPTZ '2000-01-01 00:00:00+00'),
    INTERVAL '30 minutes') AS b (bucket_start)
GROUP BY s.beacon_key, b.bucket_start;
