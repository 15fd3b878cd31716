-- How far each aggregator (by MQTT client id) had decided when it last saved its state. A
-- restarted aggregator resumes its clock from here and decides what the broker kept for it
-- during the downtime in that time's order, rather than all at once.

CREATE TABLE presence.aggregator_clock (
    client_id  text PRIMARY KEY,
    clock      timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
