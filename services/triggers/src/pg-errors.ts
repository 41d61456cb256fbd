/** Postgres' unique_violation: a concurrent or earlier write holds the key. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23505";
}
