-- Context-scoped subscriptions (Novu's contexts): the keys ("type:id", sorted) of the contexts a
-- subscription is scoped to. It takes part only in triggers whose contexts are exactly these, so
-- every subscription made before (none) keeps taking part in triggers without contexts.
ALTER TABLE subscriptions ADD COLUMN context_keys text[] NOT NULL DEFAULT '{}';
-- A scoped subscription made without an identifier is stored under Novu's derived one, which
-- carries its keys (tk_<topic key>:si_<subscriber id>:ctx_<keys>) and so may be long.
ALTER TABLE subscriptions
  DROP CONSTRAINT subscriptions_identifier_check,
  ADD CONSTRAINT subscriptions_identifier_check CHECK (length(identifier) BETWEEN 1 AND 2048);

-- Novu's subscription preferences: per subscription and workflow, whether the workflow reaches the
-- subscriber through it, or the JSON Logic condition that decides at trigger time. A workflow
-- without one reaches the subscriber.
CREATE TABLE subscription_preferences (
  subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  environment_id  text NOT NULL,
  workflow_id     text NOT NULL,
  enabled         boolean NOT NULL,
  condition       jsonb,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, workflow_id)
);
