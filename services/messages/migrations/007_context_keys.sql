-- The keys ("type:id", sorted) of the contexts a message's trigger named: an Inbox session shows
-- exactly the messages whose keys equal its own, so messages of triggers without contexts (every
-- message written before this) carry none and show in sessions without contexts.
ALTER TABLE messages ADD COLUMN context_keys text[] NOT NULL DEFAULT '{}';
