import { Code, ConnectError } from "@connectrpc/connect";
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { structFromJson, structToJson } from "./struct.js";

export { Code, ConnectError };

/** What the gateway renders as `errors: {<field>: {messages, value}}` on a 422. */
export type FieldErrors = Record<string, { messages: string[]; value?: JsonValue }>;

export const notFound = (message: string) => new ConnectError(message, Code.NotFound);
/** The NOT_FOUND every service (and the gateway's batched lookups) answers for an unknown subscriber. */
export const subscriberNotFound = (subscriberId: string) => notFound(`Subscriber '${subscriberId}' was not found`);
export const alreadyExists = (message: string) => new ConnectError(message, Code.AlreadyExists);
/** A request that is well-formed but cannot be carried out in the current state (HTTP 400). */
export const failedPrecondition = (message: string) => new ConnectError(message, Code.FailedPrecondition);

/** A field-level validation failure; the field errors travel as a Struct detail. */
export function invalidArgument(message: string, fields: FieldErrors = {}): ConnectError {
  const detail = create(StructSchema, structFromJson(fields as unknown as JsonObject));
  return new ConnectError(message, Code.InvalidArgument, undefined, [{ desc: StructSchema, value: detail }]);
}

export function invalidField(field: string, message: string, value?: JsonValue): ConnectError {
  const entry: FieldErrors[string] = value === undefined ? { messages: [message] } : { messages: [message], value };
  return invalidArgument("Validation failed", { [field]: entry });
}

/** Refuses a batch call carrying more than `max` entries of `field`: every batch RPC is bounded the same way. */
export function boundBatch(field: string, count: number, max: number): void {
  if (count > max) throw invalidField(field, `at most ${max} ${field} per call`, count);
}

export function fieldErrorsOf(error: ConnectError): FieldErrors | undefined {
  const [detail] = error.findDetails(StructSchema);
  return detail ? (structToJson(detail) as unknown as FieldErrors) : undefined;
}
