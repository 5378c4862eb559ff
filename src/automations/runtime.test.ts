import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../config.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import { createContext } from '../server.ts';
import { ACTION_TYPES, validateDefinition } from './definition.ts';
import { HANDLERS } from './handlers.ts';
import { actionTypesFor, closeServices, servicesFor, useActionHandlers } from './runtime.ts';

const config = () => loadConfig({ ATRIUM_SECRET_KEY: 'a'.repeat(64) });
const key = Buffer.alloc(32, 1);
// No query is made: the run services are only built, never called.
const db = {} as DatabaseHandle;

test("a server's context runs every action type its definitions may name, and names every type it runs", async () => {
  const ctx = createContext(config(), db, key);
  try {
    const handled = Object.keys(servicesFor(ctx).handlers).sort();
    const validated = [...Object.keys(ACTION_TYPES), ...Object.keys(actionTypesFor(ctx))].sort();
    assert.deepEqual(handled, validated);
    assert.ok(handled.includes('UserFeed'));
  } finally {
    await closeServices(ctx);
  }
});

test("another surface's action type is the context's own: another context neither runs nor accepts it", async () => {
  const plain = { ...createContext(config(), db, key) };
  const withOne = { ...createContext(config(), db, key) };
  // createContext added UserFeed to the original objects only: these copies start without surface actions.
  useActionHandlers(withOne, { Probe: { handler: async () => ({ output: 1 }), fields: ['what'] } });
  try {
    assert.equal(Object.hasOwn(servicesFor(plain).handlers, 'Probe'), false);
    assert.equal(servicesFor(withOne).handlers.Probe !== undefined, true);
    const body = {
      name: 'p',
      actions: [
        { name: 'Start', actionType: 'Start', next: 'P' },
        { name: 'P', actionType: 'Probe', next: 'End' },
        { name: 'End', actionType: 'Result' },
      ],
    };
    assert.deepEqual(
      validateDefinition(body, { maxBytes: 1 << 20, maxActions: 100, actionTypes: actionTypesFor(plain) }).errors.map((e) => e.message),
      ['unknown action type "Probe"'],
    );
    assert.deepEqual(
      validateDefinition(body, { maxBytes: 1 << 20, maxActions: 100, actionTypes: actionTypesFor(withOne) }).errors.map((e) => `${e.path}: ${e.message}`),
      ['/actions/1/what: is required for a Probe action'],
    );
    assert.throws(() => useActionHandlers(withOne, { Other: { handler: HANDLERS.Start, fields: [] } }), /before the context runs/);
    assert.throws(() => useActionHandlers({ ...plain }, { Start: { handler: HANDLERS.Start, fields: [] } }), /engine's own/);
  } finally {
    await closeServices(plain);
    await closeServices(withOne);
  }
});
