-- Sessions (a user at a beacon from enter to exit) and the events behind them. Events are an
-- outbox: written in the same transaction as the session change, published afterwards, marked
-- published on the broker's acknowledgement, and published again after a crash (same id).
-- Keys are kept as text without foreign keys, so history outlives registry changes.

CREATE TABLE presence.sessions (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    enter_event  uuid NOT NULL UNIQUE,
    exit_event   uuid UNIQUE,
    CHECK ((exited_at IS NULL) = (exit_reason IS NULL)),
    CHECK (exited_at IS NULL OR exited_at >= entered_at)
);

-- At most one open session per user.
CREATE UNIQUE INDEX sessions_one_open_per_user ON presence.sessions (user_key) WHERE exited_at IS NULL;
CREATE INDEX sessions_beacon_time ON presence.sessions (beacon_key, entered_at);
CREATE INDEX sessions_user_time ON presence.sessions (user_key, entered_at);

CREATE TABLE presence.events (
    id           uuid PRIMARY KEY,
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    kind         text NOT NULL CHECK (kind IN ('enter', 'exit')),
    user_key     text NOT NULL,
    beacon_key   text NOT NULL,
    at           timestamptz NOT NULL,
    -- The PresenceEvent exactly as published.
    payload      text NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);

CREATE INDEX events_unpublished ON presence.events (seq) WHERE published_at IS NULL;
CREATE INDEX events_user_time ON presence.events (user_key, at);
