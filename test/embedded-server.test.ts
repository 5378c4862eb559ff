// The server as a user runs it (`node src/main.ts serve`) on its own embedded PostgreSQL: first start
// on an empty data dir, graceful restart, and restart after kill -9 of the server process.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { removeClusterOf } from '../src/platform/db/clusters.ts';
import { freePort } from '../src/platform/db/embedded-postgres.ts';

const root = path.resolve(import.meta.dirname, '..');
let dataDir: string;
let port: number;
const started: Running[] = [];

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServer(): Promise<Running> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '', ATRIUM_SECRET_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  started.push({ child, output: () => out, exited });
  const deadline = Date.now() + 180_000;
  while (!out.includes('Atrium listening on')) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => out, exited };
}

const get = async (p: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers });
  return { status: res.status, body: await res.json() };
};

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-embedded-'));
  await chmod(dataDir, 0o755);
  port = await freePort();
});
after(async () => {
  // A server left running by a failed assertion would keep its cluster alive (and undeletable).
  for (const s of started) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
  await removeClusterOf(path.join(dataDir, 'pg'));
  await rm(dataDir, { recursive: true, force: true });
});

test('first start, graceful restart, restart after kill -9', async () => {
  // First start: migrates, creates the demo tenant, prints its credentials and a curl.
  const first = await startServer();
  assert.match(first.output(), /X-AppSecret: /);
  assert.match(first.output(), /curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/v3\/analytics\/named-query\/DE-Jobs\/dynamic-execute/);
  const credsFile = path.join(dataDir, 'demo-credentials.json');
  assert.equal(statSync(credsFile).mode & 0o777, 0o600);
  const creds = JSON.parse(await readFile(credsFile, 'utf8'));
  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  assert.equal((await get('/health/ready')).status, 200);
  assert.equal((await get('/api/usertypes/name?name=Temporary', headers)).status, 200);
  // The demo tenant is `demo`, and its base URL takes the printed login with no X-AppTenant.
  assert.equal(creds.slug, 'demo');
  assert.equal(creds.baseUrl, `http://127.0.0.1:${port}/t/demo`);
  const login = await fetch(`${creds.baseUrl}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ UserName: creds.username, Password: creds.password }),
  });
  assert.equal(login.status, 200);
  assert.equal((await login.json()).UserId, creds.userId);

  // The first start's demo load is one progress line and one summary, not a line per table.
  assert.match(first.output(), /Demo data loaded: [\d,]+ rows in \d+ tables, [\d.]+ s/);
  assert.doesNotMatch(first.output(), /^\w+: \d+ rows in \d+ ms$/m, 'no per-table load figures');
  const startLines = first.output().slice(0, first.output().indexOf('Atrium listening on')).split('\n');
  assert.ok(startLines.length <= 25, `the first start prints ${startLines.length} lines:\n${first.output()}`);

  // SIGTERM: drains, stops workers and PostgreSQL, exits 0.
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0, first.output());
  assert.match(first.output(), /shutting down/);
  assert.equal(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), false, 'PostgreSQL stopped with the server');

  // `atrium tenants list` in another shell (no PORT): base URLs on the port the server listened on, not 8080.
  const { PORT: _port, ...cliEnv } = process.env;
  const listed = spawnSync(process.execPath, ['src/main.ts', 'tenants', 'list', '--json'], {
    cwd: root,
    env: { ...cliEnv, DATA_DIR: dataDir, DATABASE_URL: '', ATRIUM_SECRET_KEY: '', ATRIUM_PUBLIC_URL: '', LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(
    JSON.parse(listed.stdout).map((t: { baseUrl: string }) => t.baseUrl),
    [`http://127.0.0.1:${port}/t/demo`],
  );

  // Restart: the same tenant and credentials, no second demo tenant.
  const second = await startServer();
  assert.doesNotMatch(second.output(), /Creating the "Demo Agency"/);
  assert.equal((await get('/api/usertypes/name?name=Temporary', headers)).status, 200);

  // kill -9 leaves PostgreSQL orphaned; the next start stops it and starts cleanly.
  second.child.kill('SIGKILL');
  await second.exited;
  assert.ok(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'the orphaned postmaster is still there');
  const third = await startServer();
  assert.equal((await get('/health/ready')).status, 200);
  assert.equal((await get('/api/usertypes/name?name=Temporary', headers)).status, 200);
  third.child.kill('SIGINT');
  assert.equal(await third.exited, 0, third.output());
});
