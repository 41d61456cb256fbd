import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../src/server.js";
import * as store from "../src/store.js";

// The lease statement runs for every batch of sends, on connections that live long: what it reads
// must follow the batch, not the size the table had when a connection first ran it.

let fixture: DatabaseFixture;

beforeAll(async () => {
  // One connection: every call below runs on the connection that first ran the statement.
  fixture = await openTestDatabase([migrations], 1);
});
afterAll(async () => {
  await fixture?.close();
});

const idOf = (index: number) => index.toString(16).padStart(24, "0");
const requestOf = (index: number): store.LeaseRequest => ({ messageId: idOf(index), organizationId: "org-1", environmentId: "env-1", providerId: "slack" });

describe("send leases", () => {
  it("claims and finishes a batch by its ids once the table is large, on a connection that first ran the statement on an empty table", async () => {
    // Run while the table is empty or nearly: enough calls for Postgres to settle on a plan.
    for (let round = 0; round < 10; round += 1) {
      const previous = round === 0 ? [] : [0, 1, 2, 3].map((offset) => ({ messageId: idOf((round - 1) * 4 + offset), state: "sent" as const }));
      const claimed = await store.finishAndClaimLeases(
        fixture.pool,
        previous,
        [0, 1, 2, 3].map((offset) => requestOf(round * 4 + offset)),
      );
      expect(claimed.map((lease) => lease.claimed)).toEqual([true, true, true, true]);
    }
    await fixture.pool.query(
      `INSERT INTO worker.send_leases (message_id, organization_id, environment_id, provider_id, state, attempts)
       SELECT lpad(to_hex(i), 24, '0'), 'org-1', 'env-1', 'slack', 'sent', 1 FROM generate_series(1000, 20999) AS i`,
    );

    const client = await fixture.pool.connect();
    try {
      await client.query("BEGIN");
      const outcomes: store.LeaseOutcome[] = [36, 37, 38, 39].map((index) => ({ messageId: idOf(index), state: "failed", errorId: "e", errorText: "refused" }));
      const leases = await store.finishAndClaimLeases(client, outcomes, [requestOf(50_000), requestOf(1_000)]);
      const { rows } = await client.query<{ seq_tup_read: number }>(
        "SELECT seq_tup_read FROM pg_stat_xact_user_tables WHERE schemaname = 'worker' AND relname = 'send_leases'",
      );
      await client.query("COMMIT");
      // A new message is claimed; one already sent answers its lease unclaimed.
      expect(leases.map((lease) => [lease.message_id, lease.claimed, lease.state]).sort()).toEqual([
        [idOf(1_000), false, "sent"],
        [idOf(50_000), true, "sending"],
      ]);
      // The 20,000 leases are not read one by one for a batch of six.
      expect(rows[0]?.seq_tup_read ?? 0).toBeLessThan(1_000);
    } finally {
      client.release();
    }
    const { rows: finished } = await fixture.pool.query<{ state: string }>("SELECT state FROM worker.send_leases WHERE message_id = ANY($1)", [
      [36, 37, 38, 39].map(idOf),
    ]);
    expect(finished.map((row) => row.state)).toEqual(["failed", "failed", "failed", "failed"]);
  });

  it("deletes, a limited number per call, the leases first tried before the cutoff that are done or wait for a retry, and keeps unknown outcomes and sends under way", async () => {
    await fixture.pool.query(
      `INSERT INTO worker.send_leases (message_id, organization_id, environment_id, provider_id, state, attempts, first_attempt_at)
       SELECT 'old-' || state, 'org-1', 'env-1', 'slack', state, 1, now() - interval '1 hour' FROM unnest($1::text[]) AS state
       UNION ALL
       SELECT 'new-' || state, 'org-1', 'env-1', 'slack', state, 1, now() - interval '1 minute' FROM unnest($1::text[]) AS state`,
      [["sending", "retrying", "sent", "failed", "unknown"]],
    );
    const left = async () =>
      (
        await fixture.pool.query<{ message_id: string }>(
          "SELECT message_id FROM worker.send_leases WHERE message_id LIKE 'old-%' OR message_id LIKE 'new-%' ORDER BY message_id",
        )
      ).rows.map((row) => row.message_id);
    // Two at a time: the next call takes the rest.
    expect(await store.deleteOldLeases(fixture.pool, 30 * 60_000, 2)).toBe(2);
    expect(await store.deleteOldLeases(fixture.pool, 30 * 60_000, 2)).toBe(1);
    expect(await store.deleteOldLeases(fixture.pool, 30 * 60_000, 2)).toBe(0);
    expect(await left()).toEqual(["new-failed", "new-retrying", "new-sending", "new-sent", "new-unknown", "old-sending", "old-unknown"]);
  });
  it("never overwrites an outcome its worker recorded with one taken to be unknown", async () => {
    const [lease] = await store.finishAndClaimLeases(fixture.pool, [], [requestOf(70_000)]);
    expect(lease).toMatchObject({ claimed: true, state: "sending" });
    // The worker that seemed dead recorded its send after all, before the other's verdict landed.
    await store.finishAndClaimLeases(fixture.pool, [{ messageId: idOf(70_000), state: "sent", providerMessageId: "p-1" }], []);
    await store.finishAndClaimLeases(fixture.pool, [{ messageId: idOf(70_000), state: "unknown", errorId: "delivery_outcome_unknown", errorText: "?" }], []);
    const { rows } = await fixture.pool.query<{ state: string }>("SELECT state FROM worker.send_leases WHERE message_id = $1", [idOf(70_000)]);
    expect(rows[0]?.state).toBe("sent");
  });
});
