// Custom tables benchmark: UpsertMany of 10,000 rows of a ten-column table through the HTTP API versus
// one multi-row INSERT ... ON CONFLICT DO UPDATE of the same rows sent directly through pg; then export
// and import of 100,000 rows with the process's RSS sampled throughout (memory must stay flat).
//   node --expose-gc bench/custom-tables-upsert.ts [rows=10000] [exportRows=100000]
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres } from '../src/platform/db/embedded-postgres.ts';
import { startServer } from '../src/server.ts';
import { createTenant } from '../src/tenancy/service.ts';

const ROWS = Number(process.argv[2] ?? 10_000);
const EXPORT_ROWS = Number(process.argv[3] ?? 100_000);
const RUNS = 5;

const COLUMNS = [
  { ColumnName: 'Name', ColumnDataTypeId: 5, sql: 'varchar(50)' },
  { ColumnName: 'Description', ColumnDataTypeId: 10, sql: 'varchar(200)' },
  { ColumnName: 'Quantity', ColumnDataTypeId: 3, sql: 'integer' },
  { ColumnName: 'Ratio', ColumnDataTypeId: 2, sql: 'double precision' },
  { ColumnName: 'Amount', ColumnDataTypeId: 4, sql: 'numeric(19,4)' },
  { ColumnName: 'Day', ColumnDataTypeId: 1, sql: 'date' },
  { ColumnName: 'Active', ColumnDataTypeId: 0, sql: 'boolean' },
  { ColumnName: 'Ref', ColumnDataTypeId: 9, sql: 'uuid' },
  { ColumnName: 'Notes', ColumnDataTypeId: 8, sql: 'text' },
];

function makeRow(i: number, round: number): Record<string, unknown> {
  return {
    Name: `name ${i} ${round}`,
    Description: `description of row ${i}, round ${round}, `.padEnd(80, 'x'),
    Quantity: (i * 7 + round) % 100000,
    Ratio: (i % 1000) / 7 + round,
    Amount: `${(i * 13) % 1000000}.${String((i + round) % 10000).padStart(4, '0')}`,
    Day: `20${String(10 + (i % 15))}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    Active: (i + round) % 2 === 0,
    Ref: randomUUID(),
    Notes: `notes ${round} `.repeat(5),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-ct-'));
const cluster = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), log: () => {} });
const admin = new pg.Client({ connectionString: cluster.connectionString });
await admin.connect();
await admin.query('create database atrium_bench');
await admin.end();
const url = new URL(cluster.connectionString);
url.pathname = '/atrium_bench';
const runtime = await startServer(
  loadConfig({
    DATABASE_URL: url.toString(),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
    ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
    ATRIUM_REQUEST_TIMEOUT_MS: '120000',
    DATA_DIR: path.join(dir, 'data'),
  }),
  () => {},
);
const base = `${runtime.address}/api/v3`;
const direct = new pg.Client({ connectionString: url.toString() });
await direct.connect();

try {
  const tenant = await createTenant(runtime.ctx, { name: 'Bench Agency' });
  const other = await createTenant(runtime.ctx, { name: 'Bench Import Agency' });
  const tokenOf = async (t: typeof tenant) => {
    const res = await fetch(`${runtime.address}/api/auth/token`, {
      method: 'POST',
      headers: { 'x-apptenant': t.tenantId, 'x-appid': t.appId, 'x-appsecret': t.appSecret },
    });
    return ((await res.json()) as { accessToken: string }).accessToken;
  };
  const token = await tokenOf(tenant);
  const call = async (method: string, p: string, body?: string, tk = token) => {
    const res = await fetch(`${base}${p}`, { method, headers: { 'x-accesstoken': tk, 'content-type': 'application/json' }, body });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  };

  await call('POST', '/custom-tables/Bench', JSON.stringify({ KeyColumnName: 'Id', KeyDataTypeId: 3, Columns: COLUMNS.map(({ sql: _s, ...c }) => c) }));
  const { physical_name: physical } = (await direct.query(`select physical_name from custom_tables where tenant_id = $1 and name = 'Bench'`, [tenant.tenantId]))
    .rows[0];
  const table = `customtables."${physical}"`;
  const colNames = ['id', ...COLUMNS.map((c) => c.ColumnName.toLowerCase())];

  const apiBody = (round: number) =>
    JSON.stringify({
      OperationType: 'UpsertMany',
      UpsertManyModel: Array.from({ length: ROWS }, (_, i) => ({
        KeyValue: i,
        Columns: Object.entries(makeRow(i, round)).map(([ColumnName, Value]) => ({ ColumnName, Value })),
      })),
    });
  const directSql = (round: number) => {
    const values = Array.from({ length: ROWS }, (_, i) => {
      const r = makeRow(i, round);
      return `(${[direct.escapeLiteral(tenant.tenantId), i, ...COLUMNS.map((c) => `${direct.escapeLiteral(String(r[c.ColumnName]))}::${c.sql}`)].join(',')})`;
    });
    return `insert into ${table} (tenant_id, ${colNames.join(', ')}) values ${values.join(',\n')}
      on conflict (id) do update set ${colNames
        .slice(1)
        .map((c) => `${c} = excluded.${c}`)
        .join(', ')}`;
  };
  const truncate = () => direct.query(`truncate ${table}`);

  const timings: Record<string, number[]> = { apiInsert: [], apiUpdate: [], pgInsert: [], pgUpdate: [] };
  for (let run = 0; run < RUNS + 1; run++) {
    // API: insert into an empty table, then update every row.
    await truncate();
    for (const [key, round] of [
      ['apiInsert', 1],
      ['apiUpdate', 2],
    ] as const) {
      const body = apiBody(round + run * 10);
      const t0 = process.hrtime.bigint();
      await call('PUT', '/custom-tables/Bench/rows', body);
      if (run > 0) timings[key].push(ms(t0));
    }
    // Direct: the same shape of statement through pg, in a transaction as the API does.
    await truncate();
    for (const [key, round] of [
      ['pgInsert', 1],
      ['pgUpdate', 2],
    ] as const) {
      const text = directSql(round + run * 10);
      const t0 = process.hrtime.bigint();
      await direct.query('begin');
      await direct.query(text);
      await direct.query('commit');
      if (run > 0) timings[key].push(ms(t0));
    }
  }
  const m = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, median(v)]));
  console.log(`UpsertMany of ${ROWS} rows x ${COLUMNS.length + 1} columns, median of ${RUNS} runs (first run discarded):`);
  console.log(
    `  insert (empty table): API ${m.apiInsert.toFixed(1)} ms   direct pg ${m.pgInsert.toFixed(1)} ms   ratio ${(m.apiInsert / m.pgInsert).toFixed(2)}`,
  );
  console.log(
    `  update (every row):   API ${m.apiUpdate.toFixed(1)} ms   direct pg ${m.pgUpdate.toFixed(1)} ms   ratio ${(m.apiUpdate / m.pgUpdate).toFixed(2)}`,
  );

  // Export and import of EXPORT_ROWS rows, sampling RSS every 5 ms.
  await truncate();
  for (let start = 0; start < EXPORT_ROWS; start += ROWS) {
    const rows = Array.from({ length: Math.min(ROWS, EXPORT_ROWS - start) }, (_, i) => ({
      KeyValue: start + i,
      Columns: Object.entries(makeRow(start + i, 0)).map(([ColumnName, Value]) => ({ ColumnName, Value })),
    }));
    await call('PUT', '/custom-tables/Bench/rows', JSON.stringify({ OperationType: 2, UpsertManyModel: rows }));
  }
  const measure = async (label: string, fn: () => Promise<void>) => {
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const t0 = process.hrtime.bigint();
    await fn();
    const took = ms(t0);
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    console.log(`  ${label}: ${(took / 1000).toFixed(2)} s, RSS before ${mb(before)}, peak ${mb(peak)}, delta ${mb(peak - before)}`);
  };
  const file = path.join(dir, 'export.json');
  console.log(`Export and import of ${EXPORT_ROWS} rows (server and client in this process):`);
  await measure('export', async () => {
    const res = await fetch(`${base}/custom-tables/Bench/export`, { headers: { 'x-accesstoken': token } });
    if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status}`);
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(file));
  });
  console.log(`  export file: ${mb((await stat(file)).size)}`);
  const otherToken = await tokenOf(other);
  await measure('import into another tenant', async () => {
    const res = await fetch(`${base}/custom-tables/Bench/import`, {
      method: 'PUT',
      headers: { 'x-accesstoken': otherToken, 'content-type': 'application/json' },
      body: Readable.toWeb(createReadStream(file)) as unknown as BodyInit,
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`import: ${res.status} ${text.slice(0, 300)}`);
    const r = JSON.parse(text);
    if (r.RowCount !== EXPORT_ROWS) throw new Error(`import: ${text}`);
  });
  console.log(`Machine: ${os.cpus()[0]?.model ?? 'unknown'} x ${os.cpus().length}, ${mb(os.totalmem())} RAM, Node ${process.version}`);
} finally {
  await direct.end();
  await runtime.close();
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
}
