// `atrium clusters list|prune` on a directory of relocated clusters: a cluster whose recorded DATA_DIR is
// gone is removed; one still in use, one with a live postmaster and one whose owner is unknown are kept.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { OWNER_MARKER } from '../src/platform/db/clusters.ts';

const root = path.resolve(import.meta.dirname, '..');
let base: string;
let clustersDir: string;

function atrium(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function fakeCluster(name: string, opts: { dataDir?: string; pid?: number }): Promise<string> {
  const dir = path.join(clustersDir, name);
  await mkdir(path.join(dir, 'base', '1'), { recursive: true });
  await writeFile(path.join(dir, 'PG_VERSION'), '18\n');
  await writeFile(path.join(dir, 'base', '1', '1259'), Buffer.alloc(64 * 1024));
  if (opts.dataDir) await writeFile(path.join(dir, OWNER_MARKER), `${opts.dataDir}\n`);
  if (opts.pid) await writeFile(path.join(dir, 'postmaster.pid'), `${opts.pid}\n${dir}\n`);
  return dir;
}

before(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'atrium-clusters-'));
  clustersDir = path.join(base, 'clusters');
  await mkdir(path.join(base, 'live', 'data'), { recursive: true });
});
after(() => rm(base, { recursive: true, force: true }));

test('list shows each cluster with its DATA_DIR and state; prune removes only the orphaned', async () => {
  const liveData = path.join(base, 'live', 'data', 'pg');
  await writeFile(liveData, ''); // stands for the symlink a DATA_DIR/pg would be
  const inUse = await fakeCluster('aaaa', { dataDir: liveData });
  const orphan = await fakeCluster('bbbb', { dataDir: path.join(base, 'removed', 'data', 'pg') });
  // Its DATA_DIR is gone too, but a live process holds postmaster.pid: never removed.
  const running = await fakeCluster('cccc', { dataDir: path.join(base, 'removed-too', 'pg'), pid: process.pid });
  const unknown = await fakeCluster('dddd', {});

  const list = await atrium('clusters', 'list', '--dir', clustersDir, '--json');
  assert.equal(list.code, 0, list.stderr);
  const listed = JSON.parse(list.stdout) as {
    clusterDir: string;
    dataDir: string | null;
    ownerExists: boolean;
    runningPid: number | null;
    orphan: boolean;
    bytes: number;
  }[];
  assert.deepEqual(
    listed.map((c) => [path.basename(c.clusterDir), c.ownerExists, c.runningPid, c.orphan]),
    [
      ['aaaa', true, null, false],
      ['bbbb', false, null, true],
      ['cccc', false, process.pid, false],
      ['dddd', false, null, false],
    ],
  );
  assert.ok(listed.every((c) => c.bytes >= 64 * 1024));
  const text = await atrium('clusters', 'list', '--dir', clustersDir);
  assert.match(text.stdout, /bbbb {2}0\.1 MB {2}DATA_DIR gone {2}.*removed\/data\/pg/);
  assert.match(text.stdout, new RegExp(`cccc .*running \\(pid ${process.pid}\\)`));
  assert.match(text.stdout, /dddd .*owner not recorded/);

  const prune = await atrium('clusters', 'prune', '--dir', clustersDir);
  assert.equal(prune.code, 0, prune.stderr);
  assert.match(prune.stdout, /removed .*bbbb/);
  assert.match(prune.stdout, /Removed 1 cluster\(s\), 0\.1 MB; kept 3\./);
  assert.equal(existsSync(orphan), false);
  for (const kept of [inUse, running, unknown]) assert.ok(existsSync(kept), kept);

  const again = await atrium('clusters', 'prune', '--dir', clustersDir, '--json');
  assert.deepEqual(JSON.parse(again.stdout).removed, []);
});

test('an empty or missing clusters directory lists nothing; an unknown subcommand is a usage error', async () => {
  const none = await atrium('clusters', 'list', '--dir', path.join(base, 'nowhere'));
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /No clusters in /);
  const bad = await atrium('clusters', 'nuke', '--dir', clustersDir);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown command "clusters nuke"/);
});
