import { Agent, request as httpRequest } from "node:http";
import { createPool, type Pool } from "@notify/runtime";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_DEPTH } from "../src/body.js";
import type { OpenApiDocument, Operation, Parameter as OpenApiParameter } from "../src/openapi.js";
import { environmentIdentifier } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Malformed requests to every operation of the served OpenAPI document, generated from its
// schemas: each request is wrong in at least one way (credentials, JSON text, nesting depth, a
// NUL character, a body, query or path parameter its schema refuses), so none may succeed. Every
// answer must be a 4xx the operation documents, with the documented error body, and the stored
// data must be what it was.

const REQUESTS = 10_000;
const CONCURRENCY = 16;
const SCHEMAS_IN_DB = ["gateway", "subscribers", "messages", "triggers", "integrations", "topics", "worker"];

let stack: Stack;
let pool: Pool;
let document: OpenApiDocument;
let sessionToken: string;
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

beforeAll(async () => {
  // Keys stay cached for the whole run, so no request refreshes a key's last use; the one Inbox
  // session's budget is above the run's load, so its requests are validated, not refused.
  stack = await startStack({ worker: false, gatewayEnv: { API_KEY_CACHE_SECONDS: "3600", RATE_LIMIT_INBOX: "1000000" } });
  pool = createPool(stack.database.url, 2);
  expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "fuzz-subscriber" })).status).toBe(201);
  expect((await stack.request("POST", "/v1/topics", { key: "fuzz-topic", name: "Fuzz" })).status).toBe(201);
  const session = await stack.request<Data<{ token: string }>>(
    "POST",
    "/v1/inbox/session",
    { applicationIdentifier: await environmentIdentifier(stack), subscriberId: "fuzz-subscriber" },
    { authorization: "" },
  );
  expect(session.status).toBe(201);
  sessionToken = session.body.data.token;
  document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as OpenApiDocument;
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await pool?.end();
  await stack?.stop();
});

/** Every row of every service's tables, as one digest per table. */
async function storedData(): Promise<Record<string, string>> {
  const { rows: tables } = await pool.query<{ name: string }>(
    "SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1",
    [SCHEMAS_IN_DB],
  );
  const digests: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await pool.query<{ digest: string }>(
      `SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS digest FROM ${name} t`,
    );
    digests[name] = rows[0]!.digest;
  }
  return digests;
}

// ---- JSON Schema → fast-check -------------------------------------------------------------

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
}

const resolved = (schema: Schema): Schema => (schema.$ref ? resolved(document.components.schemas[schema.$ref.split("/").pop()!] as Schema) : schema);

/** Values a schema accepts, or near enough (patterns and refinements aside): the parts of a request around the one made wrong. */
function plausible(given: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolved(given);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return fc.oneof(...options.map((option) => plausible(option, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => plausible({ ...schema, type }, depth)));
  switch (types[0]) {
    case "string": {
      const minLength = Math.min(schema.minLength ?? 0, 20);
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 20, 20)) });
    }
    case "integer":
    case "number": {
      const min = schema.minimum ?? -1000;
      return fc.integer({ min, max: Math.max(min, schema.maximum ?? 1000) });
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = Math.min(schema.minItems ?? 0, 3);
      return depth > 3
        ? fc.constant([])
        : fc.array(plausible(schema.items ?? {}, depth + 1), { minLength, maxLength: Math.max(minLength, Math.min(schema.maxItems ?? 3, 3)) });
    }
    case "object": {
      const properties = Object.entries(schema.properties ?? {});
      if (depth > 3 || properties.length === 0) return fc.constant({});
      const shape = Object.fromEntries(properties.map(([name, property]) => [name, plausible(property, depth + 1)]));
      return fc.record(shape, { requiredKeys: schema.required ?? [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values of every JSON type, some long or nested (within the depth bound): what a field gets instead of its own. */
const anyValue = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, "", "x", [], {}, [[]], { nested: {} }, "x".repeat(300)),
  fc.integer(),
  fc.string(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: 2, max: MAX_BODY_DEPTH - 4 }).map((depth) => nestedValue(depth)),
);

function nestedValue(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = level % 2 ? { level: value } : [value];
  return value;
}

/** JSON text nested `depth` levels, built as text (serializing such a value would overflow this process's stack). */
const deepText = (depth: number, kind: "array" | "object") =>
  kind === "array" ? `${"[".repeat(depth)}0${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}`;

// ---- Requests -------------------------------------------------------------------------------

interface FuzzRequest {
  operation: string;
  malformed: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The statuses the operation documents. */
  documented: string[];
  /** The status this malformation must get, where it decides the answer alone. */
  expected?: number;
}

type Parameter = OpenApiParameter & { schema: Schema };

/** A query or path value that `schema` refuses, as URL text; undefined when it refuses none. */
function refusedText(schema: Schema): fc.Arbitrary<string> | undefined {
  const options: fc.Arbitrary<string>[] = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.enum) options.push(fc.constantFrom("not-one-of-them", "TRUE", "null"));
  if (types.includes("integer") || types.includes("number")) {
    options.push(fc.constantFrom("abc", "1e", "0x10z", "NaN"));
    if (types.includes("integer")) options.push(fc.constant("1.5"));
    if (schema.maximum !== undefined) options.push(fc.integer({ min: schema.maximum + 1, max: schema.maximum + 1_000_000 }).map(String));
    if (schema.minimum !== undefined) options.push(fc.integer({ min: schema.minimum - 1_000, max: schema.minimum - 1 }).map(String));
  }
  if (schema.maxLength !== undefined) options.push(fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 500 }).map((length) => "p".repeat(length)));
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern, "u");
    options.push(fc.string({ minLength: 1 }).filter((text) => !pattern.test(text)));
  }
  return options.length > 0 ? fc.oneof(...options) : undefined;
}

/** Path segments that URL parsing would rewrite ("." and "..") would make another request. */
const segment = (value: unknown) => encodeURIComponent(String(value)).replace(/^\.{1,2}$/, "dot");

function requestsOf(path: string, method: string, operation: Operation) {
  const parameters = operation.parameters.filter((parameter) => "in" in parameter) as Parameter[];
  const pathParameters = parameters.filter((parameter) => parameter.in === "path");
  const queryParameters = parameters.filter((parameter) => parameter.in === "query");
  // A body read as it arrives (a provider's webhook, JSON or a form) is the route's to parse: only its other parts are malformed.
  const rawBody = operation.requestBody?.content["application/x-www-form-urlencoded"] !== undefined;
  const bodySchema = rawBody ? undefined : (operation.requestBody?.content["application/json"].schema as Schema | undefined);
  const scheme = operation.security.flatMap((requirement) => Object.keys(requirement))[0];
  const credentials = scheme === "ApiKey" ? `ApiKey ${stack.key}` : scheme === "Bearer" ? `Bearer ${sessionToken}` : undefined;
  const idempotent = operation.parameters.some((parameter) => "$ref" in parameter && parameter.$ref.endsWith("/IdempotencyKey"));
  const documented = Object.keys(operation.responses);
  const validBody = bodySchema ? new Ajv2020({ strict: false, validateFormats: false }).compile(bodySchema) : undefined;

  // An empty segment would name another route.
  const plausiblePath = fc
    .tuple(...pathParameters.map((parameter) => plausible({ ...parameter.schema, minLength: Math.max(1, parameter.schema.minLength ?? 0) })))
    .map((values) => values.map(segment));
  const plausibleQuery = fc.tuple(
    ...queryParameters.map((parameter) =>
      fc.option(
        plausible(parameter.schema).map((value) => (Array.isArray(value) ? value : [value])),
        { nil: undefined },
      ),
    ),
  );
  const plausibleBody: fc.Arbitrary<string | undefined> = bodySchema ? plausible(bodySchema).map((value) => JSON.stringify(value)) : fc.constant(undefined);

  type Parts = { pathValues: string[]; query: [string, string][]; body: string | undefined; headers: Record<string, string> };
  const parts: fc.Arbitrary<Parts> = fc.record({
    pathValues: plausiblePath,
    query: plausibleQuery.map((values) =>
      values.flatMap((value, index) => (value === undefined ? [] : value.map((item): [string, string] => [queryParameters[index]!.name, String(item)]))),
    ),
    body: plausibleBody,
    headers: fc.record(
      {
        "content-type": fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"),
        ...(idempotent ? { "idempotency-key": fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 8, maxLength: 16 }) } : {}),
      },
      { requiredKeys: ["content-type"] },
    ),
  });

  const build = (malformed: string, { pathValues, query, body, headers }: Parts, expected?: number): FuzzRequest => {
    let index = 0;
    const filled = path.replace(/\{\w+\}/g, () => pathValues[index++] ?? "x");
    const search = query.length > 0 ? `?${new URLSearchParams(query).toString()}` : "";
    const authorization = credentials && headers.authorization === undefined ? { authorization: credentials } : {};
    return {
      operation: `${method.toUpperCase()} ${path}`,
      malformed,
      method: method.toUpperCase(),
      path: filled + search,
      headers: { ...authorization, ...headers },
      ...(body === undefined ? {} : { body }),
      documented,
      ...(expected === undefined ? {} : { expected }),
    };
  };

  const malformations: fc.Arbitrary<FuzzRequest>[] = [];
  if (!rawBody)
    malformations.push(
      // Text that is not JSON.
      fc
        .tuple(
          parts,
          fc.oneof(
            fc.constantFrom("{", '{"a":', "[1,]", "nul", "{'a':1}", '{"a":1}}', "\u0000"),
            fc.string({ minLength: 1 }).map((text) => `{${text}`),
          ),
        )
        .filter(([, text]) => !isJson(text))
        .map(([base, body]) => build("not JSON", { ...base, body }, 400)),
      // Nested thousands of levels deep, as the whole body or in one of its fields.
      fc
        .tuple(
          parts,
          fc.integer({ min: 1_000, max: 20_000 }),
          fc.constantFrom("array" as const, "object" as const),
          fc.constantFrom(...fieldsOf(bodySchema), null),
        )
        .map(([base, depth, kind, field]) =>
          build("nested too deeply", { ...base, body: field === null ? deepText(depth, kind) : `{${JSON.stringify(field)}:${deepText(depth, kind)}}` }, 400),
        ),
      // A NUL character, which nothing can store.
      fc
        .tuple(parts, fc.constantFrom(...fieldsOf(bodySchema), "note"))
        .map(([base, field]) => build("NUL character", { ...base, body: JSON.stringify({ ...parsedObject(base.body), [field]: "a\u0000b" }) }, 422)),
    );
  if (credentials) {
    const wrong = fc.constantFrom(
      "",
      "ApiKey not-a-key-of-anyone-0000",
      `Basic ${btoa("a:b")}`,
      "Bearer not.a.token",
      scheme === "ApiKey" ? `Bearer ${sessionToken}` : `ApiKey ${stack.key}`,
    );
    malformations.push(
      fc.tuple(parts, wrong).map(([base, authorization]) => build("credentials", { ...base, headers: { ...base.headers, authorization } }, 401)),
    );
  }
  if (idempotent) {
    malformations.push(
      fc
        .tuple(parts, fc.integer({ min: 256, max: 2_000 }))
        .map(([base, length]) => build("idempotency key too long", { ...base, headers: { ...base.headers, "idempotency-key": "k".repeat(length) } })),
    );
  }
  if (bodySchema && validBody) {
    const fields = fieldsOf(bodySchema);
    malformations.push(
      fc
        .tuple(parts, fc.constantFrom(...fields, null), anyValue)
        .map(([base, field, value]) => {
          const body = field === null ? value : { ...parsedObject(base.body), [field]: value };
          return { base, body };
        })
        .filter(({ body }) => !validBody(body))
        .map(({ base, body }) => build("body refused by its schema", { ...base, body: JSON.stringify(body) })),
    );
  }
  pathParameters.forEach((parameter, index) => {
    const refused = refusedText(parameter.schema);
    if (!refused) return;
    malformations.push(
      fc.tuple(parts, refused).map(([base, text]) => build(`path ${parameter.name}`, { ...base, pathValues: base.pathValues.with(index, segment(text)) })),
    );
  });
  for (const parameter of queryParameters) {
    const refused = parameter.required
      ? fc.oneof(fc.constant(undefined), refusedText(parameter.schema) ?? fc.constant(undefined))
      : refusedText(parameter.schema);
    if (!refused) continue;
    malformations.push(
      fc.tuple(parts, refused).map(([base, text]) => {
        const query = base.query.filter(([name]) => name !== parameter.name);
        return build(`query ${parameter.name}`, { ...base, query: text === undefined ? query : [...query, [parameter.name, text]] });
      }),
    );
  }
  return fc.oneof(...malformations);
}

const fieldsOf = (schema: Schema | undefined) => Object.keys((schema && resolved(schema).properties) ?? {});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parsedObject(text: string | undefined): Record<string, unknown> {
  const value: unknown = text === undefined ? undefined : JSON.parse(text);
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function send(request: FuzzRequest): Promise<{ status: number; text: string }> {
  const url = new URL(request.path, stack.url);
  return new Promise((resolve, reject) => {
    // A declared length: Node sends a GET's or DELETE's body unframed otherwise.
    const length = request.body === undefined ? {} : { "content-length": String(Buffer.byteLength(request.body)) };
    const outgoing = httpRequest(url, { method: request.method, headers: { ...request.headers, ...length }, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(request.body);
  });
}

describe("schema-driven fuzzing", () => {
  it(`answers ${REQUESTS} malformed requests across every operation with documented 4xx error bodies, and changes nothing`, async () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => requestsOf(path, method, operation)),
    );
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    const perOperation = Math.ceil(REQUESTS / operations.length);
    const requests = operations.flatMap((arbitrary, index) => fc.sample(arbitrary, { numRuns: perOperation, seed: seed + index }));
    const errorBody = new Ajv2020({ strict: false, validateFormats: false }).compile(document.components.schemas.Error!);

    const before = await storedData();
    // The seeded subscriber and topic at least: a digest that saw no rows could not tell a change.
    expect(Object.values(before).filter((digest) => !digest.startsWith("0:")).length).toBeGreaterThanOrEqual(2);
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let serverErrors = 0;
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const request = requests[next++]!;
        const { status, text } = await send(request);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500) serverErrors++;
        const problem = problemOf(request, status, text, errorBody);
        if (problem) failures.push(`${problem}: ${request.malformed} → ${request.method} ${request.path.slice(0, 120)} ${request.body?.slice(0, 160) ?? ""}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const after = await storedData();

    console.log(
      `fuzz (seed ${seed}): ${requests.length} requests over ${operations.length} operations, ${serverErrors} 5xx; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(requests.length).toBeGreaterThanOrEqual(REQUESTS);
    expect(serverErrors).toBe(0);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(after).toEqual(before);
  }, 240_000);
});

/** What is wrong with an answer, if anything. */
function problemOf(request: FuzzRequest, status: number, text: string, errorBody: (value: unknown) => boolean): string | undefined {
  if (status < 400 || status >= 500) return `answered ${status}`;
  if (!request.documented.includes(String(status))) return `answered ${status}, which the operation does not document`;
  if (request.expected !== undefined && status !== request.expected) return `answered ${status}, not ${request.expected}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with a body that is not JSON`;
  }
  if (!errorBody(body)) return `answered ${status} with a body not in the documented shape (${text.slice(0, 200)})`;
  if ((body as { statusCode: unknown }).statusCode !== status)
    return `answered ${status} with statusCode ${String((body as { statusCode: unknown }).statusCode)}`;
  return undefined;
}
