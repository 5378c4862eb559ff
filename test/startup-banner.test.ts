// `atrium serve` keeps stdout machine-readable: with LOG_FORMAT=text (the default) the startup banner and
// the shutdown message go to stderr; with LOG_FORMAT=json they are JSON log lines like every other one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Serves on a free port until the banner shows, requests /health/live, stops with SIGTERM; answers both streams. */
async function serveOnce(logFormat: 'text' | 'json' | undefined): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const database = await createTestDatabase();
  const dataDir = path.join(os.tmpdir(), `atrium-banner-${randomBytes(4).toString('hex')}`);
  cleanups.push(async () => {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: root,
    env: {
      ...childEnv(),
      DATABASE_URL: database.connectionString,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
      ...(logFormat ? { LOG_FORMAT: logFormat } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // 'close', not 'exit': the last output may still be in the pipes when the process exits.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    const listening = () => /Atrium listening on (http:\/\/[\d.:]+)/.exec(stdout + stderr);
    let address = listening();
    for (; address === null; address = listening()) {
      if (child.exitCode !== null) throw new Error(`server exited early:\n${stdout}\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`server did not start:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await fetch(`${address[1]}/health/live`)).status, 200);
  } finally {
    child.kill('SIGTERM');
  }
  const code = await exited;
  return { stdout, stderr, code };
}

/** The test runner marks its own children (NODE_TEST_CONTEXT); the server is not one of them. */
function childEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return env;
}

function jsonLines(text: string): Record<string, any>[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return assert.fail(`stdout holds a line that is not JSON: ${line}`);
      }
    });
}

test('LOG_FORMAT=text (default): the banner goes to stderr, stdout holds only JSON lines', async () => {
  const run = await serveOnce(undefined);
  assert.equal(run.code, 0);
  assert.match(run.stderr, /Atrium listening on http:\/\/127\.0\.0\.1:\d+ \(role all\)/);
  assert.match(run.stderr, /SIGTERM: shutting down/);
  const lines = jsonLines(run.stdout);
  assert.ok(
    lines.some((l) => l.msg === 'request' && l.route === '/health/live'),
    'the request line is on stdout',
  );
});

test('LOG_FORMAT=json: the banner is a JSON log line on stdout', async () => {
  const run = await serveOnce('json');
  assert.equal(run.code, 0);
  const lines = jsonLines(run.stdout);
  const banner = lines.find((l) => /^Atrium listening on http:\/\/127\.0\.0\.1:\d+ \(role all\)$/.test(l.msg));
  assert.ok(banner, 'the banner is a log line');
  assert.equal(banner.component, 'startup');
  assert.equal(banner.level, 30);
  assert.ok(lines.some((l) => l.component === 'startup' && /SIGTERM: shutting down/.test(l.msg)));
  assert.doesNotMatch(run.stderr, /Atrium listening/);
});
