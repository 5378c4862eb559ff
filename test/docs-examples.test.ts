// Docs as tests (issue 27, point 12): every shell example of README.md and docs/*.md runs, in order per file,
// with bash against a fresh demo server started here (its own embedded PostgreSQL under a temporary DATA_DIR,
// loopback only). A doc defines the variables it uses ($TENANT, $BASE, ids …) in an earlier example of the same
// file; a curl answering outside 2xx fails unless its line announces the status (`# → 404`). The conventions
// are in docs/docs-examples.md.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { removeClusterOf } from '../src/platform/db/clusters.ts';
import { freePort } from '../src/platform/db/embedded-postgres.ts';

const root = path.resolve(import.meta.dirname, '..');
/** The address the docs write; curl is pointed at the test's server with --connect-to. */
const DOCS_ADDRESS = '127.0.0.1:8080';
const ADMIN_TOKEN = `docs-admin-${randomBytes(8).toString('hex')}`;
const FILE_TIMEOUT_MS = 60_000;

export interface Example {
  file: string;
  line: number;
  code: string;
  skip?: string;
}

/** Shell examples: every ```bash / ```sh / ```shell block (those that only define variables included: later ones use them). */
export function extractExamples(file: string, text: string): Example[] {
  const out: Example[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // Fences may be indented (inside a list item); the block's lines lose that indentation.
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    const indent = open[1].length;
    const code = lines
      .slice(start + 1, end)
      .map((l) => (l.slice(0, indent).trim() === '' ? l.slice(indent) : l))
      .join('\n');
    i = end;
    // A block the next example reads as a file (`-d @x.json`) says so: <!-- docs-test: file x.json -->.
    const asFile = /^\s*<!--\s*docs-test:\s*file\s+([\w.-]+)\s*-->\s*$/.exec(lines[start - 1] ?? '');
    if (asFile) {
      out.push({ file, line: start + 2, code: `cat > ${asFile[1]} <<'DOCS_TEST_EOF'\n${code}\nDOCS_TEST_EOF` });
      continue;
    }
    if (!['bash', 'sh', 'shell'].includes(open[2])) continue;
    const marker = /^\s*<!--\s*docs-test:\s*skip\b(.*?)-->\s*$/.exec(lines[start - 1] ?? '');
    out.push({ file, line: start + 2, code, ...(marker ? { skip: marker[1].replace(/^[\s—:-]+/, '').trim() } : {}) });
  }
  return out;
}

/** Before every line that runs curl, the status it must answer: the line's `# → NNN`, else any 2xx. */
export function annotate(example: Example): string {
  const lines = example.code.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A logical command spans the lines ending in a backslash; its annotation may sit on any of them.
    let j = i;
    while (j < lines.length - 1 && /\\\s*$/.test(lines[j])) j++;
    const command = lines.slice(i, j + 1);
    const joined = command.join('\n');
    if (/\bcurl\s/.test(joined)) {
      const expected = /#\s*→\s*(\d{3})\b/.exec(joined)?.[1] ?? '2xx';
      out.push(`__docs_expect ${expected} '${example.file}:${example.line + i}'`);
    }
    out.push(...command);
    i = j;
  }
  return out.join('\n');
}

const prelude = (port: number, failures: string) => `
set -E${process.env.DOCS_TEST_KEEP_GOING ? '' : 'e'}uo pipefail
__DOCS_EXPECT=2xx
__DOCS_WHERE=?
__docs_expect() { __DOCS_EXPECT=$1; __DOCS_WHERE=$2; }
trap 'echo "DOCS-TEST: [$BASH_COMMAND] failed (status $?) at or after $__DOCS_WHERE" >&2' ERR
# curl as the docs write it, sent to the test's server, bounded, its status checked against the announced one.
curl() {
  local __h __s __rc=0
  __h=$(mktemp)
  command curl --connect-to ${DOCS_ADDRESS}:127.0.0.1:${port} --max-time 30 -D "$__h" "$@" || __rc=$?
  __s=$(grep -E '^HTTP/' "$__h" | tail -n 1 | cut -d ' ' -f 2 || true)
  rm -f "$__h"
  local __ok=0
  if [ "$__DOCS_EXPECT" = 2xx ]; then case "$__s" in 2??) __ok=1 ;; esac; elif [ "$__s" = "$__DOCS_EXPECT" ]; then __ok=1; fi
  if [ $__ok = 0 ]; then
    echo "$__DOCS_WHERE: HTTP \${__s:-none} (curl exit $__rc), expected $__DOCS_EXPECT" >> '${failures}'
    echo "DOCS-TEST: $__DOCS_WHERE answered \${__s:-none}, expected $__DOCS_EXPECT" >&2
    return 22
  fi
  return $__rc
}
`;

function docFiles(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

let work: string;
let port: number;
let server: ChildProcess | undefined;
let serverExited: Promise<number | null> | undefined;
let serverOutput = '';
let firstSecret = '';

/** `atrium serve` on the test's DATA_DIR and port, until its banner; its output (banner included) in serverOutput. */
async function startServer(): Promise<void> {
  serverOutput = '';
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  server = spawn(process.execPath, ['src/main.ts', 'serve'], {
    cwd: work,
    env: {
      ...env,
      DATA_DIR: path.join(work, 'data'),
      PORT: String(port),
      HOST: '127.0.0.1',
      ATRIUM_PUBLIC_URL: `http://${DOCS_ADDRESS}`,
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      // README shows the tenant's host form "with ATRIUM_TENANT_HOST_PATTERN='apiv2-{tenant}.atrium.example.com'".
      ATRIUM_TENANT_HOST_PATTERN: 'apiv2-{tenant}.atrium.example.com',
      ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      ATRIUM_SECRET_KEY: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.on('data', (d) => (serverOutput += d));
  server.stderr?.on('data', (d) => (serverOutput += d));
  const child = server;
  serverExited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  const deadline = Date.now() + 150_000;
  while (!serverOutput.includes('Atrium listening on')) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${serverOutput}`);
    if (Date.now() > deadline) throw new Error(`server did not start:\n${serverOutput}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, then SIGKILL after a minute: the server stops its embedded PostgreSQL on the way out. */
async function stopServer(): Promise<void> {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    const killer = setTimeout(() => server?.kill('SIGKILL'), 60_000);
    await serverExited;
    clearTimeout(killer);
  }
}

before(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'atrium-docs-'));
  // Readable by the system user the embedded PostgreSQL runs as under root, so its cluster stays inside DATA_DIR.
  await chmod(work, 0o755);
  // The shell runs in a checkout-like folder: `npm run -s atrium` works and `data/` is the server's DATA_DIR.
  for (const entry of ['package.json', 'node_modules', 'src', 'bin']) await symlink(path.join(root, entry), path.join(work, entry));
  await mkdir(path.join(work, 'data'), { mode: 0o755 });
  port = await freePort();
  await startServer();
  firstSecret = JSON.parse(await readFile(path.join(work, 'data', 'demo-credentials.json'), 'utf8')).appSecret;
});

after(async () => {
  await stopServer();
  if (work) {
    // A cluster kept outside DATA_DIR (README, "Operator CLI") would outlive the folder.
    await removeClusterOf(path.join(work, 'data', 'pg'));
    await rm(work, { recursive: true, force: true });
  }
});

async function runFile(file: string, examples: Example[]): Promise<{ code: number | null; output: string; failures: string }> {
  const failures = path.join(work, `failures-${path.basename(file)}.txt`);
  await writeFile(failures, '');
  const script = [prelude(port, failures), ...examples.map((e) => `# ---- ${e.file}:${e.line}\n${annotate(e)}`)].join('\n');
  const scriptFile = path.join(work, `${path.basename(file)}.sh`);
  await writeFile(scriptFile, script);
  // Only what a user's shell has: PATH, HOME, and the admin token the server was started with (README).
  const child = spawn('bash', [scriptFile], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, LANG: 'C.UTF-8', ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => {
    output += `\nDOCS-TEST: ${file} took over ${FILE_TIMEOUT_MS} ms; killed`;
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  }, FILE_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output, failures: await readFile(failures, 'utf8') };
}

test('the extraction finds the examples and honours annotations and skip markers', () => {
  const text = [
    '<!-- docs-test: skip — the test starts the server itself -->',
    '```sh',
    'npm start',
    '```',
    '```bash',
    'curl -s http://127.0.0.1:8080/nope \\',
    "  -H 'A: b'   # → 404",
    'echo hi',
    '```',
    '```json',
    '{"curl ": 1}',
    '```',
    '```sh',
    'BASE=http://127.0.0.1:8080',
    '```',
    '1. In a list item:',
    '   ```sh',
    '   curl -s $BASE/health \\',
    '     -H "A: b"',
    '   ```',
  ].join('\n');
  const found = extractExamples('x.md', text);
  assert.equal(found.length, 4);
  assert.equal(found[2].code, 'BASE=http://127.0.0.1:8080');
  assert.equal(found[3].code, 'curl -s $BASE/health \\\n  -H "A: b"');
  assert.equal(found[0].skip, 'the test starts the server itself');
  assert.equal(found[1].skip, undefined);
  assert.match(annotate(found[1]), /^__docs_expect 404 'x\.md:6'\ncurl/);
});

for (const file of docFiles()) {
  const examples = extractExamples(file, readFileSync(path.join(root, file), 'utf8'));
  if (examples.length === 0) continue;
  test(`the shell examples of ${file} run as written`, async () => {
    for (const e of examples.filter((x) => x.skip !== undefined)) {
      assert.ok(e.skip && e.skip.length >= 10, `${e.file}:${e.line}: a skip marker must give its reason`);
    }
    const runnable = examples.filter((e) => e.skip === undefined);
    if (runnable.length === 0) return;
    const run = await runFile(file, runnable);
    const notes = run.output
      .split('\n')
      .filter((l) => l.startsWith('DOCS-TEST:'))
      .join('\n');
    const tail = `${notes}\n${run.output.length > 4000 ? `…${run.output.slice(-4000)}` : run.output}`;
    assert.equal(run.failures, '', `${file}: unannounced statuses\n${tail}`);
    assert.equal(run.code, 0, `${file}: the examples exited ${run.code}\n${tail}`);
  });
}

test('after README rotated the demo app, demo-credentials.json and the next start banner hold the live secret', async () => {
  const creds = JSON.parse(await readFile(path.join(work, 'data', 'demo-credentials.json'), 'utf8'));
  assert.notEqual(creds.appSecret, firstSecret, 'README rotates the demo app');
  const whoami = (secret: string) =>
    fetch(`http://127.0.0.1:${port}/api/v3/whoami`, { headers: { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': secret } });
  assert.equal((await whoami(creds.appSecret)).status, 200);
  assert.equal((await whoami(firstSecret)).status, 401);
  // The next start's banner prints the file's credentials: the live secret, not the first one.
  await stopServer();
  await startServer();
  assert.ok(serverOutput.includes(`X-AppSecret: ${creds.appSecret}\n`), `the banner shows the live secret:\n${serverOutput}`);
  assert.ok(!serverOutput.includes(firstSecret), 'the banner does not show the rotated-away secret');
});
