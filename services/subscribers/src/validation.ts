import { invalidArgument, isTimeZone, type FieldErrors } from "@notify/runtime";
import type { subscribersV1 } from "@notify/proto";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_TEXT = 1024;

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value.replace(/_/g, "-")).length === 1;
  } catch {
    return false;
  }
}

/** Value rules for a subscriber write; all failures at once, as one 422. */
export function checkSubscriberWrite(subscriberId: string, fields: subscribersV1.SubscriberFields | undefined): void {
  const errors = subscriberWriteErrors(subscriberId, fields);
  if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
}

/** The fields of a write that break a value rule, by name. */
export function subscriberWriteErrors(subscriberId: string, fields: subscribersV1.SubscriberFields | undefined): FieldErrors {
  const errors: FieldErrors = {};
  const fail = (field: string, message: string, value: string) => {
    errors[field] = { messages: [message], value };
  };
  if (subscriberId.trim().length === 0 || subscriberId.length > 255) {
    fail("subscriberId", "subscriberId must be between 1 and 255 characters", subscriberId);
  }
  if (fields) {
    if (fields.email !== undefined && !EMAIL.test(fields.email)) fail("email", "email must be an email", fields.email);
    if (fields.locale !== undefined && !isLocale(fields.locale)) fail("locale", "locale must be a valid locale", fields.locale);
    if (fields.timezone !== undefined && !isTimeZone(fields.timezone)) {
      fail("timezone", "timezone must be a valid IANA time zone", fields.timezone);
    }
    for (const name of ["firstName", "lastName", "phone", "avatar"] as const) {
      const value = fields[name];
      if (value !== undefined && value.length > MAX_TEXT) fail(name, `${name} must be at most ${MAX_TEXT} characters`, value);
    }
  }
  return errors;
}
