-- The registry: venues, beacons (places, with an optional radio identity or region), scanner
-- nodes, users and their devices. Every change notifies channel 'presence_registry', so that a
-- running aggregator reloads within moments.

CREATE SCHEMA IF NOT EXISTS presence;

-- Keys appear in MQTT topics: lower case, no '/', '+' or '#'.
CREATE DOMAIN presence.slug AS text
    CHECK (VALUE ~ '^[a-z0-9][a-z0-9._-]{0,63}$');

-- A canonical identity: ibeacon:, altbeacon:, eddystone:, mac: or node:, lower-case hex.
CREATE DOMAIN presence.identity AS text
    CHECK (VALUE ~ '^(ibeacon|altbeacon):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(:(0|[1-9][0-9]{0,4})){0,2}$'
        OR VALUE ~ '^eddystone:[0-9a-f]{20}(:[0-9a-f]{12})?$'
        OR VALUE ~ '^mac:[0-9a-f]{2}(:[0-9a-f]{2}){5}$'
        OR VALUE ~ '^node:[a-z0-9][a-z0-9._-]{0,63}$');

CREATE TABLE presence.venues (
    key        presence.slug PRIMARY KEY,
    name       text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE presence.beacons (
    key        presence.slug PRIMARY KEY,
    venue_key  presence.slug REFERENCES presence.venues (key),
    name       text,
    -- The radio identity of the beacon hanging there, or a region (ibeacon:<uuid>[:<major>]).
    identity   presence.identity UNIQUE CHECK (identity NOT LIKE 'node:%'),
    x          double precision,
    y          double precision,
    floor      integer,
    radius     double precision CHECK (radius > 0),
    tx         integer CHECK (tx BETWEEN -127 AND 20),
    hello      text,
    goodbye    text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((x IS NULL) = (y IS NULL))
);

CREATE TABLE presence.nodes (
    key         presence.slug PRIMARY KEY,
    venue_key   presence.slug REFERENCES presence.venues (key),
    -- The beacon (place) the node stands at, for fixed scanners hearing carried tags.
    beacon_key  presence.slug REFERENCES presence.beacons (key) ON DELETE SET NULL,
    x           double precision,
    y           double precision,
    floor       integer,
    rssi_offset double precision NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((x IS NULL) = (y IS NULL))
);

CREATE TABLE presence.users (
    key             presence.slug PRIMARY KEY,
    name            text,
    -- While now() < incognito_until the user produces no events, sessions or state.
    incognito_until timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE presence.devices (
    identity   presence.identity PRIMARY KEY,
    user_key   presence.slug NOT NULL REFERENCES presence.users (key) ON DELETE CASCADE,
    name       text,
    tx         integer CHECK (tx BETWEEN -127 AND 20),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX devices_user ON presence.devices (user_key);

CREATE FUNCTION presence.notify_registry() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('presence_registry', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER venues_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.venues
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
CREATE TRIGGER beacons_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.beacons
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
CREATE TRIGGER nodes_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.nodes
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
CREATE TRIGGER users_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.users
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
CREATE TRIGGER devices_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.devices
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
