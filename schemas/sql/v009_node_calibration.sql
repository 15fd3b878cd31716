-- Node offsets that persist. A node is pinned when its RSSI offset is set by hand (`node add
-- --rssi-offset`, `node pin`, `calibrate --apply`): self-calibration leaves it alone, even at 0.
-- Nodes registered with an offset of their own were pinned before this column existed, so they
-- stay pinned. (Version 8 is another change's.)
ALTER TABLE presence.nodes ADD COLUMN pinned boolean NOT NULL DEFAULT false;
UPDATE presence.nodes SET pinned = true WHERE rssi_offset <> 0;

-- The offsets the aggregator's self-calibration applies (`--self-calibrate`), written when they
-- change, read when it starts. Re-derivable from the node beacons, so a write lost while the
-- database is away costs nothing but staleness. No trigger: writing here is not a registry change.
CREATE TABLE presence.node_calibration (
    node_key    presence.slug PRIMARY KEY REFERENCES presence.nodes (key) ON DELETE CASCADE,
    offset_db   double precision NOT NULL,
    -- What the fit rests on: node-to-node links, its RMS residual (dB), readings taken.
    links       integer,
    residual_db double precision,
    readings    integer,
    fitted_at   timestamptz NOT NULL
);
