-- Which database this is, for what an aggregator keeps outside it. Its journal records the id of
-- the database it serves and never lays its records over another one: a database created anew (a
-- re-created test database, a second venue on the same machine) gets an id of its own, while a
-- copy of this one (a promoted streaming standby, a restored backup or dump) carries this id and is
-- the same database to a journal, which then fills in what the copy lacks.

CREATE TABLE presence.database_identity (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    id         uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO presence.database_identity DEFAULT VALUES;

GRANT SELECT ON presence.database_identity TO presence_aggregator, presence_admin;
