-- The jobs of steps that write no message of their own (delay and digest steps, and steps their
-- conditions skipped), as Novu's activity shows them beside the jobs the messages stand for. A
-- job keeps what it went through (Novu's execution details) in order in `details`, each
-- {id, detail, status, raw?, at}: a job has a handful, always read with it.
CREATE TABLE step_jobs (
  id                     text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  organization_id        text NOT NULL,
  environment_id         text COLLATE "C" NOT NULL,
  -- Expired notifications take their step jobs with them.
  notification_id        text COLLATE "C" NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
  step_id                text COLLATE "C" NOT NULL,
  message_template_id    text NOT NULL,
  type                   text NOT NULL CHECK (type IN ('delay', 'digest', 'in_app', 'email', 'sms', 'chat', 'push')),
  status                 text NOT NULL CHECK (status IN ('delayed', 'merged', 'completed', 'skipped', 'canceled', 'failed')),
  digest                 jsonb CHECK (digest IS NULL OR jsonb_typeof(digest) = 'object'),
  details                jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(details) = 'array'),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (notification_id, step_id)
);
