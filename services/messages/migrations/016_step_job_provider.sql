-- A channel step's job keeps the provider Novu's job carries from the trigger (the environment's
-- first active integration of the channel's), as do the channel steps a delay's or digest's job
-- keeps in `later` ({stepId, type, providerId}). Jobs recorded before show Novu's own provider.
ALTER TABLE step_jobs ADD COLUMN provider_id text;
