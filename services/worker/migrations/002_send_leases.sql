-- One row per message handed to a provider, claimed before the call: a message is sent at most
-- once. 'sending' rows whose worker died mid-call have an unknown outcome: a provider that
-- deduplicates gets the same call again, any other ends 'unknown', for an operator to look at.
CREATE TABLE send_leases (
  message_id          text COLLATE "C" PRIMARY KEY,
  organization_id     text NOT NULL,
  environment_id      text COLLATE "C" NOT NULL,
  provider_id         text NOT NULL,
  state               text NOT NULL CHECK (state IN ('sending', 'retrying', 'sent', 'failed', 'unknown')),
  attempts            integer NOT NULL CHECK (attempts > 0),
  provider_message_id text,
  error_id            text,
  error_text          text,
  first_attempt_at    timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX send_leases_unknown_idx ON send_leases (updated_at) WHERE state = 'unknown';
