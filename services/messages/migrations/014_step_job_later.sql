-- A delay's or digest's job keeps the active steps behind it ([{stepId, type}]) in the workflow
-- its run was triggered with: the activity shows their jobs waiting behind it, as Novu made them
-- at the trigger, also after the workflow changed. Jobs recorded before this have none: the
-- activity reads those from the workflow as it is.
ALTER TABLE step_jobs ADD COLUMN later jsonb;
