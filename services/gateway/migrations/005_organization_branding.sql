-- An organization's branding as Novu keeps it (color, logo, fontColor, contentBackground,
-- fontFamily): the Notification Center shows it. And when the organization last changed.
ALTER TABLE organizations ADD COLUMN branding jsonb;
ALTER TABLE organizations ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
