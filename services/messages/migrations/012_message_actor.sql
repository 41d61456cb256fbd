-- A v1 in-app step's actor as its message shows it ({type, data}), for the Notification Center.
ALTER TABLE messages ADD COLUMN actor jsonb;
