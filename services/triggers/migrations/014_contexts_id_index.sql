-- A context list filtered by id (of any type) finds its rows without walking the environment's
-- contexts: the primary key leads with the type.
CREATE INDEX contexts_environment_id_idx ON contexts (environment_id, id);
