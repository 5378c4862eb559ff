// A worker process killed (SIGKILL) in the middle of a user-feed file: the rows it committed stay with
// their outcomes, the row in flight rolls back, the file stays in the Data directory, and a re-run finishes
// the file. The end state (users, their events, the file's folder and results) is that of one clean run of
// the same file on another tenant.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { appHeaders, spawnWorker, startTestServer, type TestServer } from './helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from './sftp-server.ts';
import { configureFeed, csv, type FeedRow, list, put, readJson } from './user-feed-helpers.ts';

let server: TestServer;
let sftp: SftpServer;
let db: pg.Client;
const children = new Set<ChildProcess>();

before(async () => {
  assert.ok(existsSync(SSHD), 'openssh-server is installed (.ci/run installs it)');
  sftp = await startSftpServer();
  // The API process only: the scheduled run is the spawned worker's.
  server = await startTestServer({ ATRIUM_ROLE: 'api', ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await db?.end();
  await server?.close();
  await sftp?.close();
});

const startWorker = (): ChildProcess => spawnWorker(server, children, { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });

const FILE = 'AD_UserAccounts_20250201000000.csv';

async function tenantWithFile(name: string, rows: (base: FeedRow) => FeedRow[]) {
  const tenant = await server.createTenant(name);
  const h = appHeaders(tenant);
  const folders = await configureFeed(server, h, sftp, name.replace(/\W/g, ''));
  const base = {
    companyCode: tenant.companyCode,
    departmentid: tenant.departmentExternalId,
    userTypologyGroup: 'Ops',
    userType: 'Regular/Permanent',
    isActive: 'true',
  };
  await put(folders.data, FILE, csv(rows(base)));
  return { tenant, h, folders };
}

/** What a run leaves behind, without ids and times: each user's fields and the events each user got. */
async function endState(tenantId: string) {
  const users = await db.query(
    `select u.external_id, u.user_name, u.name, u.is_active, u.responsible_id is not null as has_manager, t.external_id as typology,
       (select array_agg(e.action_type order by e.seq) from events e where e.tenant_id = u.tenant_id and e.document_id = u.id) as events
     from users u join typologies t on t.id = u.typology_id where u.tenant_id = $1 and u.external_id like 'K%' order by u.external_id`,
    [tenantId],
  );
  const outcomes = await db.query(
    `select r.outcome, count(*)::int as n from user_feed_rows r join user_feed_files f on f.id = r.file_id where f.tenant_id = $1 group by 1 order by 1`,
    [tenantId],
  );
  return { users: users.rows, outcomes: outcomes.rows };
}

test('kill -9 mid-file: the orphaned run is swept to Failed by the next worker; a re-run gives the same state as one clean run', async () => {
  const N = 300;
  const rows = (base: FeedRow) =>
    Array.from({ length: N }, (_, i) => {
      const id = `K${String(i).padStart(4, '0')}`;
      // Every tenth row reports to the first user; freelancers wait for the second pass.
      return {
        ...base,
        externalId: id,
        username: id.toLowerCase(),
        name: `Crash ${id}`,
        resourceType: `Role ${i % 7}`,
        responsible: i % 10 === 9 ? 'K0000' : '',
        employeeClass: i % 50 === 0 ? 'Freelancer' : '',
      };
    });
  const crashed = await tenantWithFile('Crash Agency', rows);
  const clean = await tenantWithFile('Clean Agency', rows);

  // The feed of the crashed tenant fires now on the worker.
  const on = await server.request('PUT', '/api/v3/user-feed', { headers: crashed.h, json: { enabled: true } });
  assert.equal(on.status, 200, on.text);
  await db.query(`update automations set next_fire_utc = now() where id = $1`, [on.body.automationId]);
  const worker = startWorker();
  let done = 0;
  // Killed as soon as the first batch of rows (100) has committed.
  for (let i = 0; i < 1200 && done === 0; i++) {
    await sleep(50);
    done = (await db.query('select count(*)::int as n from user_feed_rows where tenant_id = $1', [crashed.tenant.tenantId])).rows[0].n;
  }
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  done = (await db.query('select count(*)::int as n from user_feed_rows where tenant_id = $1', [crashed.tenant.tenantId])).rows[0].n;
  assert.ok(done > 0 && done < N, `killed mid-file (${done} of ${N} rows done)`);
  assert.deepEqual(await list(crashed.folders.data), [FILE], 'the file moves only after all rows are done');

  // The killed run stays Running until a worker sweeps it. Its last heartbeat is set back past the stale age
  // (as if a minute had gone by), then a fresh worker's start-up sweep marks it Failed with the reason.
  const orphan = await db.query(`select id from user_feed_runs where tenant_id = $1 and status = 'Running'`, [crashed.tenant.tenantId]);
  assert.equal(orphan.rows.length, 1, 'the killed run was left Running');
  await db.query(`update user_feed_runs set heartbeat_utc = now() - interval '2 minutes' where id = $1`, [orphan.rows[0].id]);
  const sweeper = startWorker();
  let swept: { status: string; error: string | null } | undefined;
  for (let i = 0; i < 600 && swept?.status !== 'Failed'; i++) {
    await sleep(50);
    swept = (await db.query('select status, error from user_feed_runs where id = $1', [orphan.rows[0].id])).rows[0];
  }
  sweeper.kill('SIGKILL');
  await new Promise((resolve) => sweeper.once('exit', resolve));
  assert.equal(swept?.status, 'Failed');
  assert.match(swept?.error ?? '', /the process running it ended \(crash or restart\)/);
  const listed = await server.request('GET', `/api/v3/user-feed/runs/${orphan.rows[0].id}`, { headers: crashed.h });
  assert.equal(listed.body.status, 'Failed');
  assert.ok(listed.body.finishedOnUtc);

  const resumed = await server.request('POST', '/api/v3/user-feed/run', { headers: crashed.h });
  assert.equal(resumed.status, 200, resumed.text);
  const once = await server.request('POST', '/api/v3/user-feed/run', { headers: clean.h });
  assert.equal(once.status, 200, once.text);
  assert.equal(once.body.files[0].created, N);

  assert.deepEqual(await endState(crashed.tenant.tenantId), await endState(clean.tenant.tenantId));
  for (const t of [crashed, clean]) {
    assert.deepEqual(await list(t.folders.success), [FILE, 'SR_UserAccounts_20250201000000.json']);
    assert.equal((await readJson(t.folders.success, 'SR_UserAccounts_20250201000000.json')).data_results.status, 'SUCCEEDED');
  }
});
