// Exactly-once firing: an API process and two worker processes share one database; a schedule that
// fires every minute runs once per fire time (one run, one file, one Executed event),
// and a duplicated occurrence job (as a redelivery would make) still makes one run.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { QUEUE } from '../src/schedules/worker.ts';
import { type Runtime, startServer } from '../src/server.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer, workerEnv } from './helpers.ts';

const BASE = '/api/v3/analytics/schedules';
let server: TestServer;
let tenant: TenantCredentials;
const workers: Runtime[] = [];
let owner: pg.Client;

before(async () => {
  server = await startTestServer({ ATRIUM_ROLE: 'api' });
  for (let i = 0; i < 2; i++) workers.push(await startServer(loadConfig(workerEnv(server)), () => {}));
  tenant = await server.createTenant('Cron Agency', { demoData: true, scale: 0.02 });
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});

after(async () => {
  await owner?.end();
  for (const w of workers) await w.close();
  await server?.close();
});

async function runsOf(scheduleId: string) {
  return (
    await owner.query<{ id: string; fire_time_utc: Date | null; status: string; trigger: string }>(
      'select id, fire_time_utc, status, trigger from extraction_schedule_runs where schedule_id = $1 order by fire_time_utc',
      [scheduleId],
    )
  ).rows;
}

test('a schedule firing every minute runs once per fire time with two workers', { timeout: 150_000 }, async () => {
  const h = appHeaders(tenant);
  const res = await server.request('POST', BASE, {
    headers: h,
    json: { Name: 'every minute', Query: 'DE-Jobs', Format: 'csv', CronExpression: '* * * * *', queryBuilder: { fields: ['JobId', 'Job'] } },
  });
  assert.equal(res.status, 201, res.text);
  const id = res.body.id as string;
  const firstFire = new Date(res.body.nextRunsUtc[0]);
  // The first fire time, then time for a second pass of every worker's cron check (every 5 s) to have come and gone.
  const deadline = Date.now() + 120_000;
  let runs = await runsOf(id);
  while (Date.now() < deadline && !runs.some((r) => r.status === 'Succeeded')) {
    await new Promise((r) => setTimeout(r, 500));
    runs = await runsOf(id);
  }
  assert.ok(
    runs.some((r) => r.status === 'Succeeded'),
    `no scheduled run within 2 minutes: ${JSON.stringify(runs)}`,
  );
  await new Promise((r) => setTimeout(r, 8_000));
  // Stop it so that nothing fires while the counts are read.
  await server.request('PUT', `${BASE}/${id}`, {
    headers: h,
    json: { Name: 'every minute', Query: 'DE-Jobs', Format: 'csv', CronExpression: '* * * * *', Active: false, queryBuilder: { fields: ['JobId', 'Job'] } },
  });
  runs = (await runsOf(id)).filter((r) => r.status !== 'Running');
  assert.ok(runs.length >= 1);
  assert.equal(runs[0].fire_time_utc?.toISOString(), firstFire.toISOString(), 'the first run belongs to the first fire time');
  const fireTimes = runs.map((r) => r.fire_time_utc?.toISOString());
  assert.equal(new Set(fireTimes).size, fireTimes.length, 'one run per fire time');
  for (const r of runs) {
    assert.equal(r.trigger, 'schedule');
    assert.equal(r.status, 'Succeeded');
    assert.equal(r.fire_time_utc?.getUTCSeconds(), 0);
  }
  const executed = await owner.query<{ n: number }>(`select count(*)::int as n from events where document_id = $1 and action_type = 'Executed'`, [id]);
  assert.equal(executed.rows[0].n, runs.length);
  const files = readdirSync(path.join(server.runtime.ctx.config.exportsDir, tenant.tenantId, id));
  assert.equal(files.length, runs.length);
});

test('a duplicated occurrence job still makes one run', { timeout: 60_000 }, async () => {
  const h = appHeaders(tenant);
  // Fires once a year: every job sent now belongs to the same (past) fire time, 1 January 00:00 UTC.
  const res = await server.request('POST', BASE, {
    headers: h,
    json: { Name: 'yearly', Query: 'DE-Jobs', Format: 'json', CronExpression: '0 0 1 1 *', queryBuilder: { fields: ['JobId'] } },
  });
  assert.equal(res.status, 201, res.text);
  const id = res.body.id as string;
  // As if saved long ago: this year's fire time is then one of its own (it was saved before it).
  await owner.query(`update extraction_schedules set modified_on_utc = '2000-01-01' where id = $1`, [id]);
  const jobs = server.runtime.ctx.jobs;
  assert.ok(jobs);
  await Promise.all([0, 1, 2, 3].map(() => jobs.send(QUEUE, { tenantId: tenant.tenantId, scheduleId: id })));
  const deadline = Date.now() + 30_000;
  let pending = 4;
  while (Date.now() < deadline && pending > 0) {
    await new Promise((r) => setTimeout(r, 300));
    const q = await owner.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where name = $1 and data->>'scheduleId' = $2 and state in ('created', 'active', 'retry')`,
      [QUEUE, id],
    );
    pending = q.rows[0].n;
  }
  assert.equal(pending, 0, 'every job was worked');
  const runs = await runsOf(id);
  assert.equal(runs.length, 1);
  assert.equal(runs[0].fire_time_utc?.toISOString(), `${new Date().getUTCFullYear()}-01-01T00:00:00.000Z`);
  for (let i = 0; i < 100 && (await runsOf(id))[0].status === 'Running'; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await runsOf(id))[0].status, 'Succeeded');
});
