// Shared pieces of the benchmarks: a throwaway embedded PostgreSQL, a server child process, medians.
import { type ChildProcess, spawn } from 'node:child_process';
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

export function runCli(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
): Promise<{ child: ChildProcess; baseUrl: string; logFile: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `atrium-bench-server-${port}.log`);
  const out = await open(logFile, 'w');
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', out.fd, 'inherit'],
  });
  await out.close();
  let exited = false;
  child.on('exit', () => (exited = true));
  for (;;) {
    const text = await readFile(logFile, 'utf8');
    if (text.includes('Atrium listening on')) break;
    if (exited) throw new Error(`server exited: ${text}`);
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
