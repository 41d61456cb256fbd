import { objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";
import { planner, rowsRead } from "./plans.js";

// A provider's webhook names messages by the ids its sends answered: each event is found through
// the send attempt that kept that id, in the caller's environment, and served with the attempts.

let fixture: Fixture;
let planOf: ReturnType<typeof planner>;
const environmentId = objectId();
const otherEnvironmentId = objectId();
const notificationId = objectId();
const idOf = (index: number, pad: string) => index.toString(16).padStart(24, pad);

/** A notification of `count` email messages to subscriber `s-1`, each sent once by sendgrid as `sg-<pad>-<i>`. */
async function load(environment: string, notification: string, count: number, pad: string) {
  await fixture.pool.query(
    `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
     VALUES ($1, 'org', $2, 'txn', 's', 's-1', 't')`,
    [notification, environment],
  );
  await fixture.pool.query(
    `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                    template_id, message_template_id, step_id, transaction_id, channel, destination)
     SELECT lpad(to_hex(i), 24, $4), 'org', $1, $2, 's', 's-1', 't', 'mt', 'email-step', 'txn', 'email', i::text
       FROM generate_series(1, $3::int) AS i`,
    [environment, notification, count, pad],
  );
  await store.recordDeliveryAttempts(
    fixture.pool,
    environment,
    Array.from({ length: count }, (_, index) => ({
      id: objectId(),
      message_id: idOf(index + 1, pad),
      attempt: 1,
      provider_id: "sendgrid",
      status: "success" as const,
      error_id: null,
      error_text: null,
      provider_message_id: `sg-${pad}-${index + 1}`,
      detail: "Message sent by sendgrid",
      started_at: new Date(Date.now() - 60_000),
      duration_ms: 4,
    })),
  );
}

const event = (providerMessageId: string, status: string, raw = `{"event":"${status}","id":"${providerMessageId}"}`): store.ProviderEventRow => ({
  id: objectId(),
  provider_message_id: providerMessageId,
  status,
  occurred_at: new Date("2026-11-27T10:00:00Z"),
  external_id: "ev",
  attempts: 1,
  response: status === "bounced" ? "550 no such user" : null,
  raw,
});

beforeAll(async () => {
  fixture = await openDatabase();
  planOf = planner(fixture);
  await load(otherEnvironmentId, objectId(), 3, "f");
  await fixture.pool.query("ANALYZE messages.delivery_attempts");
  await load(environmentId, notificationId, 2_000, "0");
});
afterAll(() => fixture?.close());

describe("provider events", () => {
  it("are matched by the provider's message id within the environment and provider, each event once", async () => {
    const batch = [event("sg-0-1", "delivered"), event("sg-f-1", "delivered"), event("nobody", "opened"), event("sg-0-2", "bounced")];
    expect(await store.recordProviderEvents(fixture.pool, environmentId, "sendgrid", batch)).toEqual([1, 4]);
    // Another provider's events do not name sendgrid's messages; another environment's not this one's.
    expect(await store.recordProviderEvents(fixture.pool, environmentId, "mailgun", [event("sg-0-1", "opened")])).toEqual([]);
    expect(await store.recordProviderEvents(fixture.pool, otherEnvironmentId, "sendgrid", [event("sg-0-3", "opened")])).toEqual([]);
    // The provider posting the same event again (no answer seen) is matched and records nothing new.
    expect(await store.recordProviderEvents(fixture.pool, environmentId, "sendgrid", [event("sg-0-1", "delivered"), event("sg-0-1", "delivered")])).toEqual([
      1, 2,
    ]);
    const { rows } = await fixture.pool.query<{ message_id: string; status: string; environment_id: string }>(
      "SELECT message_id, status, environment_id FROM messages.provider_events ORDER BY message_id",
    );
    expect(rows).toEqual([
      { message_id: idOf(1, "0"), status: "delivered", environment_id: environmentId },
      { message_id: idOf(2, "0"), status: "bounced", environment_id: environmentId },
    ]);
  });

  it("are served with the attempts as execution details, oldest first", async () => {
    const details = await store.selectExecutionDetails(fixture.pool, environmentId, [{ notificationId, externalSubscriberId: "s-1" }], 5);
    expect(details.map((row) => row.kind)).toEqual(["attempt", "attempt", "attempt", "attempt", "attempt"]);
    const all = await store.selectExecutionDetails(fixture.pool, environmentId, [{ notificationId, externalSubscriberId: "s-1" }], 5_000);
    expect(all).toHaveLength(2_002);
    const events = all.filter((row) => row.kind === "event");
    expect(events).toEqual([
      expect.objectContaining({
        kind: "event",
        message_id: idOf(1, "0"),
        status: "delivered",
        provider_id: "sendgrid",
        provider_message_id: "sg-0-1",
        channel: "email",
        transaction_id: "txn",
      }),
      expect.objectContaining({
        kind: "event",
        message_id: idOf(2, "0"),
        status: "bounced",
        response: "550 no such user",
        occurred_at: new Date("2026-11-27T10:00:00Z"),
      }),
    ]);
    expect(all.slice(-2).map((row) => row.kind)).toEqual(["event", "event"]);
  });

  it("find each event's message through the index of provider message ids, not by reading the environment's attempts", async () => {
    const { plan } = await planOf((db) =>
      store.recordProviderEvents(db, environmentId, "sendgrid", [event("sg-0-1500", "opened"), event("sg-0-1600", "clicked")]),
    );
    expect(rowsRead(plan)).toBeLessThan(50);
  });
});
