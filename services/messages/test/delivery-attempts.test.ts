import { objectId, type Queryable } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as store from "../src/store.js";
import { openDatabase, type Fixture } from "./fixtures.js";
import { planner, rowsRead } from "./plans.js";

// Send attempts are recorded a batch at a time while the environment's messages are being
// written: the table is large, and its statistics may be from before (a new installation).

let fixture: Fixture;
let planOf: ReturnType<typeof planner>;
const environmentId = objectId();
const notificationId = objectId();
const otherEnvironmentId = objectId();
const otherNotificationId = objectId();
const idOf = (index: number) => index.toString(16).padStart(24, "0");

/** One notification of `count` chat messages for the environment, their ids `idOf(1…count)` padded with `pad`. */
async function load(environment: string, notification: string, count: number, pad: string) {
  await fixture.pool.query(
    `INSERT INTO messages.notifications (id, organization_id, environment_id, transaction_id, subscriber_id, external_subscriber_id, template_id)
     VALUES ($1, 'org', $2, 'txn', 's', 's', 't')`,
    [notification, environment],
  );
  await fixture.pool.query(
    `INSERT INTO messages.messages (id, organization_id, environment_id, notification_id, subscriber_id, external_subscriber_id,
                                    template_id, message_template_id, step_id, transaction_id, channel)
     SELECT lpad(to_hex(i), 24, $4), 'org', $1, $2, 's-' || i, 's-' || i, 't', 'mt', 'chat-step', 'txn', 'chat'
       FROM generate_series(1, $3::int) AS i`,
    [environment, notification, count, pad],
  );
}

beforeAll(async () => {
  fixture = await openDatabase();
  planOf = planner(fixture);
  // Statistics taken while the table held another environment's few messages only.
  await load(otherEnvironmentId, otherNotificationId, 10, "f");
  await fixture.pool.query("ANALYZE messages.messages");
  await load(environmentId, notificationId, 20_000, "0");
});
afterAll(() => fixture?.close());

/** The same statements without their names: planned for each call, with the values at hand. */
const unnamed = (db: Queryable): Queryable => ({
  query: ((statement: string | { name?: string; text: string; values?: unknown[] }, values?: unknown[]) =>
    typeof statement === "string" ? db.query(statement, values) : db.query({ text: statement.text, values: statement.values ?? [] })) as Queryable["query"],
});

const attempt = (index: number, number: number, status: store.AttemptRow["status"]): store.AttemptRow => ({
  id: objectId(),
  message_id: idOf(index),
  attempt: number,
  provider_id: "slack",
  status,
  error_id: status === "failed" ? "unexpected_chat_error" : null,
  error_text: status === "failed" ? "refused" : null,
  provider_message_id: status === "success" ? `p-${index}` : null,
  detail: status,
  started_at: new Date(),
  duration_ms: 3,
});

describe("recording send attempts", () => {
  it("moves each message to sent or error, and a failure after a delivery changes nothing", async () => {
    expect(await store.recordDeliveryAttempts(fixture.pool, environmentId, [attempt(1, 1, "success"), attempt(2, 1, "failed")])).toBe(2);
    expect(await store.recordDeliveryAttempts(fixture.pool, environmentId, [attempt(1, 2, "failed"), attempt(1, 1, "success")])).toBe(0);
    const { rows } = await fixture.pool.query<{ id: string; status: string; delivered: number; provider_message_id: string | null }>(
      "SELECT id, status, cardinality(delivered_at) AS delivered, provider_message_id FROM messages.messages WHERE id = ANY($1) ORDER BY id",
      [[idOf(1), idOf(2)]],
    );
    expect(rows).toEqual([
      { id: idOf(1), status: "sent", delivered: 1, provider_message_id: "p-1" },
      { id: idOf(2), status: "error", delivered: 0, provider_message_id: null },
    ]);
    // Another environment's message is out of reach.
    expect(await store.recordDeliveryAttempts(fixture.pool, objectId(), [attempt(3, 1, "success")])).toBe(0);
  });

  it("lets a success replace a failure recorded for the same attempt, and never the other way", async () => {
    // A worker took attempt 1's outcome for unknown; the call's own worker then learned it went out.
    expect(await store.recordDeliveryAttempts(fixture.pool, environmentId, [attempt(4, 1, "failed")])).toBe(1);
    expect(await store.recordDeliveryAttempts(fixture.pool, environmentId, [attempt(4, 1, "success")])).toBe(1);
    expect(await store.recordDeliveryAttempts(fixture.pool, environmentId, [attempt(4, 1, "failed")])).toBe(0);
    const { rows } = await fixture.pool.query<{ status: string; delivered: number; attempt_status: string; error_text: string | null }>(
      `SELECT m.status, cardinality(m.delivered_at) AS delivered, a.status AS attempt_status, a.error_text
         FROM messages.messages m JOIN messages.delivery_attempts a ON a.message_id = m.id WHERE m.id = $1`,
      [idOf(4)],
    );
    expect(rows).toEqual([{ status: "sent", delivered: 1, attempt_status: "success", error_text: null }]);
  });

  it("reads a batch's messages by their ids, not the environment's 20,000, planned once per connection or for each batch", async () => {
    const batch = [attempt(10, 1, "success"), attempt(11, 1, "success")];
    const { plan: prepared } = await planOf((db) => store.recordDeliveryAttempts(db, environmentId, batch));
    expect(rowsRead(prepared)).toBeLessThan(100);
    const { plan: planned } = await planOf((db) =>
      store.recordDeliveryAttempts(unnamed(db), environmentId, [attempt(12, 1, "success"), attempt(13, 1, "success")]),
    );
    expect(rowsRead(planned)).toBeLessThan(100);
  });
});
