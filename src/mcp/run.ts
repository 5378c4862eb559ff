// How a tool call runs: in one tenant transaction bounded by the request's deadline, stopped when the
// client cancels (notifications/cancelled aborts the handler's signal, and the running statement is
// cancelled in PostgreSQL), with progress notifications when the client asked for them; and how the
// services' problems become tool errors the model can read and correct.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sql } from 'kysely';
import { retryOnConflict } from '../platform/db/conflict-retry.ts';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';

export interface Cancellable {
  signal: AbortSignal;
  deadline: number;
  /** Sends notifications/progress when the request carried a progressToken; a no-op otherwise. */
  progress: (progress: number, total: number, message: string) => Promise<void>;
}

export const inputError = (detail: string): HttpProblem => new HttpProblem(400, detail);

export class Cancelled extends Error {
  constructor() {
    super('The call was cancelled.');
  }
}

/**
 * fn in a transaction of the tenant; when `run.signal` aborts, the backend's statement is cancelled
 * (pg_cancel_backend from the owner pool) so the connection is given back at once.
 */
export async function runCancellable<T>(db: DatabaseHandle, tenantId: string, run: Cancellable, fn: (trx: Trx) => Promise<T>, write = false): Promise<T> {
  if (run.signal.aborted) throw new Cancelled();
  const once = () =>
    db.withTenant(
      tenantId,
      async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        const pid = rows[0].pid;
        const cancel = () => {
          db.pool.query('select pg_cancel_backend($1)', [pid]).catch(() => {});
        };
        run.signal.addEventListener('abort', cancel, { once: true });
        try {
          return await fn(trx);
        } catch (err) {
          if (run.signal.aborted) throw new Cancelled();
          throw err;
        } finally {
          run.signal.removeEventListener('abort', cancel);
        }
      },
      { deadline: run.deadline },
    );
  return write ? retryOnConflict(once, run.deadline) : once();
}

/** A service's refusal (400, 403, 404, 409, 422…) as a tool result the model reads; anything else is thrown on. */
export function toolError(err: unknown): CallToolResult {
  if (err instanceof HttpProblem) {
    const fieldErrors = (err.errors ?? []).slice(0, 20).map((e) => `${e.path}: ${e.message}`);
    const text = `${err.status} ${err.message}${fieldErrors.length ? ` (${fieldErrors.join('; ')})` : ''}`;
    return { isError: true, content: [{ type: 'text', text }] };
  }
  const e = err as { code?: string };
  if (e?.code === '57014')
    return {
      isError: true,
      content: [{ type: 'text', text: 'The call took longer than the time limit and was stopped; narrow it with filters and page it.' }],
    };
  throw err;
}
