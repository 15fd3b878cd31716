-- The last hello and goodbye sent to each user at each beacon, so that the cool-down holds across
-- restarts. Written in the same transaction as the events that caused them.

CREATE TABLE presence.notifications (
    user_key   text NOT NULL,
    beacon_key text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('hello', 'goodbye')),
    message    text NOT NULL,
    sent_at    timestamptz NOT NULL,
    PRIMARY KEY (user_key, beacon_key, kind)
);
