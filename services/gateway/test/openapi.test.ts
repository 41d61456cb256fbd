import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { openApiDocument, openApiPath, type OpenApiDocument } from "../src/openapi.js";
import { route, type Route } from "../src/route.js";
import { routes } from "../src/routes.js";

// The API description is derived from the route table alone: every route is in it, nothing else
// is, and it is a valid OpenAPI 3.1 document whose references all resolve.

const operationsOf = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );

/** The targets of every `$ref` in `value`. */
function referencesIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) referencesIn(item, found);
  else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.push(item);
      else referencesIn(item, found);
    }
  }
  return found;
}

/** What a JSON pointer within the document points at, if anything. */
function resolve(document: OpenApiDocument, pointer: string): unknown {
  let current: unknown = document;
  for (const part of pointer.replace(/^#\//, "").split("/")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return current;
}

async function expectValid(document: OpenApiDocument) {
  const result = await new Validator().validate(JSON.parse(JSON.stringify(document)) as Record<string, unknown>);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
  const dangling = referencesIn(document).filter((pointer) => resolve(document, pointer) === undefined);
  expect(dangling).toEqual([]);
}

describe("the OpenAPI document", () => {
  const document = openApiDocument(routes, "1.2.3");

  it("describes every route of the route table, once, and nothing else", () => {
    const described = operationsOf(document).map(({ key }) => key);
    const table = routes.map((route) => `${route.method} ${openApiPath(route.path)}`);
    expect(new Set(table).size).toBe(table.length);
    expect(described.toSorted()).toEqual(table.toSorted());
  });

  it("is valid OpenAPI 3.1, every reference resolving", async () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    await expectValid(document);
  });

  it("gives each route its audience's security scheme, its path parameters, success status and error answers", () => {
    const byKey = new Map(operationsOf(document).map(({ key, operation }) => [key, operation]));
    for (const route of routes) {
      const operation = byKey.get(`${route.method} ${openApiPath(route.path)}`)!;
      const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
      expect(schemes).toEqual({ api: ["ApiKey"], inbox: ["Bearer"], public: [] }[route.audience]);
      const pathParameters = operation.parameters.flatMap((parameter) => ("in" in parameter && parameter.in === "path" ? [parameter.name] : []));
      expect(pathParameters).toEqual([...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]));
      expect(Object.keys(operation.responses)).toContain(String(route.status));
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["400", "422", "500", "503"]));
      const idempotent = route.audience === "api" && (route.method === "POST" || route.method === "PATCH");
      expect(
        operation.parameters.some((parameter) => "$ref" in parameter && parameter.$ref.endsWith("/IdempotencyKey")),
        route.path,
      ).toBe(idempotent);
      expect(operation.responses["429"]).toEqual({ $ref: "#/components/responses/RateLimited" });
    }
  });

  it("takes parameter and body schemas from the zod schemas that validate them", () => {
    const create = document.paths["/v1/subscribers"]!.post!;
    const body = create.requestBody!.content["application/json"].schema;
    expect(body).toMatchObject({ type: "object", required: ["subscriberId"], properties: { subscriberId: { type: "string", minLength: 1, maxLength: 255 } } });
    const list = document.paths["/v1/subscribers"]!.get!;
    expect(list.parameters).toContainEqual({ name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 10 } });
    // A route without a body schema reads none.
    expect(document.paths["/v1/subscribers/{subscriberId}"]!.get!.requestBody).toBeUndefined();
    expect(document.components.schemas.Error).toMatchObject({ required: ["statusCode", "timestamp", "path", "message"] });
  });

  it("documents what each route answers from its response schema, a shape that has a name once under components", () => {
    const answering = routes.filter((route) => route.status !== 204);
    expect(answering.filter((route) => !route.response).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    const get = document.paths["/v1/subscribers/{subscriberId}"]!.get!.responses["200"]!;
    expect(get).toMatchObject({
      content: {
        "application/json": {
          schema: { type: "object", properties: { data: { $ref: "#/components/schemas/Subscriber" } }, required: ["data"], additionalProperties: false },
        },
      },
    });
    // The same shape, referenced by every route that answers it.
    const page = document.paths["/v2/subscribers"]!.get!.responses["200"]!;
    expect(page).toMatchObject({
      content: { "application/json": { schema: { properties: { data: { items: { $ref: "#/components/schemas/Subscriber" } } } } } },
    });
    expect(document.components.schemas.Subscriber).toMatchObject({ type: "object", required: expect.arrayContaining(["_id", "subscriberId", "channels"]) });
    // A route without a body answers none.
    expect(document.paths["/v1/messages/transaction/{transactionId}"]!.delete!.responses["204"]).not.toHaveProperty("content");
  });

  it("describes a route added to the table without anything more than the route declares, recursive schemas included", async () => {
    const node: z.ZodType<{ name: string; children: unknown[] }> = z.object({ name: z.string(), children: z.array(z.lazy(() => node)) });
    const added: Route[] = [
      ...routes,
      route({
        method: "POST",
        path: "/v9/things/:thingId/parts",
        params: z.object({ thingId: z.string().max(10) }),
        query: z.object({ dryRun: z.enum(["true", "false"]).optional() }),
        body: z.object({ tree: node, meta: z.json() }),
        handle: async () => ({}),
      }),
      route({
        audience: "inbox",
        method: "GET",
        path: "/v9/things/:thingId",
        // A query the route rewrites first: `filled` is required of the rewrite, not of the client.
        query: z.preprocess((query) => ({ filled: "always", ...(query as object) }), z.object({ filled: z.string(), sent: z.string() })),
        handle: async () => ({}),
      }),
    ];
    const extended = openApiDocument(added, "1.2.3");
    const parts = extended.paths["/v9/things/{thingId}/parts"]!.post!;
    expect(parts.parameters).toContainEqual({ name: "thingId", in: "path", required: true, schema: { type: "string", maxLength: 10 } });
    expect(parts.parameters).toContainEqual({ name: "dryRun", in: "query", required: false, schema: { type: "string", enum: ["true", "false"] } });
    expect(parts.responses["201"]).toBeDefined();
    // An undeclared path parameter is still described.
    expect(extended.paths["/v9/things/{thingId}"]!.get!.parameters).toEqual([
      { name: "thingId", in: "path", required: true, schema: { type: "string" } },
      { name: "filled", in: "query", required: false, schema: { type: "string" } },
      { name: "sent", in: "query", required: false, schema: { type: "string" } },
    ]);
    // The recursive definitions moved into components, where the body's references find them.
    expect(Object.keys(extended.components.schemas).filter((name) => name.startsWith("postV9ThingsThingIdPartsBody_")).length).toBeGreaterThan(0);
    expect(referencesIn(parts.requestBody)).not.toEqual([]);
    await expectValid(extended);
  });
});
