// pg writes each protocol message with its own socket write: a prepared statement is a Bind, a Describe, an
// Execute and a Sync, a transaction a BEGIN, its statements and a COMMIT. On this kind of machine a write to a
// loopback socket costs as much as planning a small statement (it wakes PostgreSQL's backend), so every
// connection of ours gathers what it writes together into one write (decision 0085).

import type pg from 'pg';

interface CorkableStream {
  cork(): void;
  uncork(): void;
  write(...args: unknown[]): boolean;
}

const coalesced = new WeakSet<object>();

/**
 * From now on, what the client writes together leaves in one write: the first write corks the socket, and it is
 * uncorked when the code that wrote is done. `until`: 'tick' (process.nextTick: once the callback and the promise
 * continuations running now are done, so a transaction's BEGIN, its first statement and, for its last one, COMMIT
 * leave together, and no statement waits for the rest of a busy event-loop turn), or 'turn' (setImmediate: the
 * whole turn, so lookups of all the requests that arrived together leave together; the read lanes). Backpressure is
 * unchanged (write() still answers false past the socket's high-water mark); a client whose stream cannot cork is
 * left as it is. Idempotent.
 */
export function coalesceWrites(client: pg.Client | pg.PoolClient, until: 'tick' | 'turn' = 'tick'): void {
  const stream = (client as unknown as { connection?: { stream?: CorkableStream } }).connection?.stream;
  if (!stream || coalesced.has(stream) || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function') return;
  coalesced.add(stream);
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = function (this: CorkableStream, ...args: unknown[]): boolean {
    if (!corked) {
      corked = true;
      stream.cork();
      if (until === 'tick') process.nextTick(uncork);
      else setImmediate(uncork);
    }
    return write.apply(this, args);
  };
}
