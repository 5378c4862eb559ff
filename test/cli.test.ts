// The `atrium` CLI as a user meets it, as a child process: help, one-line usage errors (exit 2), unknown
// tenants (exit 1), progress of a long load on stderr, and Ctrl-C during `tenants create --demo` leaving
// no half tenant behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let env: Record<string, string>;

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

function atrium(args: string[], opts: { env?: Record<string, string>; onStderr?: (text: string, child: ReturnType<typeof spawn>) => void } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], { cwd: root, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      opts.onStderr?.(stderr, child);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The first line of stderr is the whole message: no stack frames anywhere. */
function assertOneLineError(run: Run, pattern: RegExp, code: number): void {
  assert.equal(run.code, code, run.stderr);
  const [first] = run.stderr.split('\n');
  assert.match(first, pattern);
  assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
}

before(async () => {
  database = await createTestDatabase();
  env = { DATABASE_URL: database.connectionString, ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent' };
});
after(() => database.drop());

describe('the command line', () => {
  test('atrium with no command prints the help and exits 0 (only `serve` serves)', async () => {
    const run = await atrium([]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Usage: atrium <command>/);
    assert.match(run.stdout, /tenants create --name N/);
    assert.match(run.stdout, /Exit status: 0 done, 1 refused/);
    assert.equal(run.stderr, '');
    const help = await atrium(['tenants', 'create', '--help']);
    assert.equal(help.code, 0);
    assert.equal(help.stdout, run.stdout);
  });

  test('a misspelt option is one line naming it, a suggestion and the usage; exit 2', async () => {
    const run = await atrium(['tenants', 'create', '--nmae', 'Acme']);
    assertOneLineError(run, /^atrium: unknown option --nmae \(did you mean --name\?\)$/, 2);
    assert.match(run.stderr, /\n\nUsage: atrium <command>/);
    assert.equal(run.stdout, '');
  });

  test('other command-line mistakes: unknown command, missing value, option of another command, stray argument', async () => {
    const cases: [string[], RegExp][] = [
      [['tenats', 'list'], /^atrium: unknown command "tenats list" \(did you mean "tenants list"\?\)$/],
      [['srve'], /^atrium: unknown command "srve" \(did you mean "serve"\?\)$/],
      [['frobnicate'], /^atrium: unknown command "frobnicate"$/],
      [['tenants'], /^atrium: "tenants" needs a subcommand: create, list, delete$/],
      [['apps', 'create', '--tenant'], /^atrium: Option '--tenant <value>' argument missing$/],
      [['apps', 'create', '--name', 'BI'], /^atrium: --tenant is required for "apps create"$/],
      [['tenants', 'create', '--demo=yes'], /^atrium: Option '--demo' does not take an argument$/],
      [['tenants', 'list', '--scale', '5'], /^atrium: option --scale does not apply to "tenants list"$/],
      [['tenants', 'list', 'extra'], /^atrium: unexpected argument "extra" after "tenants list"$/],
      [['tenants', 'create', '--name', 'X', '--scale', '5'], /^atrium: --scale applies with --demo only$/],
      [['tenants', 'create', '--name', 'X', '--demo', '--scale', 'lots'], /^atrium: --scale must be a number above 0 and at most 200$/],
    ];
    // Each mistake is caught before the database is opened: an unreachable DATABASE_URL would otherwise fail with exit 1.
    const runs = await Promise.all(cases.map(([args]) => atrium(args, { env: { DATABASE_URL: 'postgres://127.0.0.1:1/none' } })));
    runs.forEach((run, i) => {
      assertOneLineError(run, cases[i][1], 2);
    });
  });

  test('an unknown tenant or app is one line, exit 1; a tenant is named by id or slug', async () => {
    const created = await atrium(['tenants', 'create', '--name', 'CLI Agency', '--slug', 'cli-agency', '--json'], { env });
    assert.equal(created.code, 0, created.stderr);
    const tenant = JSON.parse(created.stdout) as { tenantId: string; appId: string };
    const unknownId = '00000000-0000-4000-8000-000000000000';
    for (const given of [unknownId, 'no-such-agency', 'Not A Slug!']) {
      assertOneLineError(
        await atrium(['apps', 'create', '--tenant', given, '--name', 'BI'], { env }),
        new RegExp(`^atrium: no tenant "${given}" \\(neither`),
        1,
      );
    }
    assertOneLineError(
      await atrium(['apps', 'rotate', '--tenant', 'cli-agency', '--app', 'app_nope'], { env }),
      /^atrium: No active app app_nope in this tenant\.$/,
      1,
    );
    const bySlug = await atrium(['apps', 'create', '--tenant', 'cli-agency', '--name', 'BI', '--json'], { env });
    assert.equal(bySlug.code, 0, bySlug.stderr);
    assert.equal((JSON.parse(bySlug.stdout) as { tenantId: string }).tenantId, tenant.tenantId);
  });

  test('an unreachable database is one line naming the cause, exit 1', async () => {
    const run = await atrium(['tenants', 'list'], { env: { DATABASE_URL: 'postgres://127.0.0.1:1/none' } });
    assertOneLineError(run, /^atrium: Migrations could not run: connect ECONNREFUSED 127\.0\.0\.1:1 \(ECONNREFUSED\)$/, 1);
  });
});

describe('tenants create --demo', () => {
  test('shows progress of a long table load and, on Ctrl-C, stops within a second leaving no part of the tenant', async () => {
    const name = 'Interrupted Agency';
    let interruptedAt = 0;
    const run = await atrium(['tenants', 'create', '--name', name, '--demo', '--scale', '20', '--progress', '--json'], {
      env,
      onStderr: (text, child) => {
        // Interrupted in the middle of the largest table, once its progress shows.
        if (!interruptedAt && /^timesheets: [\d,]+ rows, [\d,]+ rows\/s, \d+ %, ETA (\d+ s|\d+ min \d+ s)$/m.test(text)) {
          interruptedAt = Date.now();
          child.kill('SIGINT');
        }
      },
    });
    const stoppedIn = Date.now() - interruptedAt;
    assert.ok(interruptedAt > 0, `no progress line for timesheets:\n${run.stderr}`);
    assert.equal(run.code, 130, run.stderr);
    assert.ok(stoppedIn < 1000, `exited ${stoppedIn} ms after SIGINT`);
    // With --json the error is one JSON object on stderr (issue 35), exit code 130 as without it.
    assert.match(run.stderr, /\{"error":\{"message":"tenant creation interrupted; nothing was created \(rolled back\)","exitCode":130\}\}/);
    assert.equal(run.stdout, '', 'no credentials printed for a tenant that does not exist');

    const client = new pg.Client({ connectionString: database.connectionString });
    await client.connect();
    try {
      const tenants = await client.query('select id from tenants where name = $1', [name]);
      assert.equal(tenants.rowCount, 0);
      // Only the tenant of the test above exists, so any row of another tenant would be the interrupted one's.
      const known = await client.query<{ id: string }>('select id from tenants');
      for (const table of ['users', 'companies', 'jobs', 'timesheets', 'attendances', 'roles', 'apps', 'events']) {
        const rows = await client.query(`select count(*)::int as n from ${table} where tenant_id <> all($1::uuid[])`, [known.rows.map((r) => r.id)]);
        assert.equal(rows.rows[0].n, 0, `${table} has rows of no known tenant`);
      }
    } finally {
      await client.end();
    }
  });
});
