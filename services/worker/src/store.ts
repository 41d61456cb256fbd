import type { Queryable } from "@notify/runtime";

export async function insertDeadLetter(
  db: Queryable,
  environmentId: string | null,
  row: { organizationId: string | null; subject: string; job: Uint8Array; error: string; deliveries: number },
): Promise<void> {
  await db.query(
    `INSERT INTO worker.dead_letters (environment_id, organization_id, subject, job, error, deliveries)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [environmentId, row.organizationId, row.subject, Buffer.from(row.job), row.error, row.deliveries],
  );
}
