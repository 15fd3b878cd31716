-- Least-privilege roles. They cannot log in: give each program a login role of its own that is a
-- member of one (CREATE ROLE venue_aggregator LOGIN PASSWORD '…' IN ROLE presence_aggregator).
-- Migrations run as the database's owner, who keeps every right.
--
--   presence_aggregator  reads the registry; writes sessions, events, notifications, its progress and
--                        the node offsets it fits
--   presence_admin       the registry (presencectl), reads what happened, erases a user's history
--   presence_analyst     reads visits through views that carry users and beacons but no device
--                        identity; cannot read devices, sessions or events, nor write anything

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['presence_aggregator', 'presence_admin', 'presence_analyst'] LOOP
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', name);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- made by an earlier migration of another database of this cluster
        END;
    END LOOP;
END
$$;

REVOKE ALL ON SCHEMA presence FROM PUBLIC;
GRANT USAGE ON SCHEMA presence TO presence_aggregator, presence_admin, presence_analyst;

GRANT SELECT ON presence.venues, presence.beacons, presence.beacon_neighbours, presence.nodes, presence.users, presence.devices,
    presence.migrations TO presence_aggregator;
GRANT SELECT, INSERT, UPDATE ON presence.sessions, presence.events, presence.notifications, presence.aggregator_clock,
    presence.aggregator_journal TO presence_aggregator;
GRANT SELECT, INSERT, UPDATE, DELETE ON presence.node_calibration TO presence_aggregator;

GRANT SELECT, INSERT, UPDATE, DELETE ON presence.venues, presence.beacons, presence.beacon_neighbours, presence.nodes,
    presence.users, presence.devices TO presence_admin;
GRANT SELECT, DELETE ON presence.sessions, presence.events, presence.notifications TO presence_admin;
GRANT SELECT ON presence.migrations, presence.aggregator_clock, presence.aggregator_journal, presence.node_calibration, presence.sessions_v,
    presence.current_v, presence.visits_30m_v, presence.occupancy_30m_v TO presence_admin;

-- What analysts see: visits and who is where, by user and beacon, never by device.
CREATE VIEW presence.visits_v AS
SELECT user_key, beacon_key, venue_key, entered_at, exited_at, exit_reason,
       EXTRACT(EPOCH FROM (COALESCE(exited_at, now()) - entered_at))::double precision AS dwell_seconds,
       id AS session_id
FROM presence.sessions;

CREATE VIEW presence.present_v AS
SELECT user_key, beacon_key, venue_key, entered_at AS since
FROM presence.sessions
WHERE exited_at IS NULL;

GRANT SELECT ON presence.visits_v, presence.present_v, presence.visits_30m_v, presence.occupancy_30m_v, presence.venues,
    presence.beacons TO presence_analyst;
GRANT SELECT ON presence.visits_v, presence.present_v TO presence_admin;
