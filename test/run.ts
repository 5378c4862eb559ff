// `npm test`: starts one embedded PostgreSQL for the whole run, migrates a template database once,
// then runs every *.test.ts with node's test runner; each test file clones its own database from
// the template (test/helpers.ts), so files run in parallel without sharing rows.
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { removeClusterOf } from '../src/platform/db/clusters.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { startEmbeddedPostgres } from '../src/platform/db/embedded-postgres.ts';
import { checkDatabaseTypes } from '../src/platform/db/generate-types.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { Jobs } from '../src/platform/jobs/jobs.ts';

export const TEMPLATE_DB = 'atrium_template';

const root = path.resolve(import.meta.dirname, '..');
/** Node's compile cache for the test run's processes (bin/atrium.js keeps its own in the same place). */
const COMPILE_CACHE = path.join(root, 'node_modules', '.cache', 'atrium', 'compile-cache');

const patterns = process.argv.slice(2);
// The longest files start first (longest-first scheduling): started last, they ran alone at the end of the run
// with cores idle. The two that mostly wait for minute boundaries go first, beside the CPU-heavy ones. Durations
// of a full run on the 2-core machine (three files at a time).
const LONGEST_FIRST = [
  'test/schedules-workers.test.ts', // ~65 s, waits for minute boundaries
  'test/scale-out.test.ts', // ~75 s, waits for a minute boundary
  'test/import.test.ts', // ~145 s
  'test/http-fuzz.test.ts', // ~115 s
  'test/isolation.test.ts', // ~60 s
  'test/cli.test.ts', // ~70 s
  'test/console-flows.test.ts', // ~70 s
];
const rank = (f: string) => {
  const i = LONGEST_FIRST.indexOf(f.replaceAll('\\', '/'));
  return i === -1 ? LONGEST_FIRST.length : i;
};
const files = (patterns.length ? patterns : ['src/**/*.test.ts', 'test/**/*.test.ts'])
  .flatMap((p) => globSync(p, { cwd: root }))
  .sort()
  .sort((a, b) => rank(a) - rank(b));

const started = Date.now();
const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-test-'));
// Readable by the OS user PostgreSQL runs as when we are root, so the cluster stays inside it.
await chmod(dir, 0o755);
const cluster = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), fast: true, log: () => {} });
let code = 1;
try {
  const admin = new pg.Client({ connectionString: cluster.connectionString });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DB}`);
  await admin.query(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = new URL(cluster.connectionString);
  templateUrl.pathname = `/${TEMPLATE_DB}`;
  const db = new DatabaseHandle(templateUrl.toString(), { poolSize: 2 });
  await migrateToLatest(db.kysely);
  // pg-boss installs its schema on first start; doing it here once makes every clone ready.
  const jobs = new Jobs(db);
  await jobs.start({ work: false });
  await jobs.stop();
  await db.close();
  process.stdout.write(`test database template ready in ${((Date.now() - started) / 1000).toFixed(1)} s; running ${files.length} test files\n`);
  // The committed Database types must describe the schema just migrated (decision 0016).
  const stale = await checkDatabaseTypes(templateUrl.toString());
  if (stale) throw new Error(stale);
  code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['--test', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? '3'}`, '--test-timeout=300000', ...files], {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        ATRIUM_TEST_PG_URL: cluster.connectionString,
        ATRIUM_TEST_TEMPLATE: TEMPLATE_DB,
        // Every process of the run (test files, the servers and CLIs they start) keeps V8's compiled code of the
        // modules it loads, TypeScript already stripped: a process then starts in about a quarter less CPU.
        NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? COMPILE_CACHE,
      },
    });
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
} finally {
  await cluster.stop();
  // When the cluster had to be relocated (root, untraversable TMPDIR), removing dir alone would leave it behind.
  await removeClusterOf(path.join(dir, 'pg')).catch((err: Error) => process.stderr.write(`test cluster left behind: ${err.message}\n`));
  await rm(dir, { recursive: true, force: true });
}
process.exit(code);
