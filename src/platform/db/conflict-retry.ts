// Runs a tenant transaction again when PostgreSQL reports a failure that only concurrency causes: a
// serialization failure, a deadlock, or two inserts racing on a unique index that is not the ON CONFLICT
// arbiter (on the retry the loser sees the winner's row and takes the path it would have taken had the
// requests come one after the other; a true duplicate fails again and answers 409).

const RETRYABLE = new Set(['23505', '40001', '40P01']);
export const CONFLICT_ATTEMPTS = 3;

const pgCode = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
};

/** `run` must open and commit its own transaction, so that every attempt starts from a clean slate. */
export async function retryOnConflict<T>(run: () => Promise<T>, deadline: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const code = pgCode(err);
      if (attempt >= CONFLICT_ATTEMPTS || !code || !RETRYABLE.has(code) || Date.now() >= deadline) throw err;
    }
  }
}
