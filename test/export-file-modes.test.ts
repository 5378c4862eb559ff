// Export files are private to the server's user: a scheduled run writes its file 0600 in 0700 directories,
// and a DATA_DIR the server creates is 0700, whatever the process umask (0 here, the most permissive).
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let base: string;
let server: TestServer;
let umask: number;

before(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'atrium-modes-'));
  umask = process.umask(0);
  server = await startTestServer({
    DATA_DIR: path.join(base, 'data', 'atrium'),
    ATRIUM_EXPORTS_DIR: path.join(base, 'exports', 'atrium'),
    // No key given: the server generates one into DATA_DIR, so it creates DATA_DIR.
    ATRIUM_SECRET_KEY: '',
  });
});
after(async () => {
  process.umask(umask);
  await server?.close();
  await rm(base, { recursive: true, force: true });
});

const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);

test('a scheduled run writes its file 0600 in 0700 directories; the created DATA_DIR is 0700', async () => {
  const tenant = await server.createTenant('Private Files Agency');
  const h = appHeaders(tenant);
  const created = await server.request('POST', '/api/v3/analytics/schedules', {
    headers: h,
    json: { Name: 'modes', Query: 'DE-Jobs', Format: 'csv', CronExpression: '5 0 * * *', queryBuilder: { fields: ['JobId'] } },
  });
  assert.equal(created.status, 201, created.text);
  const run = await server.request('POST', `/api/v3/analytics/schedules/${created.body.id}/run?wait=25`, { headers: h });
  assert.equal(run.status, 200, run.text);
  assert.equal(run.body.status, 'Succeeded', run.body.error);

  const exportsDir = path.join(base, 'exports', 'atrium');
  const file = path.join(exportsDir, tenant.tenantId, created.body.id, `${run.body.id}.csv`);
  assert.equal(mode(file), '600');
  for (const dir of [path.join(base, 'exports'), exportsDir, path.join(exportsDir, tenant.tenantId), path.dirname(file)]) assert.equal(mode(dir), '700', dir);
  const dataDir = path.join(base, 'data', 'atrium');
  assert.equal(mode(path.join(base, 'data')), '700');
  assert.equal(mode(dataDir), '700');
  assert.equal(mode(path.join(dataDir, 'secret.key')), '600');
  const download = await server.request('GET', `/api/v3/analytics/schedules/${created.body.id}/runs/${run.body.id}/file`, { headers: h });
  assert.equal(download.status, 200);
  assert.match(download.text, /^JobId\r\n/);
});
