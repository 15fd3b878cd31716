-- How far each aggregator (by MQTT client id) has applied its local journal to the database:
-- written in the same transaction as what it applies, so that a restart resumes exactly there.
-- A position means something only within the journal it was taken in (journal_id).

CREATE TABLE presence.aggregator_journal (
    client_id  text PRIMARY KEY,
    journal_id text NOT NULL,
    position   bigint NOT NULL CHECK (position >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);
