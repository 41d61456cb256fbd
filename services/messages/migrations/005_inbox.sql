-- The Inbox's state of a message (Novu's archived, firstSeenDate, severity, tags and data), and
-- the indexes of its lists and counts.
ALTER TABLE messages
  ADD COLUMN archived boolean NOT NULL DEFAULT false,
  ADD COLUMN archived_at timestamptz,
  ADD COLUMN first_seen_date timestamptz,
  ADD COLUMN severity text COLLATE "C" NOT NULL DEFAULT 'none' CHECK (severity IN ('none', 'low', 'medium', 'high')),
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN data jsonb CHECK (data IS NULL OR jsonb_typeof(data) = 'object');

UPDATE messages SET first_seen_date = last_seen_date WHERE seen;

-- Archiving reads a message and "unseen" unarchives it, so an archived message is never unseen
-- and unseen counts need not look at archived.
ALTER TABLE messages ADD CONSTRAINT messages_archived_implies_seen CHECK (seen OR NOT archived);

-- The bell: unread messages not archived, per severity, each count a range of exactly the rows it
-- counts (snoozed ones, few, are skipped in the heap).
CREATE INDEX messages_inbox_unread_idx ON messages (environment_id, subscriber_id, severity, id)
  WHERE channel = 'in_app' AND NOT read AND NOT archived;

-- The Inbox's usual list (its tabs show messages not archived), newest first.
CREATE INDEX messages_inbox_active_idx ON messages (environment_id, subscriber_id, created_at DESC, id DESC)
  WHERE channel = 'in_app' AND NOT archived;
