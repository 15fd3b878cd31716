-- Visits are counted once, in the 30-minute bucket in which they began (buckets aligned to the
-- hour, UTC): a visit from 10:25 to 10:40 is one visitor of 10:00–10:30, not one of each bucket it
-- touches, so summing a beacon's buckets gives its unique visits. Who was there during a bucket,
-- whenever they arrived, is presence.occupancy_30m_v.

CREATE OR REPLACE VIEW presence.visits_30m_v AS
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
