// Shared pieces of the benchmarks: a throwaway embedded PostgreSQL, a server child process, medians.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from '../src/platform/db/embedded-postgres.ts';

export const root = path.resolve(import.meta.dirname, '..');

export async function benchDatabase(name = 'atrium_bench'): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-'));
  await chmod(dir, 0o755);
  const cluster = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  const admin = new pg.Client({ connectionString: cluster.connectionString });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(cluster.connectionString);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    stop: async () => {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function runCli(args: string[], env: Record<string, string>, tree = root): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], { cwd: tree, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errOut = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (errOut += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`atrium ${args.join(' ')} failed: ${errOut}`))));
  });
}

/**
 * The server as its own process, its stdout (the request log) going to a file as it would under a
 * process manager, so the benchmark process does not pay for reading it.
 */
export async function startServerProcess(
  env: Record<string, string>,
  /** The checkout whose server runs (default this one): a benchmark may run another side by side as its baseline. */
  tree = root,
): Promise<{ child: ChildProcess; baseUrl: string; logFile: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `atrium-bench-server-${port}.log`);
  const out = await open(logFile, 'w');
  // BENCH_CPU_PROF=<dir>: each server writes a V8 CPU profile there when it stops (node --cpu-prof).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, 'src/main.ts', 'serve'], {
    cwd: tree,
    // A worker serves no API: its /health/live answers on ATRIUM_METRICS_PORT, here the port picked for it.
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env, ...(env.ATRIUM_ROLE === 'worker' ? { ATRIUM_METRICS_PORT: String(port) } : {}) },
    stdio: ['ignore', out.fd, 'inherit'],
  });
  await out.close();
  let exited = false;
  child.on('exit', () => (exited = true));
  // Ready when it answers (the banner goes to stderr or, with LOG_FORMAT=json, to the log: ask the server instead).
  for (;;) {
    const live = await fetch(`http://127.0.0.1:${port}/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (live) break;
    if (exited) throw new Error(`server exited: ${await readFile(logFile, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    logFile,
    stop: () =>
      new Promise((resolve) => {
        child.on('exit', () => rm(logFile, { force: true }).then(() => resolve()));
        child.kill('SIGTERM');
      }),
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A webhook receiver in its own process: answers 200 to every POST and notes when each payload (detail.i) arrived. */
const RECEIVER = `
import http from 'node:http';
const recv = new Map();
const now = () => performance.timeOrigin + performance.now();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET') {
      // Polls ask for the count only: serialising every time on each poll would load the receiver
      // (and so the measurement) while Atrium delivers, and not during the bare loop.
      const body = JSON.stringify(req.url === '/times' ? { count: recv.size, times: Object.fromEntries(recv) } : { count: recv.size });
      if (req.url === '/reset') recv.clear();
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    const payload = JSON.parse(Buffer.concat(chunks).toString());
    if (!recv.has(payload.detail.i)) recv.set(payload.detail.i, now());
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

export async function startReceiver(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout?.once('data', (d) => resolve(String(d).trim())));
  return { child, url: `http://127.0.0.1:${port}` };
}

export const now = (): number => performance.timeOrigin + performance.now();

export async function receiverState(url: string, what: 'count' | 'reset' | 'times' = 'count'): Promise<{ count: number; times: Record<string, number> }> {
  return (await fetch(`${url}/${what}`)).json() as Promise<{ count: number; times: Record<string, number> }>;
}

export async function waitForCount(url: string, count: number, timeoutMs = 600_000): Promise<{ count: number; times: Record<string, number> }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await receiverState(url);
    if (s.count >= count) return receiverState(url, 'times');
    if (Date.now() > until) throw new Error(`receiver got ${s.count} of ${count}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The p-th percentile (nearest rank) of xs. */
export const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/**
 * The server's memory settings as `npm start` of `tree` sets them (its package.json's start script; decisions 0035
 * and 0090): the V8 heap flags and glibc's allocator tunables, so a baseline checkout runs with its own.
 */
export function serverMemoryEnv(tree = root): { NODE_OPTIONS: string; GLIBC_TUNABLES?: string } {
  const start = String(JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8')).scripts?.start ?? '');
  const tunables = /GLIBC_TUNABLES=(\S+)/.exec(start)?.[1];
  const flags = [...start.matchAll(/--max-[a-z-]+=\d+/g)].map((m) => m[0]).join(' ');
  return { NODE_OPTIONS: flags, ...(tunables ? { GLIBC_TUNABLES: tunables } : {}) };
}

/** This checkout's (see serverMemoryEnv). */
export const SERVER_MEMORY_ENV = serverMemoryEnv();

/** The environment of a benchmarked server process: its database, a fixed key, no rate limit, quiet logs, plus `extra`. */
export const benchEnv = (databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  ATRIUM_SECRET_KEY: 'a'.repeat(64),
  ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'warn',
  ...extra,
});

/**
 * Commits one matching Ping event per transaction at `rate`/s, numbered (detail.i) from `first`, until `count`
 * are sent or stop() is called; stop() answers each event's commit time, for commit -> receiver latencies.
 */
export function pacedEvents(
  pool: pg.Pool,
  tenantId: string,
  documentType: string,
  opts: { rate: number; first: number; count?: number },
): { done: Promise<void>; stop: () => Promise<Map<number, number>> } {
  const commits = new Map<number, number>();
  const inserts: Promise<void>[] = [];
  let running = true;
  const done = (async () => {
    const start = now();
    for (let i = 0; running && (opts.count === undefined || i < opts.count); i++) {
      const wait = start + (i * 1000) / opts.rate - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const index = opts.first + i;
      inserts.push(
        pool
          .query(`insert into events (tenant_id, action_type, document_type, document_id, detail) values ($1, 'Ping', $2, gen_random_uuid(), $3)`, [
            tenantId,
            documentType,
            JSON.stringify({ i: index }),
          ])
          .then(() => {
            commits.set(index, now());
          }),
      );
    }
  })();
  return {
    done,
    stop: async () => {
      running = false;
      await done;
      await Promise.all(inserts);
      return commits;
    },
  };
}

/**
 * A tenant created by the CLI, a server process on `env`, and one active subscription of that tenant for
 * Ping events on `documentType`, delivered to `${receiverUrl}/hook`.
 */
export async function webhookBenchServer(
  env: Record<string, string>,
  receiverUrl: string,
  documentType: string,
): Promise<{ creds: Record<string, string>; server: Awaited<ReturnType<typeof startServerProcess>>; headers: Record<string, string> }> {
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env));
  const server = await startServerProcess(env);
  const headers = { 'content-type': 'application/json', 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const res = await fetch(`${server.baseUrl}/api/webhook-subscriptions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ Name: 'bench', ActionType: 'Ping', DocumentType: documentType, Url: `${receiverUrl}/hook`, Active: true }),
  });
  if (res.status !== 201) throw new Error(`subscription: ${res.status} ${await res.text()}`);
  return { creds, server, headers };
}

/** CPU seconds so far of this process's descendants, by role (exited PostgreSQL backends count in the postmaster's). */
export function cpuSeconds(roles: Record<number, string>): Record<string, number> {
  const procs = new Map<number, { ppid: number; comm: string; cpu: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      // After the command: state, ppid, …; utime, stime, cutime, cstime are fields 14–17 of the line.
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      procs.set(Number(name), { ppid: Number(fields[1]), comm: stat.slice(stat.indexOf('(') + 1, close), cpu: ticks / 100 });
    } catch {}
  }
  const out: Record<string, number> = { bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 };
  for (const [pid, p] of procs) {
    let ancestor = p.ppid;
    let role: string | undefined = roles[pid];
    while (!role && ancestor > 1) {
      if (roles[ancestor]) role = roles[ancestor];
      else if (ancestor === process.pid) role = p.comm === 'postgres' ? 'postgres' : 'other';
      ancestor = procs.get(ancestor)?.ppid ?? 0;
    }
    if (role) out[role] = (out[role] ?? 0) + p.cpu;
  }
  return out;
}

/** Busy and total CPU ticks of the whole machine so far (other developers' work included). */
export function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3] - (fields[4] ?? 0), total };
}

export const cpuDelta = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));

/**
 * A Client API bench's starting point: a new tenant on `databaseUrl`, its server process, a JSON caller
 * acting as the tenant's administrator (X-AppUser), and one commercial client (with its billing client).
 */
/**
 * `extra`: more environment, e.g. ATRIUM_ROLE=api for a benchmark of writes alone, whose events no worker in the
 * measured process dispatches (the direct side's events would otherwise be dispatched, and counted, during the
 * HTTP rounds).
 */
export async function clientApiBenchServer(databaseUrl: string, extra: Record<string, string> = {}, baselineTree?: string) {
  const env = benchEnv(databaseUrl, extra);
  // With a baseline tree (a checkout to compare with), its CLI creates the tenant and its server starts first: an
  // older tree refuses a database with migrations it does not know.
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env, baselineTree));
  const baseline = baselineTree ? await startServerProcess(env, baselineTree) : null;
  const server = await startServerProcess(env);
  const headers = {
    'content-type': 'application/json',
    'x-apptenant': creds.tenantId,
    'x-appid': creds.appId,
    'x-appsecret': creds.appSecret,
    'x-appuser': creds.userId,
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  await call('POST', '/api/billingclients', { externalId: 'C-1', companyCode: creds.companyCode, name: 'Bench Client' });
  const client = await call('POST', '/api/commercialclients', { externalId: 'C-1', name: 'Bench Client' });
  return { creds, server, baseline, headers, call, client };
}
