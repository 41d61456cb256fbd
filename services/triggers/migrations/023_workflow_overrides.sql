-- A tenant's settings for one workflow (Novu's workflow overrides). A tenant's go with it; a
-- deleted workflow's stay, as its row does.
CREATE TABLE workflow_overrides (
  id                  text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id     text NOT NULL,
  environment_id      text NOT NULL,
  workflow_id         text NOT NULL REFERENCES workflows (id),
  tenant_id           text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  active              boolean NOT NULL,
  -- All five channels, each true or false.
  preference_settings jsonb NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, workflow_id, tenant_id)
);

CREATE INDEX workflow_overrides_environment_id_idx ON workflow_overrides (environment_id, id);
CREATE INDEX workflow_overrides_tenant_id_idx ON workflow_overrides (tenant_id);
