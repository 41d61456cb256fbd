import { CHANNELS, invalidArgument, isChannelName, type FieldErrors } from "@notify/runtime";

/** Channels whose messages go through one primary integration (Novu's CHANNELS_WITH_PRIMARY). */
export const CHANNELS_WITH_PRIMARY: readonly string[] = ["email", "sms"];

const MAX_TEXT = 255;

/** Collects the failures of one request, to answer them together as one 422. */
export class Checks {
  private readonly errors: FieldErrors = {};

  fail(field: string, message: string, value: string): void {
    this.errors[field] = { messages: [message], value };
  }

  channel(field: string, value: string): void {
    if (!isChannelName(value)) this.fail(field, `${field} must be one of: ${CHANNELS.join(", ")}`, value);
  }

  /** 1 to 255 characters, not only whitespace. */
  text(field: string, value: string | undefined): void {
    if (value !== undefined && (value.trim().length === 0 || value.length > MAX_TEXT)) {
      this.fail(field, `${field} must be between 1 and ${MAX_TEXT} characters`, value);
    }
  }

  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw invalidArgument("Validation failed", this.errors);
  }
}
