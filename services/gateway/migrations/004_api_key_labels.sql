-- What an operator calls a key (`pnpm notify keys create --label`), and when it stops working:
-- NULL, never. An expired key is refused like a revoked one.
ALTER TABLE api_keys
  ADD COLUMN label text,
  ADD COLUMN expires_at timestamptz;
