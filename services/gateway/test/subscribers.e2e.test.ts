import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("authentication", () => {
  it.each([
    ["no header", { authorization: "" }, "Missing authorization header"],
    ["another scheme", { authorization: "Bearer x" }, 'Invalid authentication scheme: "Bearer"'],
    ["an empty key", { authorization: "ApiKey " }, "Unauthorized"],
    // A fresh key: Redis, shared with any other stack on this machine, may hold a well-known one.
    ["an unknown key", { authorization: `ApiKey ${randomBytes(16).toString("hex")}` }, "API Key not found"],
  ])("answers 401 for %s", async (_, headers, message) => {
    const reply = await stack.request("GET", "/v1/subscribers", undefined, headers as Record<string, string>);
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ statusCode: 401, path: "/v1/subscribers", message });
    expect(reply.body.timestamp).toMatch(ISO);
  });

  it("keeps environments apart", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "isolated" });
    const production = await stack.createKey("Production");
    const reply = await stack.request("GET", "/v1/subscribers/isolated", undefined, { authorization: `ApiKey ${production}` });
    expect(reply.status).toBe(404);
    const list = await stack.request("GET", "/v2/subscribers?subscriberId=isolated", undefined, { authorization: `ApiKey ${production}` });
    expect(list.body.data).toEqual([]);
  });
});

describe("subscribers", () => {
  it("creates a subscriber with every field of the spec", async () => {
    const reply = await stack.request("POST", "/v1/subscribers", {
      subscriberId: "ada",
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      phone: "+15550001",
      avatar: "https://example.com/a.png",
      locale: "en-GB",
      timezone: "Europe/London",
      data: { plan: "pro" },
      unknownField: "ignored",
    });
    expect(reply.status).toBe(201);
    const subscriber = reply.body.data;
    expect(subscriber).toMatchObject({
      subscriberId: "ada",
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      phone: "+15550001",
      avatar: "https://example.com/a.png",
      locale: "en-GB",
      timezone: "Europe/London",
      data: { plan: "pro" },
      channels: [],
      topics: [],
      isOnline: null,
      lastOnlineAt: null,
      deleted: false,
      __v: 0,
    });
    expect(subscriber._id).toMatch(OBJECT_ID);
    expect(subscriber._organizationId).toMatch(OBJECT_ID);
    expect(subscriber._environmentId).toMatch(OBJECT_ID);
    expect(subscriber.createdAt).toMatch(ISO);
    expect(subscriber.updatedAt).toMatch(ISO);
    expect(subscriber).not.toHaveProperty("unknownField");
  });

  it("upserts: given fields overwrite, absent ones stay, data is replaced, null email clears", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "grace", firstName: "Grace", email: "g@example.com", data: { a: 1 } });
    const updated = await stack.request("POST", "/v1/subscribers", { subscriberId: "grace", lastName: "Hopper", data: { b: 2 } });
    expect(updated.status).toBe(201);
    expect(updated.body.data).toMatchObject({ firstName: "Grace", lastName: "Hopper", email: "g@example.com", data: { b: 2 }, __v: 1 });
    const cleared = await stack.request("POST", "/v1/subscribers", { subscriberId: "grace", email: null, firstName: null });
    expect(cleared.body.data).toMatchObject({ firstName: "Grace", email: null, __v: 2 });
    const unchanged = await stack.request("POST", "/v1/subscribers", { subscriberId: "grace", lastName: "Hopper" });
    expect(unchanged.body.data.__v).toBe(2);
  });

  it("gets, updates (PUT and PATCH) and deletes", async () => {
    const created = await stack.request("POST", "/v1/subscribers", { subscriberId: "linus", firstName: "Linus" });
    const got = await stack.request("GET", "/v1/subscribers/linus");
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created.body.data);

    const put = await stack.request("PUT", "/v1/subscribers/linus", { lastName: "T", email: "linus@example.com" });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ firstName: "Linus", lastName: "T", email: "linus@example.com", __v: 1 });
    // An empty email clears it, as Novu's v1 update reads "" as null.
    const cleared = await stack.request("PUT", "/v1/subscribers/linus", { email: "" });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.email).toBeFalsy();
    expect((await stack.request("GET", "/v1/subscribers/linus")).body.data.email).toBeFalsy();

    const patch = await stack.request("PATCH", "/v2/subscribers/linus", { firstName: null, locale: "fi" });
    expect(patch.status).toBe(200);
    expect(patch.body.data).toMatchObject({ firstName: null, lastName: "T", locale: "fi", __v: 3 });
    expect((await stack.request("GET", "/v2/subscribers/linus")).body.data).toEqual(patch.body.data);

    const deleted = await stack.request("DELETE", "/v1/subscribers/linus");
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: { acknowledged: true, status: "deleted" } });
    expect((await stack.request("GET", "/v1/subscribers/linus")).status).toBe(404);
    expect((await stack.request("DELETE", "/v2/subscribers/linus")).status).toBe(404);
    expect((await stack.request("PUT", "/v1/subscribers/linus", { lastName: "X" })).status).toBe(404);
    expect((await stack.request("PATCH", "/v2/subscribers/linus", { lastName: "X" })).status).toBe(404);
  });

  it("names the subscriber's topics in the v1 read when asked (includeTopics), of any context, and none otherwise", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "topical" });
    await stack.request("POST", "/v1/topics/alpha/subscribers", { subscribers: ["topical"] });
    await stack.request("POST", "/v2/topics/beta/subscriptions", { subscriberIds: ["topical"] });
    await stack.request("POST", "/v2/topics/beta/subscriptions", { subscriberIds: ["topical"], context: { tenant: "acme" } });
    const included = await stack.request<Data<{ topics: string[] }>>("GET", "/v1/subscribers/topical?includeTopics=true");
    expect(included.status).toBe(200);
    expect(included.body.data.topics.sort()).toEqual(["alpha", "beta"]);
    expect((await stack.request("GET", "/v1/subscribers/topical")).body.data.topics).toEqual([]);
    expect((await stack.request("GET", "/v1/subscribers/nobody-topical?includeTopics=true")).status).toBe(404);
    expect((await stack.request("GET", "/v1/subscribers/topical?includeTopics=maybe")).status).toBe(422);
  });

  it("v2 create answers 409 with the existing subscriber when failIfExists is set", async () => {
    const first = await stack.request("POST", "/v2/subscribers?failIfExists=true", { subscriberId: "once", firstName: "One" });
    expect(first.status).toBe(201);
    const second = await stack.request("POST", "/v2/subscribers?failIfExists=true", { subscriberId: "once", firstName: "Two" });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ statusCode: 409, message: 'Subscriber with id "once" already exists', subscriberId: "once", firstName: "One" });
    const upsert = await stack.request("POST", "/v2/subscribers", { subscriberId: "once", firstName: "Two" });
    expect(upsert.status).toBe(201);
    expect(upsert.body.data.firstName).toBe("Two");
  });

  it("pages the v1 list by offset and the v2 list by cursor", async () => {
    const other = await stack.createKey("Paging");
    const as = { authorization: `ApiKey ${other}` };
    for (let index = 0; index < 5; index += 1) {
      await stack.request("POST", "/v1/subscribers", { subscriberId: `p${index}` }, as);
    }
    const first = await stack.request("GET", "/v1/subscribers?page=0&limit=2", undefined, as);
    expect(first.body).toMatchObject({ page: 0, pageSize: 2, totalCount: 5, hasMore: true });
    expect(first.body.data.map((s) => s.subscriberId)).toEqual(["p0", "p1"]);
    const last = await stack.request("GET", "/v1/subscribers?page=2&limit=2", undefined, as);
    expect(last.body).toMatchObject({ page: 2, hasMore: false });
    expect(last.body.data.map((s) => s.subscriberId)).toEqual(["p4"]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&after=${cursor}` : "";
      const page: { body: { data: { subscriberId: string }[]; next: string | null; totalCount: number } } = await stack.request(
        "GET",
        `/v2/subscribers?limit=2&orderDirection=ASC${query}`,
        undefined,
        as,
      );
      expect(page.body.totalCount).toBe(5);
      seen.push(...page.body.data.map((s) => s.subscriberId));
      cursor = page.body.next;
    } while (cursor);
    expect(seen).toEqual(["p0", "p1", "p2", "p3", "p4"]);

    const newest = await stack.request("GET", "/v2/subscribers?limit=2", undefined, as);
    expect(newest.body.data.map((s) => s.subscriberId)).toEqual(["p4", "p3"]);
    const back = await stack.request("GET", `/v2/subscribers?limit=2&before=${newest.body.next}`, undefined, as);
    expect(back.body.data.map((s) => s.subscriberId)).toEqual(["p4"]);
    expect(back.body.previous).toBeNull();
    expect(back.body.next).toBe(back.body.data[0]._id);
    // Both cursors at once: a 400, as Novu answers it.
    expect((await stack.request("GET", `/v2/subscribers?after=${newest.body.next}&before=${newest.body.next}`, undefined, as)).status).toBe(400);

    // A cursor that names no subscriber of the environment (an unknown id, or another environment's
    // subscriber) gives an empty page counting none, as Novu answers it, whichever way it pages.
    const elsewhere = (await stack.request<Data<{ _id: string }>>("POST", "/v1/subscribers", { subscriberId: "p-elsewhere" })).body.data._id;
    for (const cursor of ["0".repeat(24), "f".repeat(24), elsewhere]) {
      for (const query of [`after=${cursor}`, `before=${cursor}`, `after=${cursor}&orderBy=updatedAt`]) {
        const unknown = await stack.request("GET", `/v2/subscribers?limit=2&${query}`, undefined, as);
        expect([unknown.status, unknown.body], query).toEqual([200, { data: [], next: null, previous: null, totalCount: 0, totalCountCapped: false }]);
      }
    }
  });

  it("orders the v2 list by last update when asked, pages it by cursor, and starts a page at its cursor with includeCursor", async () => {
    const as = { authorization: `ApiKey ${await stack.createKey("Update order")}` };
    for (const id of ["u0", "u1", "u2", "u3"]) await stack.request("POST", "/v2/subscribers", { subscriberId: id }, as);
    // u1 and u0 change last, in that order.
    await stack.request("PATCH", "/v2/subscribers/u1", { firstName: "One" }, as);
    await stack.request("PATCH", "/v2/subscribers/u0", { firstName: "Zero" }, as);
    const page = async (query: string) => {
      const reply = await stack.request<{ data: { subscriberId: string; _id: string }[]; next: string | null }>(
        "GET",
        `/v2/subscribers?limit=2&${query}`,
        undefined,
        as,
      );
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return { ids: reply.body.data.map((one) => one.subscriberId), next: reply.body.next, first: reply.body.data[0]?._id };
    };
    const first = await page("orderBy=updatedAt");
    expect(first.ids).toEqual(["u0", "u1"]);
    expect((await page(`orderBy=updatedAt&after=${first.next}`)).ids).toEqual(["u3", "u2"]);
    expect((await page("orderBy=updatedAt&orderDirection=ASC")).ids).toEqual(["u2", "u3"]);
    expect((await page("orderBy=createdAt")).ids).toEqual(["u3", "u2"]);
    expect((await page(`orderBy=updatedAt&after=${first.next}&includeCursor=true`)).ids).toEqual(["u1", "u3"]);
    expect((await page(`after=${first.first}&includeCursor=true`)).ids[0]).toBe("u0");
    expect((await stack.request("GET", "/v2/subscribers?orderBy=email", undefined, as)).status).toBe(422);
  });

  it("searches emails and phones by a part of them in any case, as Novu does; the subscriberId exactly", async () => {
    await stack.request("POST", "/v2/subscribers", { subscriberId: "search-ada", email: "Ada.Lovelace@Analytical.test", phone: "+15550101234" });
    await stack.request("POST", "/v2/subscribers", { subscriberId: "search-bob", email: "bob@other.test", phone: "+15550109999" });
    const ids = async (query: string) =>
      (await stack.request<Data<{ subscriberId: string }[]>>("GET", `/v2/subscribers?${query}`)).body.data.map((one) => one.subscriberId).sort();
    expect(await ids("email=analytical.TEST")).toEqual(["search-ada"]);
    expect(await ids(`phone=${encodeURIComponent("555010")}`)).toEqual(["search-ada", "search-bob"]);
    expect(await ids(`phone=${encodeURIComponent("0101")}`)).toEqual(["search-ada"]);
    // A LIKE wildcard is a character like any other.
    expect(await ids("email=%25")).toEqual([]);
    expect(await ids("subscriberId=search")).toEqual([]);
  });
});

describe("bad requests change nothing", () => {
  it.each([
    ["missing subscriberId", { firstName: "x" }, "subscriberId"],
    ["empty subscriberId", { subscriberId: "" }, "subscriberId"],
    ["subscriberId over 255 chars", { subscriberId: "x".repeat(256) }, "subscriberId"],
    ["subscriberId not a string", { subscriberId: 7 }, "subscriberId"],
    ["invalid email", { subscriberId: "bad1", email: "nope" }, "email"],
    ["invalid locale", { subscriberId: "bad2", locale: "not a locale!" }, "locale"],
    ["invalid timezone", { subscriberId: "bad3", timezone: "Mars/Olympus" }, "timezone"],
    ["data not an object", { subscriberId: "bad4", data: [1, 2] }, "data"],
    ["firstName not a string", { subscriberId: "bad5", firstName: 5 }, "firstName"],
  ])("422 for %s", async (_, body, field) => {
    const reply = await stack.request("POST", "/v1/subscribers", body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty(field);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    const id = (body as { subscriberId?: unknown }).subscriberId;
    if (typeof id === "string" && id.length > 0 && id.length <= 255) {
      expect((await stack.request("GET", `/v1/subscribers/${id}`)).status).toBe(404);
    }
  });

  it("422 on an invalid update leaves the subscriber as it was", async () => {
    const before = await stack.request("POST", "/v1/subscribers", { subscriberId: "steady", email: "s@example.com" });
    const reply = await stack.request("PATCH", "/v2/subscribers/steady", { email: "broken", firstName: "Changed" });
    expect(reply.status).toBe(422);
    expect((await stack.request("GET", "/v1/subscribers/steady")).body.data).toEqual(before.body.data);
  });

  it("400 on malformed JSON", async () => {
    const reply = await stack.request("POST", "/v1/subscribers", '{"subscriberId": "x",');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ statusCode: 400, message: "Request body is not valid JSON" });
  });

  it("413 on a body over 1 MiB", async () => {
    const reply = await stack.request("POST", "/v1/subscribers", { subscriberId: "huge", data: { blob: "x".repeat(1024 * 1024) } });
    expect(reply.status).toBe(413);
    expect(reply.body.statusCode).toBe(413);
    expect((await stack.request("GET", "/v1/subscribers/huge")).status).toBe(404);
  });

  it("422 on query values out of range", async () => {
    expect((await stack.request("GET", "/v1/subscribers?limit=0")).status).toBe(422);
    expect((await stack.request("GET", "/v1/subscribers?limit=101")).status).toBe(422);
    expect((await stack.request("GET", "/v2/subscribers?orderDirection=UP")).status).toBe(422);
    expect((await stack.request("POST", "/v2/subscribers?failIfExists=maybe", { subscriberId: "q" })).status).toBe(422);
  });

  it("404 JSON for an unknown route", async () => {
    const reply = await stack.request("GET", "/v1/nothing-here");
    expect(reply.status).toBe(404);
    expect(reply.body.statusCode).toBe(404);
  });

  it("405 JSON naming the allowed methods for a known route with another method", async () => {
    const reply = await stack.request("PATCH", "/v1/integrations/abc");
    expect(reply.status).toBe(405);
    expect(reply.headers.get("allow")).toBe("PUT, DELETE");
    expect(reply.body).toMatchObject({ statusCode: 405, message: "Cannot PATCH /v1/integrations/abc", error: "Method Not Allowed" });
  });
});

describe("idempotency", () => {
  it("replays a completed request and refuses a different body under the same key", async () => {
    const headers = { "idempotency-key": "create-kim" };
    const first = await stack.request("POST", "/v1/subscribers", { subscriberId: "kim", firstName: "Kim" }, headers);
    expect(first.status).toBe(201);
    await stack.request("PUT", "/v1/subscribers/kim", { firstName: "Changed" });
    const replay = await stack.request("POST", "/v1/subscribers", { subscriberId: "kim", firstName: "Kim" }, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const other = await stack.request("POST", "/v1/subscribers", { subscriberId: "kim", firstName: "Other" }, headers);
    expect(other.status).toBe(422);
    expect((await stack.request("GET", "/v1/subscribers/kim")).body.data.firstName).toBe("Changed");
  });

  it("does not keep a request rejected before it ran, and ignores keys on GET", async () => {
    const headers = { "idempotency-key": "retry-after-fix" };
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: 1 }, headers)).status).toBe(422);
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "fixed" }, headers)).status).toBe(201);
    const get = await stack.request("GET", "/v1/subscribers/fixed", undefined, headers);
    expect(get.headers.get("idempotency-replay")).toBeNull();
  });

  it("answers 409 while the first request is still running", async () => {
    const headers = { "idempotency-key": "concurrent" };
    const replies = await Promise.all(Array.from({ length: 8 }, () => stack.request("POST", "/v1/subscribers", { subscriberId: "racer" }, headers)));
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(statuses.filter((status) => status === 201 && true).length).toBeGreaterThanOrEqual(1);
    for (const reply of replies.filter((r) => r.status === 409)) expect(reply.headers.get("retry-after")).toBe("1");
  });

  it("400 for a key over 255 characters", async () => {
    const reply = await stack.request("POST", "/v1/subscribers", { subscriberId: "k" }, { "idempotency-key": "k".repeat(256) });
    expect(reply.status).toBe(400);
  });
});

describe("probes", () => {
  it("livez, readyz and the dependency health answer without a key", async () => {
    const live = await fetch(`${stack.url}/livez`);
    expect(live.status).toBe(200);
    expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
    const dependencies = await fetch(`${stack.url}/readyz/dependencies`);
    expect(dependencies.status).toBe(200);
    const { checks } = (await dependencies.json()) as { checks: Record<string, string> };
    expect(checks).toMatchObject({ postgres: "up", redis: "up", nats: "up", subscribers: "up" });
    expect(Object.values(checks).every((state) => state === "up")).toBe(true);
  });
});
