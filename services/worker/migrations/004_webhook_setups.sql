-- One row per integration whose event webhook a worker is setting up (Novu's auto-configure):
-- a second setup of the same integration is turned away while the first runs, rather than both
-- listing the provider's webhooks and both creating one. A row older than any setup takes is a
-- dead worker's, and the next setup takes it over.
CREATE TABLE webhook_setups (
  integration_id text COLLATE "C" PRIMARY KEY,
  claimed_at     timestamptz NOT NULL DEFAULT now()
);
