-- Named subscriptions (@novu/api 3.x): the identifier a subscription was made with and its name.
-- NULL identifier: the subscription is named tk_<topic key>:si_<subscriber id>, as Novu names one
-- made from a bare subscriber id (derived when read, so existing rows need no rewrite). A
-- subscriber still holds one subscription per topic.
ALTER TABLE subscriptions
  ADD COLUMN identifier text CHECK (length(identifier) BETWEEN 1 AND 255),
  ADD COLUMN name text CHECK (length(name) BETWEEN 1 AND 255);
CREATE UNIQUE INDEX subscriptions_topic_identifier_idx ON subscriptions (topic_id, identifier);
