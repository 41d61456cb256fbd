-- What a notification keeps of its trigger and workflow, as Novu's does: the activity feed shows
-- them and filters by severity and topic. Notifications written before have Novu's defaults.
ALTER TABLE notifications
  ADD COLUMN severity text NOT NULL DEFAULT 'none',
  ADD COLUMN critical boolean NOT NULL DEFAULT false,
  ADD COLUMN tags     text[] NOT NULL DEFAULT '{}',
  -- [{topicId, topicKey}] of the topics the trigger named, for a subscriber reached through them.
  ADD COLUMN topics   jsonb;
