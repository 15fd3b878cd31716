-- The venue's settings that every aggregator and node follow: for now the shard count (the
-- contract's sharding: a device's sightings travel on {p}/v1/sightings/{node}/{shard}), 1 by
-- default. A change notifies the aggregators as a registry change does; they publish it retained
-- on {p}/v1/config, where nodes read it.

CREATE TABLE presence.settings (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    shards     integer NOT NULL DEFAULT 1 CHECK (shards BETWEEN 1 AND 1024),
    updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO presence.settings DEFAULT VALUES;

CREATE TRIGGER settings_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.settings
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();

GRANT SELECT ON presence.settings TO presence_aggregator, presence_analyst;
GRANT SELECT, UPDATE ON presence.settings TO presence_admin;
