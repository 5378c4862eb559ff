// Hostile tenant, through the user feed (issue 26, item 7): a server started with `npm start`'s heap flags
// (128 MB old space, default limits) reads files a tenant drops on a real OpenSSH server. A CSV with one
// 5 MB quoted cell, a 100 MB file of 800,500 rows, and a file under the size limit with more rows than the
// row limit each fail alone with their reason, and the next file of the same run is processed. Throughout,
// /health/live answers within 1 s (probed concurrently), the process stays alive and its RSS under RSS_BOUND_MB.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_TOKEN, appHeaders, createTestDatabase, type TestServer } from '../helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from '../sftp-server.ts';
import { configureFeed, csv, type FeedFolders, type FeedRow, HEADER, list, put, readJson } from '../user-feed-helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');
/** The heap flags of `npm start`: a hostile file must be refused within them, not by a larger heap. */
const NODE_FLAGS = ['--max-semi-space-size=8', '--max-old-space-size=128'];
/** The server's resident memory stays under this through every test (measured: see docs/operations.md). */
const RSS_BOUND_MB = 400;
const LIVE_WITHIN_MS = 1000;

let child: ChildProcess;
let baseUrl = '';
let dataDir: string;
let dropDatabase: () => Promise<void>;
let sftp: SftpServer;
let h: Record<string, string>;
let folders: FeedFolders;
let base: FeedRow;
let output = '';
let peakRssMb = 0;
let slowestLiveMs = 0;
let probing = true;
let probe: Promise<void>;

function rssMb(): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

const request: TestServer['request'] = async (method, url, opts = {}) => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(`${baseUrl}${url}`, { method, headers, body, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, body: parsed };
};

before(async () => {
  assert.ok(existsSync(SSHD), 'openssh-server is installed (.ci/run installs it)');
  sftp = await startSftpServer();
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-hostile-feed-'));
  child = spawn(process.execPath, [...NODE_FLAGS, 'src/main.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: database.connectionString,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
      ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  for (let i = 0; i < 1200 && !baseUrl; i++) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    baseUrl = /Atrium listening on (http:\/\/[\d.:]+)/.exec(output)?.[1] ?? '';
    await sleep(100);
  }
  assert.ok(baseUrl, `the server started:\n${output}`);
  const created = await request('POST', '/admin/tenants', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, json: { name: 'Hostile Feed Agency' } });
  assert.equal(created.status, 201, created.text);
  const tenant = created.body as { tenantId: string; appId: string; appSecret: string; companyCode: string; departmentExternalId: string };
  h = appHeaders(tenant);
  folders = await configureFeed({ request } as TestServer, h, sftp, 'hostile');
  base = {
    companyCode: tenant.companyCode,
    departmentid: tenant.departmentExternalId,
    userTypologyGroup: 'Ops',
    resourceType: 'Clerk',
    userType: 'Regular/Permanent',
    isActive: 'true',
  };
  // Liveness and memory, sampled all along, each probe bounded.
  probe = (async () => {
    while (probing) {
      const t = Date.now();
      const res = await fetch(`${baseUrl}/health/live`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      const ms = Date.now() - t;
      if (probing) {
        slowestLiveMs = Math.max(slowestLiveMs, res?.status === 200 ? ms : Number.POSITIVE_INFINITY);
        peakRssMb = Math.max(peakRssMb, rssMb());
      }
      await sleep(100);
    }
  })();
});

after(async () => {
  probing = false;
  await probe;
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  await dropDatabase?.();
  await rm(dataDir, { recursive: true, force: true });
  await sftp?.close();
});

const row = (externalId: string): FeedRow => ({ ...base, externalId, name: `User ${externalId}`, username: externalId.toLowerCase() });

async function run(query = '') {
  const res = await request('POST', `/api/v3/user-feed/run${query}`, { headers: h }).catch((err) => {
    throw new Error(`${err.message}; the server said:\n${output.slice(-3000)}`);
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { status: string; error: string | null; files: Record<string, any>[] };
}

function assertHeld(what: string) {
  assert.equal(child.exitCode, null, `the server is alive after ${what}:\n${output.slice(-2000)}`);
  assert.ok(slowestLiveMs < LIVE_WITHIN_MS, `/health/live answered within ${LIVE_WITHIN_MS} ms during ${what} (slowest ${slowestLiveMs} ms)`);
  assert.ok(peakRssMb < RSS_BOUND_MB, `RSS stayed under ${RSS_BOUND_MB} MB during ${what} (peak ${peakRssMb.toFixed(0)} MB)`);
  process.stderr.write(`# ${what}: slowest /health/live ${slowestLiveMs} ms, peak RSS ${peakRssMb.toFixed(0)} MB\n`);
}

/** A file of `rows` data rows written as a stream (never held in memory here either). */
async function writeRows(name: string, rows: number, line: (i: number) => string): Promise<void> {
  const out = createWriteStream(path.join(folders.data, name));
  out.write(`${HEADER.join(',')}\r\n`);
  for (let i = 0; i < rows; i++) if (!out.write(line(i))) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

const plainLine = (i: number, pad: number) =>
  `${HEADER.map((f) => (f === 'externalId' ? `H${i}` : f === 'username' ? `h${i}` : f === 'isActive' ? 'true' : (base[f] ?? ''))).join(',')}${' '.repeat(pad)}\r\n`;

test('a CSV with one 5 MB quoted cell fails alone with its reason; the next file of the run is processed', async () => {
  const cell = `"${'a'.repeat(5 * 1024 * 1024)}"`;
  const header = HEADER.join(',');
  const line = HEADER.map((f) => (f === 'name' ? cell : f === 'externalId' ? 'BIG1' : (row('BIG1')[f] ?? ''))).join(',');
  await put(folders.data, 'AD_UserAccounts_20250401000001.csv', `${header}\r\n${line}\r\n`);
  await put(folders.data, 'AD_UserAccounts_20250401000002.csv', csv([row('N001')]));
  const r = await run();
  assert.deepEqual(
    r.files.map((f) => f.status),
    ['Failed', 'Succeeded'],
  );
  assert.match(r.files[0].message, /a record at line \d+ is larger than 65,536 bytes/);
  assert.equal((await readJson(folders.failure, 'SR_UserAccounts_20250401000001.json')).data_results.status, 'FAILED');
  assert.equal(r.files[1].created, 1);
  assertHeld('the 5 MB cell');
});

test('a 100 MB file of 800,500 rows: the dry run and the run refuse it unread by its size; the next file is processed', async () => {
  // 800,500 rows of 131 bytes = 104.9 MB.
  const first = Buffer.byteLength(plainLine(0, 0));
  await writeRows('AD_UserAccounts_20250402000001.csv', 800_500, (i) => plainLine(i, Math.max(0, 131 - first - String(i).length * 2)));
  await put(folders.data, 'AD_UserAccounts_20250402000002.csv', csv([row('N002')]));
  const dry = await run('?dryRun=true');
  assert.equal(dry.files[0].status, 'Failed');
  assert.match(dry.files[0].message, /the file is 10\d,\d{3},\d{3} bytes; the limit is 8,388,608 \(ATRIUM_USER_FEED_MAX_FILE_BYTES\)/);
  assert.equal(dry.files[1].status, 'Succeeded');
  const r = await run();
  assert.equal(r.files[0].status, 'Failed');
  assert.match(r.error ?? '', /1 of 2 files failed \(AD_UserAccounts_20250402000001\.csv: the file is 10\d,\d{3},\d{3} bytes; the limit is 8,388,608/);
  assert.ok((await list(folders.failure)).includes('AD_UserAccounts_20250402000001.csv'), 'moved to the failure folder');
  assert.equal(r.files[1].created, 1, 'the next file of the same run was processed');
  assertHeld('the 100 MB file');
});

test('a 7 MB file of 25,000 rows, under the size limit, is read as a stream and refused at row 20,001', async () => {
  await writeRows('AD_UserAccounts_20250403000001.csv', 25_000, (i) => plainLine(100_000 + i, 120));
  await put(folders.data, 'AD_UserAccounts_20250403000002.csv', csv([row('N003')]));
  const r = await run();
  assert.equal(r.files[0].status, 'Failed');
  assert.match(r.files[0].message, /the file has more than 20,000 rows \(ATRIUM_USER_FEED_MAX_ROWS\)/);
  assert.equal(r.files[1].status, 'Succeeded');
  assertHeld('the 25,000-row file');
});
