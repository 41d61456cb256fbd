-- An in-app message's avatar (Novu's message avatar: the image its Inbox item shows).
ALTER TABLE messages ADD COLUMN avatar text;
