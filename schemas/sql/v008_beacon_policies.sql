-- Beacons' own decision settings and their neighbours (see PlacePolicies): a move to or from a
-- beacon needs at least its margin and dwell; a session there times out after its absence
-- timeout; a move between beacons that are not next to each other, when either declares
-- neighbours, needs the aggregator's jump margin and dwell on top. NULL follows the
-- aggregator's flags.

ALTER TABLE presence.beacons
    ADD COLUMN switch_margin      double precision CHECK (switch_margin >= 0 AND switch_margin <= 100),
    ADD COLUMN switch_dwell_ms    bigint CHECK (switch_dwell_ms >= 0 AND switch_dwell_ms <= 86400000),
    ADD COLUMN absence_timeout_ms bigint CHECK (absence_timeout_ms > 0 AND absence_timeout_ms <= 86400000);

-- Adjacency, stored once per pair (beacon_key < neighbour_key) and meaning both directions.
CREATE TABLE presence.beacon_neighbours (
    beacon_key    presence.slug NOT NULL REFERENCES presence.beacons (key) ON DELETE CASCADE,
    neighbour_key presence.slug NOT NULL REFERENCES presence.beacons (key) ON DELETE CASCADE,
    PRIMARY KEY (beacon_key, neighbour_key),
    CHECK (beacon_key < neighbour_key)
);

CREATE INDEX beacon_neighbours_neighbour ON presence.beacon_neighbours (neighbour_key);

CREATE TRIGGER beacon_neighbours_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON presence.beacon_neighbours
    FOR EACH STATEMENT EXECUTE FUNCTION presence.notify_registry();
