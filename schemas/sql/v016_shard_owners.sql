-- Which aggregator owns which shard, and since when (`presencectl shards`). Ownership itself is a
-- PostgreSQL advisory lock held on the owner's session (pg_try_advisory_lock(7264011, shard)); a
-- row here only says who took it last: it is current while that lock is held, which pg_locks shows.
-- Every aggregator also holds pg_advisory_lock(7264010, hashtext(client_id)) while it runs, so that
-- the live ones can be counted and two with the same client id cannot both run.

CREATE TABLE presence.shard_owners (
    shard     integer PRIMARY KEY CHECK (shard BETWEEN 0 AND 1023),
    client_id text NOT NULL,
    since     timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON presence.shard_owners TO presence_aggregator;
GRANT SELECT ON presence.shard_owners TO presence_admin, presence_analyst;
