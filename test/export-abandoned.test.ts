// An export whose stream is destroyed before it is read (the client went away while the export started, so the
// response was never piped) releases its connection: nothing is left idle in a transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { dynamicExport } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;
before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Export Agency');
});
after(async () => {
  await server.close();
});

// The export's connection is the one running its COPY (its text is cut at track_activity_query_size, so its start is matched); the
// server's own background work (dispatcher, maintenance) shares the database and is not counted.
const exportConnections = async (): Promise<number> => {
  const c = new pg.Client({ connectionString: server.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle' and query ilike 'copy (%'`,
    );
    return rows[0].n;
  } finally {
    await c.end();
  }
};

test('an export destroyed before its first read releases its connection', async () => {
  const principal: Principal = { tenantId: tenant.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
  for (const format of ['ndjson', 'csv', 'json'] as const) {
    const opened = await dynamicExport(server.runtime.ctx.db, principal, 'DE-Transitions', { queryBuilder: {} }, format, Date.now() + 30_000);
    try {
      assert.equal(await exportConnections(), 1, `${format}: the export holds its connection while it is open`);
    } finally {
      opened.stream.destroy();
    }
    // The connection is closed (PostgreSQL rolls back): its backend leaves pg_stat_activity shortly after.
    let left = await exportConnections();
    for (let i = 0; i < 50 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await exportConnections();
    }
    assert.equal(left, 0, `${format}: released`);
  }
});
