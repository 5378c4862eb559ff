// pg writes each protocol message with its own socket write: a prepared statement is a Bind, a Describe, an
// Execute and a Sync, a transaction a BEGIN, its statements and a COMMIT. On this kind of machine a write to a
// loopback socket costs as much as planning a small statement (it wakes PostgreSQL's backend), so every
// connection of ours gathers what it writes in one turn of the event loop into one write (decision 0085).

import type pg from 'pg';

interface CorkableStream {
  cork(): void;
  uncork(): void;
  write(...args: unknown[]): boolean;
}

const coalesced = new WeakSet<object>();

/**
 * From now on, what the client writes in one turn of the event loop leaves in one write: the first write of a
 * turn corks the socket and setImmediate uncorks it. Backpressure is unchanged (write() still answers false past
 * the socket's high-water mark); a client whose stream cannot cork is left as it is. Idempotent.
 */
export function coalesceWrites(client: pg.Client | pg.PoolClient): void {
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
      setImmediate(uncork);
    }
    return write.apply(this, args);
  };
}
