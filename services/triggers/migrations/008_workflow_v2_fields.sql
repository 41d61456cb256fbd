-- What Novu's v2 workflow API adds to a workflow: the severity its in-app messages take, a JSON
-- schema that trigger payloads may be checked against, and the two levels of preferences that
-- critical and preference_settings are merged from (null: written through v1, which has one level).
ALTER TABLE workflows
  ADD COLUMN severity text NOT NULL DEFAULT 'none' CHECK (severity IN ('none', 'low', 'medium', 'high')),
  ADD COLUMN validate_payload boolean NOT NULL DEFAULT false,
  ADD COLUMN payload_schema jsonb CHECK (payload_schema IS NULL OR jsonb_typeof(payload_schema) = 'object'),
  ADD COLUMN preference_levels jsonb CHECK (preference_levels IS NULL OR jsonb_typeof(preference_levels) = 'object');
