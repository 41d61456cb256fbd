import { z } from "zod";
import { errorBodySchema } from "./errors.js";
import type { Audience, Method, Route } from "./route.js";

/**
 * The OpenAPI 3.1 description of the API, derived from the route table alone: each route's
 * path, method, audience, success status and envelope, and the zod schemas that validate its
 * params, query and body (the same objects, so the description cannot drift from what is
 * enforced), and the zod schema of its answer, where it declares one (held to the real answers
 * by a test). A route added to the table is described without anything more.
 */

type JsonSchema = Record<string, unknown>;
type Reference = { $ref: string };

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

interface Response {
  description: string;
  headers?: Record<string, Reference>;
  content?: { "application/json": { schema: JsonSchema | Reference } };
}

export interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters: (Parameter | Reference)[];
  requestBody?: {
    required: boolean;
    description?: string;
    content: { "application/json": { schema: JsonSchema }; "application/x-www-form-urlencoded"?: { schema: JsonSchema } };
  };
  responses: Record<string, Response | Reference>;
}

export interface OpenApiDocument {
  openapi: "3.1.1";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Partial<Record<Lowercase<Method>, Operation>>>;
  components: {
    securitySchemes: Record<string, JsonSchema>;
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, Parameter>;
    headers: Record<string, { description: string; schema: JsonSchema }>;
    responses: Record<string, Response>;
  };
}

const SCHEMAS = "#/components/schemas/";
const ref = (section: string, name: string): Reference => ({ $ref: `#/components/${section}/${name}` });

/** Who may call: the security scheme of each audience (none for `public`). */
const SECURITY: Record<Audience, Record<string, string[]>[]> = {
  api: [{ ApiKey: [] }],
  inbox: [{ Bearer: [] }],
  public: [],
};

/** The error answers of every route, and of some audiences and methods; each with the error body. */
const ERROR_RESPONSES = {
  BadRequest: [400, "The request is malformed: a body that is not JSON, is nested too deeply, or asks what cannot be done"],
  Unauthorized: [401, "No valid credential for the route's security scheme"],
  SnoozeTooLong: [402, "The snooze ends later than the environment's maxSnoozeDurationHours allow"],
  NotFound: [404, "The resource named does not exist in the caller's environment"],
  Conflict: [409, "The resource already exists, or a request with the same idempotency key is still running (Retry-After)"],
  PayloadTooLarge: [413, "The body is larger than the route accepts"],
  ValidationFailed: [422, "Parameters, query or body fail validation; `errors` names each field (or the idempotency key was used for another body)"],
  RateLimited: [
    429,
    "The rate limit is spent (an API route's: its environment's, of the route's category; an Inbox route's: its subscriber's; a public route's: the client address's): retry after Retry-After seconds",
  ],
  InternalError: [500, "An unexpected failure, logged under `errorId`"],
  Unavailable: [503, "A dependency is unavailable: retry after Retry-After seconds"],
} as const satisfies Record<string, readonly [number, string]>;
type ErrorResponse = keyof typeof ERROR_RESPONSES;

const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"] as const;
const RETRY_AFTER: readonly ErrorResponse[] = ["Conflict", "RateLimited", "Unavailable"];

/** The errors a route can answer, from what it declares. */
function errorsOf(route: Route): ErrorResponse[] {
  const errors: ErrorResponse[] = ["BadRequest", "NotFound", "PayloadTooLarge", "ValidationFailed", "RateLimited", "InternalError", "Unavailable"];
  if (route.audience !== "public") errors.push("Unauthorized");
  if (route.audience === "api" && route.method !== "GET" && route.method !== "DELETE") errors.push("Conflict");
  if (route.path.endsWith("/snooze")) errors.push("SnoozeTooLong");
  return errors;
}

/** Koa's `/v1/subscribers/:subscriberId` as OpenAPI's `/v1/subscribers/{subscriberId}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

const pathParamNames = (path: string) => [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);

/** `postV1SubscribersSubscriberIdMessagesMarkAs` for POST /v1/subscribers/:subscriberId/messages/mark-as. */
function operationIdOf(route: Route): string {
  const words = route.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return route.method.toLowerCase() + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
}

/** The resource a route belongs to: `subscribers` for /v1/subscribers/…, `inbox` for /v1/inbox/…. */
const tagOf = (route: Route) => route.path.split("/")[2] ?? "api";

/**
 * JSON Schemas of one route's zod schemas, with any definitions they need moved into
 * components.schemas: a named response shape (`.meta({ id })`) under its name, shared by every
 * route that answers it; anything else zod defines (a recursive value) under a name of the route's
 * own, so references resolve in the document. Requests are described as the client sends them
 * (`input`), answers as the gateway sends them (`output`).
 */
function schemaConverter(schemas: Record<string, JsonSchema>) {
  return (schema: z.ZodType, name: string, io: "input" | "output" = "input"): JsonSchema => {
    const { $schema: _dialect, $defs, ...converted } = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });
    if (!$defs) return converted;
    // zod names the definitions it makes up `__schema0`, `__schema1`, … in every conversion.
    const renamed = (definition: string) => (definition.startsWith("__schema") ? `${name}_${definition}` : definition);
    const relink = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(relink);
      if (value === null || typeof value !== "object") return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [
          key,
          key === "$ref" && typeof item === "string" && item.startsWith("#/$defs/") ? SCHEMAS + renamed(item.slice("#/$defs/".length)) : relink(item),
        ]),
      );
    };
    for (const [definition, body] of Object.entries($defs)) schemas[renamed(definition)] = relink(body) as JsonSchema;
    return relink(converted) as JsonSchema;
  };
}

/**
 * Whether a zod schema rewrites its input before validating it (z.preprocess): its JSON Schema
 * describes the rewritten value, so a field it requires may be one the rewrite always fills in.
 */
const rewritesInput = (schema: z.ZodType) => schema instanceof z.ZodPipe && schema.in instanceof z.ZodTransform;

/** The parameters an object schema describes, one per property; query parameters required as `requiredKnown` allows. */
function parametersOf(schema: JsonSchema, location: "path" | "query", requiredKnown = true): Parameter[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(requiredKnown ? ((schema.required ?? []) as string[]) : []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === "path" || required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema: rest,
    };
  });
}

const isEmptySchema = (schema: JsonSchema) => Object.keys(schema).length === 0;

function successOf(route: Route, convert: ReturnType<typeof schemaConverter>, operationId: string): Response {
  const headers: Record<string, Reference> = {};
  for (const name of RATE_LIMIT_HEADERS) headers[name] = ref("headers", name);
  if (route.audience === "api" && (route.method === "POST" || route.method === "PATCH")) {
    headers["Idempotency-Key"] = ref("headers", "Idempotency-Key");
    headers["Idempotency-Replay"] = ref("headers", "Idempotency-Replay");
  }
  const response: Response = { description: route.status === 204 ? "Done; no body" : "Success", ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  if (route.status === 204) return response;
  let schema: JsonSchema | Reference;
  if (route.response) schema = convert(route.envelope ? z.object({ data: route.response }) : route.response, `${operationId}Response`, "output");
  else if (route.envelope) schema = { type: "object", properties: { data: {} }, required: ["data"], description: "The result, wrapped as `data`" };
  else schema = { type: "object", description: "A page: the items under `data`, with the paging fields" };
  return { ...response, content: { "application/json": { schema } } };
}

/** A body read as it arrives (a provider's webhook, which signs its bytes): JSON or a form, of the sender's own shape. */
const RAW_REQUEST_BODY: NonNullable<Operation["requestBody"]> = {
  required: true,
  description: "The body as the sender writes it, JSON or a form",
  content: { "application/json": { schema: {} }, "application/x-www-form-urlencoded": { schema: { type: "object" } } },
};

function operationOf(route: Route, convert: ReturnType<typeof schemaConverter>, operationId: string): Operation {
  const params = convert(route.params, `${operationId}Params`);
  const declared = new Map(parametersOf(params, "path").map((parameter) => [parameter.name, parameter]));
  // Every placeholder of the path, declared by the route's params schema or not.
  const pathParameters = pathParamNames(route.path).map(
    (name): Parameter => declared.get(name) ?? { name, in: "path", required: true, schema: { type: "string" } },
  );
  const parameters: (Parameter | Reference)[] = [
    ...pathParameters,
    ...parametersOf(convert(route.query, `${operationId}Query`), "query", !rewritesInput(route.query)),
  ];
  if (route.audience === "api" && (route.method === "POST" || route.method === "PATCH")) parameters.push(ref("parameters", "IdempotencyKey"));
  const body = convert(route.body, `${operationId}Body`);
  const responses: Record<string, Response | Reference> = { [String(route.status)]: successOf(route, convert, operationId) };
  for (const error of errorsOf(route)) responses[String(ERROR_RESPONSES[error][0])] = ref("responses", error);
  return {
    operationId,
    summary: `${route.method} ${route.path}`,
    tags: [tagOf(route)],
    security: SECURITY[route.audience],
    parameters,
    ...(route.rawBody
      ? { requestBody: RAW_REQUEST_BODY }
      : isEmptySchema(body)
        ? {}
        : { requestBody: { required: true, content: { "application/json": { schema: body } } } }),
    responses,
  };
}

/** The error responses, each with the RateLimit headers (every route is limited, and answers them once its limit was taken). */
function errorResponses(errorSchema: Reference): Record<string, Response> {
  const responses: Record<string, Response> = {};
  for (const [name, [, description]] of Object.entries(ERROR_RESPONSES) as [ErrorResponse, (typeof ERROR_RESPONSES)[ErrorResponse]][]) {
    const headers: Record<string, Reference> = RETRY_AFTER.includes(name) ? { "Retry-After": ref("headers", "Retry-After") } : {};
    for (const header of RATE_LIMIT_HEADERS) headers[header] = ref("headers", header);
    responses[name] = { description, headers, content: { "application/json": { schema: errorSchema } } };
  }
  return responses;
}

const integer = { type: "integer", minimum: 0 };

/** The OpenAPI document of `routes`. */
export function openApiDocument(routes: readonly Route[], version: string): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {};
  const convert = schemaConverter(schemas);
  schemas.Error = convert(errorBodySchema, "Error");
  const paths: OpenApiDocument["paths"] = {};
  const taken = new Set<string>();
  for (const route of routes) {
    // Paths spelled alike but for punctuation (mark-as, markAs) make one id: the later one is numbered, as ids must be unique.
    const base = operationIdOf(route);
    let operationId = base;
    for (let suffix = 2; taken.has(operationId); suffix++) operationId = `${base}${suffix}`;
    taken.add(operationId);
    const item = (paths[openApiPath(route.path)] ??= {});
    item[route.method.toLowerCase() as Lowercase<Method>] = operationOf(route, convert, operationId);
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "notify",
      version,
      description:
        "A self-hostable notification service whose REST API is compatible with Novu's. Server routes take `Authorization: ApiKey <key>`; " +
        "the Inbox routes take `Authorization: Bearer <session token>` from POST /v1/inbox/session.",
    },
    servers: [{ url: "/" }],
    tags: [...new Set(routes.map(tagOf))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "Authorization", description: "`ApiKey <key>`: a key of the environment the request acts in" },
        Bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "An Inbox session token, for one subscriber of one environment" },
      },
      schemas,
      parameters: {
        IdempotencyKey: {
          name: "idempotency-key",
          in: "header",
          required: false,
          description:
            "Runs the request once per environment and key: a repeat while it runs answers 409, with another body 422, " +
            "and once done replays the stored answer (Idempotency-Replay: true) for 24 hours",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      },
      headers: {
        // Sent whenever the gateway runs with rate limits (RATE_LIMITS=on, the default).
        "RateLimit-Limit": { description: "The tokens a window grants the caller in the route's category", schema: integer },
        "RateLimit-Remaining": { description: "The tokens left in the current window", schema: integer },
        "RateLimit-Reset": { description: "Seconds until the window's tokens are granted again", schema: integer },
        "RateLimit-Policy": {
          description: "The limit, window, burst and category applied (an API route's also its cost and service level)",
          schema: { type: "string" },
        },
        "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 1 } },
        "Idempotency-Key": { description: "The idempotency key the request carried", schema: { type: "string" } },
        "Idempotency-Replay": { description: "`true` when the answer is the stored answer of an earlier request", schema: { type: "string", enum: ["true"] } },
      },
      responses: errorResponses({ $ref: `${SCHEMAS}Error` }),
    },
  };
}
