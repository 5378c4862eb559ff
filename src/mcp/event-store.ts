// Resumable streams (Streamable HTTP, Last-Event-ID): the messages a session sent on its SSE streams,
// kept in memory so a client whose stream broke can reconnect and be sent what it missed. Bounded per
// session in count and bytes; the oldest go first. A session lives in one process (decision 0049), so
// its events do too.
import { randomUUID } from 'node:crypto';
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const MAX_EVENTS = 200;
export const MAX_EVENT_BYTES = 2 * 1024 * 1024;

interface Stored {
  id: EventId;
  streamId: StreamId;
  message: JSONRPCMessage;
  bytes: number;
}

export class SessionEventStore implements EventStore {
  readonly #events: Stored[] = [];
  #bytes = 0;
  readonly #prefix = randomUUID().slice(0, 8);
  #next = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = `${this.#prefix}-${++this.#next}`;
    const bytes = JSON.stringify(message).length;
    this.#events.push({ id, streamId, message, bytes });
    this.#bytes += bytes;
    while (this.#events.length > MAX_EVENTS || (this.#bytes > MAX_EVENT_BYTES && this.#events.length > 1)) {
      this.#bytes -= (this.#events.shift() as Stored).bytes;
    }
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.#events.find((e) => e.id === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const at = this.#events.findIndex((e) => e.id === lastEventId);
    if (at < 0) return '';
    const streamId = this.#events[at].streamId;
    for (const e of this.#events.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }

  get size(): number {
    return this.#events.length;
  }
}
