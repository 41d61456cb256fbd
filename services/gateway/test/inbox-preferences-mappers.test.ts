import { create } from "@bufbuild/protobuf";
import { subscribersV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { HttpError } from "../src/errors.js";
import {
  inboxBulkPreferencesBody,
  inboxBulkRequestOf,
  inboxPreferenceBody,
  inboxPreferencesQuery,
  inboxPreferencesToJson,
  inboxUpdateRequestOf,
  updatedWorkflowsToJson,
} from "../src/mappers/inbox-preferences.js";
import { listsJoined, parseOrThrow } from "../src/validation.js";

/** The fields a 422 names, or undefined when the input parses. */
function refusedFields(schema: Parameters<typeof parseOrThrow>[0], input: unknown): string[] | undefined {
  try {
    parseOrThrow(schema, input);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(422);
    return Object.keys((error as HttpError).extra.errors as object).sort();
  }
}

const { Criticality } = subscribersV1;

describe("query lists", () => {
  it("joins bracketed keys with plain ones, as Novu's Express parser does, and leaves group indexes alone", () => {
    // What a client's URLSearchParams (or axios's brackets) gives Koa's query parser.
    expect(listsJoined({ "tags[]": ["billing", "ops"], severity: "low", "transactionId[]": "t1", "tags[0][]": "x", limit: "5" })).toEqual({
      tags: ["billing", "ops"],
      severity: "low",
      transactionId: ["t1"],
      "tags[0][]": "x",
      limit: "5",
    });
    expect(listsJoined({ severity: "high", "severity[]": ["low", "none"] })).toEqual({ severity: ["high", "low", "none"] });
  });
});

describe("GET /v1/inbox/preferences query", () => {
  const parsed = (query: Record<string, unknown>) => parseOrThrow(inboxPreferencesQuery, listsJoined(query));

  it("reads tags and severity repeated with brackets or once, and criticality (nonCritical by default)", () => {
    expect(parsed({ "tags[]": ["billing", "ops"], "severity[]": ["high", "none"] })).toEqual({
      criticality: Criticality.NON_CRITICAL,
      tags: ["billing", "ops"],
      severities: ["high", "none"],
    });
    expect(parsed({ "tags[]": "billing", severity: "low", criticality: "all" })).toEqual({
      criticality: Criticality.ALL,
      tags: ["billing"],
      severities: ["low"],
    });
    expect(parsed({})).toEqual({ criticality: Criticality.NON_CRITICAL, tags: [], severities: [] });
  });

  it("refuses unknown severities and criticalities, empty tags and too many of them", () => {
    const refused = (query: Record<string, unknown>) => refusedFields(inboxPreferencesQuery, listsJoined(query));
    expect(refused({ severity: "urgent" })).toEqual(["severity[0]"]);
    expect(refused({ "severity[]": ["high", "bad"] })).toEqual(["severity[1]"]);
    expect(refused({ criticality: "some" })).toEqual(["criticality"]);
    expect(refused({ "tags[]": "" })).toEqual(["tags[0]"]);
    expect(refused({ "tags[]": Array.from({ length: 101 }, (_, index) => `t${index}`) })).toEqual(["tags"]);
  });
});

describe("PATCH /v1/inbox/preferences bodies", () => {
  it("takes the channel switches themselves, dropping other keys, and a schedule", () => {
    const body = parseOrThrow(inboxPreferenceBody, { email: false, in_app: true, enabled: true, condition: {} });
    expect(body).toEqual({ email: false, in_app: true });
    expect(inboxUpdateRequestOf({ subscriberId: "sub-1", contextKeys: ["tenant:acme"] }, body, "665f00000000000000000000")).toEqual({
      subscriberId: "sub-1",
      contextKeys: ["tenant:acme"],
      workflowId: "665f00000000000000000000",
      channels: { email: false, inApp: true },
    });
    const schedule = {
      isEnabled: true,
      weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] }, friday: { isEnabled: false } },
    };
    expect(inboxUpdateRequestOf({ subscriberId: "sub-1", contextKeys: [] }, parseOrThrow(inboxPreferenceBody, { schedule }))).toEqual({
      subscriberId: "sub-1",
      contextKeys: [],
      channels: {},
      schedule: {
        isEnabled: true,
        weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] }, friday: { isEnabled: false, hours: [] } },
      },
    });
  });

  it("refuses non-boolean switches, malformed schedules and non-object bodies", () => {
    expect(refusedFields(inboxPreferenceBody, { email: "no", push: 1 })).toEqual(["email", "push"]);
    expect(refusedFields(inboxPreferenceBody, { schedule: { isEnabled: true, weeklySchedule: { someday: {} } } })).toEqual(["schedule.weeklySchedule"]);
    expect(refusedFields(inboxPreferenceBody, [])).toEqual(["general"]);
  });

  it("takes 1 to 100 bulk entries, each naming its workflow", () => {
    const body = parseOrThrow(inboxBulkPreferencesBody, {
      preferences: [
        { workflowId: "news", email: false },
        { workflowId: "665f00000000000000000000", in_app: false },
      ],
    });
    expect(inboxBulkRequestOf({ subscriberId: "sub-1", contextKeys: [] }, body)).toEqual({
      subscriberId: "sub-1",
      contextKeys: [],
      updates: [
        { workflowId: "news", channels: { email: false } },
        { workflowId: "665f00000000000000000000", channels: { inApp: false } },
      ],
    });
    expect(refusedFields(inboxBulkPreferencesBody, {})).toEqual(["preferences"]);
    expect(refusedFields(inboxBulkPreferencesBody, { preferences: Array.from({ length: 101 }, () => ({ workflowId: "news" })) })).toEqual(["preferences"]);
    expect(refusedFields(inboxBulkPreferencesBody, { preferences: [{ email: false }, { workflowId: "x", sms: "off" }] })).toEqual([
      "preferences[0].workflowId",
      "preferences[1].sms",
    ]);
  });
});

describe("preference answers", () => {
  const news = { id: "665f00000000000000000001", slug: "news_wf_a", identifier: "news", name: "News", critical: false, tags: ["product"], severity: "none" };
  const alerts = { id: "665f00000000000000000002", slug: "alerts_wf_b", identifier: "alerts", name: "Alerts", critical: false, tags: [], severity: "" };
  const reply = create(subscribersV1.SubscriberPreferencesSchema, {
    global: {
      enabled: true,
      channels: { email: true, inApp: true },
      schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00", end: "17:00" }] } } },
    },
    workflows: [
      { enabled: true, channels: { email: false, inApp: true }, overrides: [{ channel: "email", source: "subscriber" }], workflow: news },
      { enabled: true, channels: { push: true }, overrides: [{ channel: "push", source: "template" }], workflow: alerts },
    ],
    updatedWorkflowIds: [alerts.id, "665f000000000000000000ff", news.id],
  });

  it("lists the global preference with its schedule, then one template preference per workflow", () => {
    expect(inboxPreferencesToJson(reply)).toEqual([
      {
        level: "global",
        enabled: true,
        channels: { email: true, in_app: true },
        schedule: { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00", end: "17:00" }] } } },
      },
      {
        level: "template",
        enabled: true,
        channels: { email: false, in_app: true },
        overrides: [{ channel: "email", source: "subscriber" }],
        workflow: { id: news.id, identifier: "news", name: "News", critical: false, tags: ["product"], severity: "none" },
      },
      {
        level: "template",
        enabled: true,
        channels: { push: true },
        overrides: [{ channel: "push", source: "template" }],
        workflow: { id: alerts.id, identifier: "alerts", name: "Alerts", critical: false, tags: [], severity: "none" },
      },
    ]);
    const bare = create(subscribersV1.SubscriberPreferencesSchema, { global: { enabled: true, channels: {} } });
    expect(inboxPreferencesToJson(bare)).toEqual([{ level: "global", enabled: true, channels: {} }]);
  });

  it("answers the updated workflows in the order the update named them, leaving out unlisted ones", () => {
    expect(updatedWorkflowsToJson(reply).map((preference) => preference.workflow.identifier)).toEqual(["alerts", "news"]);
  });
});
