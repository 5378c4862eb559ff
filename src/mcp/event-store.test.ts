// The resumability store: replays only what followed the given event on the same stream, and stays bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_EVENTS, SessionEventStore } from './event-store.ts';

const msg = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n } });

test('replays the events after Last-Event-ID on its own stream only', async () => {
  const store = new SessionEventStore();
  const a1 = await store.storeEvent('a', msg(1));
  await store.storeEvent('b', msg(2));
  await store.storeEvent('a', msg(3));
  await store.storeEvent('a', msg(4));
  const sent: unknown[] = [];
  const stream = await store.replayEventsAfter(a1, { send: async (_id, m) => void sent.push((m as any).params.progress) });
  assert.equal(stream, 'a');
  assert.deepEqual(sent, [3, 4]);
  assert.equal(await store.getStreamIdForEventId(a1), 'a');
  assert.equal(await store.getStreamIdForEventId('nope'), undefined);
});

test('keeps at most MAX_EVENTS; the oldest go first', async () => {
  const store = new SessionEventStore();
  const first = await store.storeEvent('a', msg(0));
  for (let i = 1; i <= MAX_EVENTS + 10; i++) await store.storeEvent('a', msg(i));
  assert.equal(store.size, MAX_EVENTS);
  assert.equal(await store.getStreamIdForEventId(first), undefined);
});
