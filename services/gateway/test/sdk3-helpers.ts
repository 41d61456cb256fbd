import * as errors from "@novu/api/models/errors/index.js";
import { expect } from "vitest";

/** SDK calls that fail must not be retried for an hour. */
export const once = { retries: { strategy: "none" as const } };

/** What a failed SDK call threw: an error class of the SDK (a shape it could not read would be a ResponseValidationError). */
export async function failureOf(call: Promise<unknown>): Promise<errors.NovuError> {
  const failure = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(errors.NovuError);
  expect(failure).not.toBeInstanceOf(errors.ResponseValidationError);
  return failure as errors.NovuError;
}
