// Several processes on one database (issue #19), with real parts: a PostgreSQL primary and a streaming
// replica made from it, an S3-compatible server (s3rver), two API processes and two workers started
// together on a fresh database (so their migrations race for the lock). Load goes through both APIs.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import S3rver from 's3rver';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { ReadReplicas } from '../src/platform/db/replicas.ts';
import { createLogger } from '../src/platform/log.ts';
import { ADMIN_TOKEN } from './helpers.ts';
import { type ReplicatedCluster, startReplicatedCluster } from './replica.ts';
import { DELIVERABLE_TYPE, type Receiver, startReceiver } from './webhooks-helpers.ts';

interface Proc {
  name: string;
  child: ChildProcess;
  /** http://127.0.0.1:port of an API process. */
  url: string;
  /** Its log lines (pino JSON on stdout). */
  log: string[];
}

const SECRET_KEY = 'b'.repeat(64);
const RATE_PER_MINUTE = 1200;
let cluster: ReplicatedCluster;
let s3: S3rver;
let dir: string;
let receiver: Receiver;
let primary: pg.Pool;
const procs: Proc[] = [];
let apiA: Proc;
let apiB: Proc;
let tenantId: string;
let main: Record<string, string>;
let everyMinute: { id: string; firstFire: string; createdAt: number };

function spawnAtrium(name: string, env: Record<string, string>, s3Url: string): Promise<Proc> {
  const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../src/main.ts'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: cluster.primaryUrl,
      DATABASE_READ_URL: cluster.replicaUrl,
      ATRIUM_SECRET_KEY: SECRET_KEY,
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      ATRIUM_EXPORTS_URL: 's3://exports/atrium',
      AWS_ENDPOINT_URL_S3: s3Url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      ATRIUM_EXPORTS_DIR: path.join(dir, `exports-${name}`),
      DATA_DIR: path.join(dir, `data-${name}`),
      ATRIUM_RATE_LIMIT_PER_MINUTE: String(RATE_PER_MINUTE),
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_READ_MAX_LAG: '30s',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'text',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc: Proc = { name, child, url: '', log: [] };
  procs.push(proc);
  child.stdout?.setEncoding('utf8').on('data', (d: string) => proc.log.push(...d.split('\n').filter(Boolean)));
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const listening = /Atrium listening on (http:\/\/\S+)/.exec(stderr);
      if (listening && !proc.url) {
        proc.url = listening[1];
        resolve(proc);
      } else if (/Atrium worker running/.test(stderr)) resolve(proc);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}): ${stderr}\n${proc.log.join('\n')}`)));
  });
}

async function call(
  proc: Proc,
  method: string,
  url: string,
  headers: Record<string, string>,
  json?: unknown,
): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${proc.url}${url}`, {
    method,
    headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, text };
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const appHeaders = (a: Record<string, string>) => ({ 'x-apptenant': tenantId, 'x-appid': a.appId, 'x-appsecret': a.appSecret });

async function newApp(name: string): Promise<Record<string, string>> {
  const res = await call(apiA, 'POST', `/admin/tenants/${tenantId}/apps`, admin, { name, roles: ['Administrator'] });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-scale-out-'));
  cluster = await startReplicatedCluster('atrium');
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: path.join(dir, 's3'), configureBuckets: [{ name: 'exports', configs: [] }] });
  const { port } = await s3.run();
  receiver = await startReceiver();
  primary = new pg.Pool({ connectionString: cluster.primaryUrl, max: 2 });
  // Idle clients ended by another test's process kill or by the teardown (57P01) are not failures.
  primary.on('error', () => {});
  // All four at once on an empty database: their migrations meet at the advisory lock.
  const s3Url = `http://127.0.0.1:${port}`;
  [apiA, apiB] = await Promise.all([
    spawnAtrium('api-a', { ATRIUM_ROLE: 'api' }, s3Url),
    spawnAtrium('api-b', { ATRIUM_ROLE: 'api' }, s3Url),
    spawnAtrium('worker-1', { ATRIUM_ROLE: 'worker' }, s3Url),
    spawnAtrium('worker-2', { ATRIUM_ROLE: 'worker' }, s3Url),
  ]);
  const created = await call(apiA, 'POST', '/admin/tenants', admin, { name: 'Scale Agency' });
  assert.equal(created.status, 201, created.text);
  tenantId = created.body.tenantId;
  main = created.body;
  // Made first, so that its first fire time has come by the time the other tests are done.
  const schedule = await call(apiA, 'POST', '/api/v3/analytics/schedules', appHeaders(main), EVERY_MINUTE);
  assert.equal(schedule.status, 201, schedule.text);
  everyMinute = { id: schedule.body.id, firstFire: schedule.body.nextRunsUtc[0], createdAt: Date.now() };
});

const EVERY_MINUTE = { Name: 'every minute', Query: 'DE-Jobs', Format: 'csv', CronExpression: '* * * * *', queryBuilder: { fields: ['JobId', 'Job'] } };

after(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => (p.child.exitCode === null && p.child.signalCode === null ? new Promise((r) => p.child.once('exit', r)) : null)));
  await primary?.end();
  await receiver?.close();
  await s3?.close();
  await cluster?.close();
  await rm(dir, { recursive: true, force: true });
});

test('four processes started together migrated once', async () => {
  const { rows } = await primary.query<{ n: number }>(`select count(*)::int as n from kysely_migration where name = '0018_scale_out'`);
  assert.equal(rows[0].n, 1);
});

test('Data Extraction pages from both API processes read from the replica', async () => {
  const h = appHeaders(main);
  for (const api of [apiA, apiB]) {
    const res = await call(api, 'POST', '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', { ...h }, { queryBuilder: { skip: 0, take: 5 } });
    assert.equal(res.status, 200, res.text);
  }
  const replica = new pg.Client({ connectionString: cluster.replicaUrl });
  await replica.connect();
  try {
    // Connections of the read pools (application_name atrium-read) exist only where reads went to a replica.
    const { rows } = await replica.query<{ n: number }>(
      `select count(distinct client_port)::int as n from pg_stat_activity where datname = 'atrium' and application_name = 'atrium-read'`,
    );
    assert.ok(rows[0].n >= 2, `DE reads of both API processes on the replica (found ${rows[0].n})`);
  } finally {
    await replica.end();
  }
  const onPrimary = await primary.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name = 'atrium-read'`);
  assert.equal(onPrimary.rows[0].n, 0, 'no read pool on the primary while the replica serves');
  // Kept for the end: the other tests' DE reads would then all go to the primary.
});

test('a rotated app secret is refused by both API processes within a second', async () => {
  const app = await newApp('rotating');
  const old = appHeaders(app);
  for (const api of [apiA, apiB]) assert.equal((await call(api, 'GET', '/api/webhook-subscriptions', old)).status, 200);
  const rotated = await call(apiA, 'POST', `/admin/tenants/${tenantId}/apps/${app.appId}/rotate`, admin);
  assert.equal(rotated.status, 200, rotated.text);
  const at = Date.now();
  for (const api of [apiA, apiB]) {
    let status = 200;
    while (status === 200 && Date.now() - at < 1000) status = (await call(api, 'GET', '/api/webhook-subscriptions', old)).status;
    assert.equal(status, 401, `${api.name} still takes the old secret ${Date.now() - at} ms after the rotation`);
    assert.equal((await call(api, 'GET', '/api/webhook-subscriptions', appHeaders(rotated.body))).status, 200);
  }
});

test('the rate limit holds across both API processes', async () => {
  const h = appHeaders(await newApp('limited'));
  const started = Date.now();
  let next = 0;
  const statuses: Record<string, number[]> = { [apiA.name]: [], [apiB.name]: [] };
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      while (next < 500) {
        const api = next++ % 2 === 0 ? apiA : apiB;
        const res = await fetch(`${api.url}/api/webhook-subscriptions`, { headers: h });
        await res.arrayBuffer();
        statuses[api.name].push(res.status);
        if (res.status === 429) assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const passed = Object.values(statuses)
    .flat()
    .filter((s) => s === 200).length;
  // A bucket of ten seconds' worth (200) refilled at 20/s: per-process buckets would let about twice that through.
  const allowed = RATE_PER_MINUTE / 6 + (RATE_PER_MINUTE / 60) * seconds;
  assert.ok(passed <= allowed + 1, `${passed} passed in ${seconds.toFixed(1)} s; the shared bucket allows ${allowed.toFixed(0)}`);
  assert.ok(passed >= RATE_PER_MINUTE / 6 - 20, `${passed} passed: the bucket's burst should be available`);
  for (const [name, s] of Object.entries(statuses)) assert.ok(s.includes(429), `${name} refused some`);
});

test('a file written by a worker downloads from either API process (object storage)', async () => {
  const h = appHeaders(main);
  const created = await call(apiA, 'POST', '/api/v3/analytics/schedules', h, {
    Name: 'nightly',
    Query: 'DE-Jobs',
    Format: 'csv',
    CronExpression: '0 3 * * *',
    queryBuilder: { fields: ['JobId', 'Job'] },
  });
  assert.equal(created.status, 201, created.text);
  const run = await call(apiB, 'POST', `/api/v3/analytics/schedules/${created.body.id}/run?wait=20`, h);
  assert.equal(run.status, 200, run.text);
  assert.equal(run.body.status, 'Succeeded', run.text);
  const bodies = [];
  for (const api of [apiA, apiB]) {
    const file = await call(api, 'GET', `/api/v3/analytics/schedules/${created.body.id}/runs/${run.body.id}/file`, h);
    assert.equal(file.status, 200, file.text);
    assert.match(file.text, /^JobId,Job/);
    bodies.push(file.text);
  }
  assert.equal(bodies[0], bodies[1]);
  assert.ok(existsSync(path.join(dir, 's3', 'exports')), 'the bucket holds the files');
  for (const p of procs) assert.ok(!existsSync(path.join(dir, `exports-${p.name}`, tenantId)), `${p.name} wrote no local file`);
});

test('killing an API process mid-load loses no accepted write; webhooks arrive once each', async () => {
  const h = appHeaders(main);
  const sub = await call(apiA, 'POST', '/api/webhook-subscriptions', h, {
    Name: 'load',
    Active: true,
    ActionType: 'Ping',
    DocumentType: DELIVERABLE_TYPE,
    Url: `${receiver.url}/hook`,
  });
  assert.equal(sub.status, 201, sub.text);
  const accepted: string[] = [];
  let next = 0;
  const total = 150;
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < total) {
        const i = next++;
        if (i === 60) apiB.child.kill('SIGKILL');
        const api = i % 2 === 0 ? apiA : apiB;
        const documentId = crypto.randomUUID();
        const res = await call(api, 'POST', '/api/v3/events', h, { actionType: 'Ping', documentType: DELIVERABLE_TYPE, documentId, detail: { i } }).catch(
          () => null,
        );
        if (res?.status === 201) accepted.push(documentId);
      }
    }),
  );
  assert.ok(accepted.length >= total / 2, `accepted ${accepted.length}`);
  const stored = await primary.query<{ document_id: string }>(`select document_id::text from events where document_id = any($1::uuid[])`, [accepted]);
  assert.equal(new Set(stored.rows.map((r) => r.document_id)).size, accepted.length, 'every accepted write is stored');
  const until = Date.now() + 20_000;
  const delivered = () => receiver.received.map((r) => r.payload?.document?.id as string);
  while (Date.now() < until && !accepted.every((id) => delivered().includes(id))) await sleep(50);
  const ids = delivered();
  for (const id of accepted) assert.ok(ids.includes(id), `event of ${id} delivered`);
  await sleep(500);
  const webhookIds = receiver.received.map((r) => r.headers['webhook-id']);
  assert.equal(new Set(webhookIds).size, webhookIds.length, 'no webhook delivered twice');
  assert.equal(new Set(delivered()).size, delivered().length, 'no event delivered twice');
});

test('each fire time of a schedule runs once with two workers', { timeout: 120_000 }, async () => {
  const h = appHeaders(main);
  const runsUrl = `/api/v3/analytics/schedules/${everyMinute.id}/runs`;
  const runs = async () => (await call(apiA, 'GET', runsUrl, h)).body as any[];
  // The first fire time plus two passes of the workers' cron checks (every 5 s).
  const until = Math.max(new Date(everyMinute.firstFire).getTime() + 15_000, Date.now());
  while (Date.now() < until && !(await runs()).some((r) => r.status === 'Succeeded')) await sleep(500);
  const off = await call(apiA, 'PUT', `/api/v3/analytics/schedules/${everyMinute.id}`, h, { ...EVERY_MINUTE, Active: false });
  assert.equal(off.status, 200, off.text);
  const { rows } = await primary.query<{ fire: Date; n: number }>(
    `select fire_time_utc as fire, count(*)::int as n from extraction_schedule_runs where schedule_id = $1 group by 1 order by 1`,
    [everyMinute.id],
  );
  assert.ok(rows.length >= 1, 'the schedule fired');
  assert.equal(rows[0].fire.toISOString(), new Date(everyMinute.firstFire).toISOString());
  for (const r of rows) assert.equal(r.n, 1, `one run for ${r.fire.toISOString()}`);
  const executed = await primary.query<{ n: number }>(`select count(*)::int as n from events where document_id = $1 and action_type = 'Executed'`, [
    everyMinute.id,
  ]);
  const finished = (await runs()).filter((r) => r.status !== 'Running').length;
  assert.equal(executed.rows[0].n, finished, 'one Executed event per finished run');
});

test('a replica lagging past ATRIUM_READ_MAX_LAG is skipped for the primary until it catches up', async () => {
  const lines: string[] = [];
  const log = createLogger({ logLevel: 'info' }, { write: (l: string) => lines.push(l) });
  const db = new DatabaseHandle(cluster.primaryUrl, { poolSize: 1, readLanes: 1 });
  const replicas = new ReadReplicas(db, [cluster.replicaUrl], { maxLagMs: 1000, statementTimeoutMs: 5000, log });
  db.useReplicas(replicas);
  const replica = new pg.Client({ connectionString: cluster.replicaUrl });
  await replica.connect();
  const where = () => db.onReplica(async (on) => (on === db ? 'primary' : 'replica'));
  try {
    await replicas.start();
    assert.equal(await where(), 'replica');
    await replica.query('select pg_wal_replay_pause()');
    await primary.query(`insert into events (tenant_id, action_type, document_type, detail) values ($1, 'Lag', 'Deliverable', '{}')`, [tenantId]);
    await sleep(1500);
    await replicas.probe();
    assert.equal(await where(), 'primary');
    assert.ok(
      lines.some((l) => /read replica skipped: it lags more than ATRIUM_READ_MAX_LAG/.test(l)),
      lines.join('\n'),
    );
    await replica.query('select pg_wal_replay_resume()');
    const until = Date.now() + 5000;
    while (Date.now() < until && (await where()) !== 'replica') await replicas.probe();
    assert.equal(await where(), 'replica');
  } finally {
    await replica.query('select pg_wal_replay_resume()').catch(() => {});
    await replica.end();
    await db.close();
  }
});

test('reads fall back to the primary when the replica stops, with a log line', async () => {
  await cluster.stopReplica();
  const h = appHeaders(main);
  const res = await call(apiA, 'POST', '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', h, { queryBuilder: { skip: 0, take: 5 } });
  assert.equal(res.status, 200, res.text);
  const until = Date.now() + 5000;
  while (Date.now() < until && !apiA.log.some((l) => /read replica skipped/.test(l))) await sleep(50);
  assert.ok(
    apiA.log.some((l) => /read replica skipped/.test(l)),
    apiA.log.slice(-5).join('\n'),
  );
});
