// Cold first pages of the heaviest named queries (issue #32, item 1): every row-answering named query ranked by
// rows × columns on the tenant, then for the heaviest (bench/extraction/heavy.ts) a first page in the query's
// default order (take 100, no orderBy: ordered by the key) with its totalCount over HTTP, against the keys-first
// statement a DBA writes by hand for the same page and count, run as the tenant under RLS in one transaction as
// the server does, checked to answer the same rows, columns, order and count. Medians of alternating runs; each
// cold HTTP run follows a write to the query's driving table (so no kept count, position or page answers), the
// kept variant (no write) beside it, and for a query with a keyTable (decision 0070) a page after an INSERT of one
// row into it (its kept count brought up to date by that row; checked against the hand-written count each run).
// CPU per operation: the server's and PostgreSQL's (/proc), summed over the runs.
// Run: npm run bench -- extraction-heavy
//   BENCH_SCALE=50 (fresh database; the tenant is created here) or, to reuse a kept database,
//   BENCH_DATABASE_URL=postgres://… BENCH_TENANTS=50=/path/t50.json (the `tenants create --json` output);
//   BENCH_RUNS=7; BENCH_ONLY=DE-Jobs,DE-History (a subset of the heavy list); BENCH_RANK=0 skips the ranking;
//   BENCH_BEFORE=/path/to/other/checkout: its server is measured too (cold and kept, alternating with this one's,
//   its answers checked alike): before and after in one run.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { countQuery, shapeRow } from '../src/extraction/pages/execute.ts';
import { NAMED_QUERIES } from '../src/extraction/queries/index.ts';
import { plan } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { DatabaseHandle, tenantBinding } from '../src/platform/db/database.ts';
import { HEAVY_QUERIES, heavyBaseline } from './extraction/heavy.ts';
import { benchDatabase, benchEnv, cpuDelta, cpuSeconds, fmt, median, runCli, SERVER_MEMORY_ENV, serverMemoryEnv, startServerProcess } from './lib.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const RANK = process.env.BENCH_RANK !== '0';

type Creds = { tenantId: string; appId: string; appSecret: string };
const kept = process.env.BENCH_DATABASE_URL;
const db = kept ? { url: kept, stop: async () => {} } : await benchDatabase('atrium_bench_extraction_heavy');
const env = benchEnv(db.url, { ATRIUM_REQUEST_TIMEOUT_MS: '600000' });
let creds: Creds;
if (kept) {
  const [, file] = (process.env.BENCH_TENANTS ?? '').split(',')[0].split('=');
  creds = JSON.parse(readFileSync(file, 'utf8'));
} else {
  const scale = process.env.BENCH_SCALE ?? '50';
  creds = JSON.parse(await runCli(['tenants', 'create', '--name', `Scale ${scale}`, '--demo', '--scale', scale, '--json'], env));
}
// The baseline first: this tree's server may apply a migration the baseline does not know (it then refuses to start).
const baseline = process.env.BENCH_BEFORE
  ? await startServerProcess({ ...env, ...serverMemoryEnv(path.resolve(process.env.BENCH_BEFORE)) }, path.resolve(process.env.BENCH_BEFORE))
  : null;
const server = await startServerProcess({ ...env, ...SERVER_MEMORY_ENV });
const owner = new pg.Client({ connectionString: db.url });
await owner.connect();
await owner.query('vacuum analyze');
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const handle = new DatabaseHandle(db.url);
const load = () => os.loadavg()[0].toFixed(1);
const principal: Principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
// PostgreSQL's processes are the postmaster's children: their CPU is summed under 'postgres'.
const postmaster = Number(
  readFileSync(`/proc/${(await client.query('select pg_backend_pid() as pid')).rows[0].pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ')[1],
);
const roles = { [server.child.pid as number]: 'server', [postmaster]: 'postgres', ...(baseline ? { [baseline.child.pid as number]: 'before' } : {}) };

async function asTenant<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const s = performance.now();
  await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
  const value = await work();
  await client.query('commit');
  return { ms: performance.now() - s, value };
}

/** A no-op update of one row of `table`, bound to the tenant as the API writes: the next page's kept answers are stale. */
async function touch(table: string): Promise<void> {
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [creds.tenantId]);
  await owner.query(`update ${table} set tenant_id = tenant_id where tenant_id = $1 and id = (select id from ${table} where tenant_id = $1 limit 1)`, [
    creds.tenantId,
  ]);
  await owner.query('commit');
}

/**
 * An insert of one row of `table` (a copy of one of the tenant's under a new id), bound to the tenant as the API
 * writes: a query declaring it its keyTable brings its kept count up to date by that row (decision 0070).
 */
async function insertOne(table: string): Promise<void> {
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [creds.tenantId]);
  await owner.query(
    `insert into ${table} select (jsonb_populate_record(null::${table}, to_jsonb(x) || jsonb_build_object('id', gen_random_uuid()))).*
       from ${table} x where x.tenant_id = $1 ${table === 'timesheets' ? 'and x.deleted_on is null' : ''} limit 1`,
    [creds.tenantId],
  );
  await owner.query('commit');
}

async function http(name: string, body: object, base = server.baseUrl): Promise<{ ms: number; json: { totalCount: number; data: Record<string, unknown>[] } }> {
  const s = performance.now();
  const res = await request(`${base}/api/v3/analytics/named-query/${name}/dynamic-execute`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    // An aggregate's page can take minutes on a loaded machine: no client-side timeouts (the server's request timeout is set above).
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const json = (await res.body.json()) as { totalCount: number; data: Record<string, unknown>[] };
  if (res.statusCode !== 200) throw new Error(`${name}: ${JSON.stringify(json).slice(0, 500)}`);
  return { ms: performance.now() - s, json };
}

try {
  console.log(`tenant ${creds.tenantId}; load average ${load()}`);
  if (RANK) {
    // Rows of every named query that answers rows (count queries answer one), by the engine's own count.
    const ranked: { name: string; rows: number; columns: number }[] = [];
    for (const e of CATALOGUE) {
      const rows = await handle.withTenant(creds.tenantId, async (trx) => {
        const p = await plan(trx, principal, e.name, {}, true);
        return p.query.isCount ? null : Number((await countQuery(p.query, p.plan).execute(trx)).rows[0].n);
      });
      if (rows !== null) ranked.push({ name: e.name, rows, columns: e.columns.length });
    }
    ranked.sort((a, b) => b.rows * b.columns - a.rows * a.columns);
    console.log('\n| rank | named query | rows | columns | rows × columns |\n|---|---|---|---|---|');
    for (const [i, r] of ranked.slice(0, 15).entries()) console.log(`| ${i + 1} | ${r.name} | ${fmt(r.rows)} | ${r.columns} | ${fmt(r.rows * r.columns)} |`);
    const top = ranked.slice(0, 10).map((r) => r.name);
    const missing = top.filter((n) => !HEAVY_QUERIES.some((h) => h.name === n));
    if (missing.length) console.log(`\nnote: heavy.ts has no baseline for ${missing.join(', ')} (in this tenant's top 10)`);
  }

  const summary: string[] = [];
  const body = { queryBuilder: { take: 100 } };
  for (const h of HEAVY_QUERIES.filter((q) => !ONLY.length || ONLY.includes(q.name))) {
    const columns = CATALOGUE.find((e) => e.name === h.name)!.columns;
    const hand = await handleBaseline(h.name);
    const handRun = () =>
      asTenant(async () => {
        const rows = (await client.query(hand.page, hand.parameters)).rows;
        if (hand.count !== null) return { rows, n: Number((await client.query(hand.count, [creds.tenantId])).rows[0].n) };
        const n = Number(rows[0]?.__n ?? 0);
        for (const r of rows) delete r.__n;
        return { rows, n };
      });
    // Same rows, order, columns and totalCount, cold and kept.
    await touch(h.table);
    const answer = (await http(h.name, body)).json;
    const again = (await http(h.name, body)).json;
    const answers: [string, typeof answer][] = [
      ['cold', answer],
      ['kept', again],
    ];
    if (baseline) {
      await touch(h.table);
      answers.push(['before, cold', (await http(h.name, body, baseline.baseUrl)).json], ['before, kept', (await http(h.name, body, baseline.baseUrl)).json]);
    }
    const handAnswer = (await handRun()).value;
    for (const [what, a] of answers) {
      if (a.totalCount !== handAnswer.n) throw new Error(`${h.name} (${what}): totalCount ${a.totalCount} vs hand-written ${handAnswer.n}`);
      const expected = JSON.stringify(handAnswer.rows.map((r) => shapeRow(r, columns)));
      if (JSON.stringify(a.data) !== expected) {
        const at = a.data.findIndex((r, i) => JSON.stringify(r) !== JSON.stringify(shapeRow(handAnswer.rows[i] ?? {}, columns)));
        throw new Error(
          `${h.name} (${what}): rows differ from the hand-written SQL at row ${at}: ${JSON.stringify(a.data[at])} vs ${JSON.stringify(handAnswer.rows[at])}`,
        );
      }
    }
    // A query with a keyTable (decision 0070) is also timed after an insert into it: its kept count gains the row.
    const keyTable = NAMED_QUERIES.find((d) => d.name === h.name)?.keyTable;
    const t = {
      cold: [] as number[],
      kept: [] as number[],
      hand: [] as number[],
      delta: [] as number[],
      beforeCold: [] as number[],
      beforeKept: [] as number[],
    };
    const cpu = {
      beforeCold: { server: 0, postgres: 0 },
      beforeKept: { server: 0, postgres: 0 },
      cold: { server: 0, postgres: 0 },
      kept: { server: 0, postgres: 0 },
      hand: { server: 0, postgres: 0 },
      delta: { server: 0, postgres: 0 },
    };
    const timed = async (k: keyof typeof t, run: () => Promise<number>) => {
      const before = cpuSeconds(roles);
      t[k].push(await run());
      const used = cpuDelta(before, cpuSeconds(roles));
      cpu[k].server += (k.startsWith('before') ? used.before : used.server) ?? 0;
      cpu[k].postgres += used.postgres ?? 0;
    };
    for (let i = 0; i < RUNS; i++) {
      await touch(h.table);
      await timed('cold', async () => (await http(h.name, body)).ms);
      await timed('kept', async () => (await http(h.name, body)).ms);
      if (baseline) {
        await touch(h.table);
        await timed('beforeCold', async () => (await http(h.name, body, baseline.baseUrl)).ms);
        await timed('beforeKept', async () => (await http(h.name, body, baseline.baseUrl)).ms);
      }
      await timed('hand', async () => (await handRun()).ms);
      if (keyTable) {
        await insertOne(keyTable);
        let delta = 0;
        await timed('delta', async () => {
          const r = await http(h.name, body);
          delta = r.json.totalCount;
          return r.ms;
        });
        const n = (await handRun()).value.n;
        if (delta !== n) throw new Error(`${h.name} (after an insert): totalCount ${delta} vs hand-written ${n}`);
      }
    }
    const m = {
      cold: median(t.cold),
      kept: median(t.kept),
      hand: median(t.hand),
      delta: median(t.delta),
      beforeCold: median(t.beforeCold),
      beforeKept: median(t.beforeKept),
    };
    const per = (k: keyof typeof t) => `${fmt((cpu[k].server * 1000) / RUNS, 1)} / ${fmt((cpu[k].postgres * 1000) / RUNS, 1)}`;
    console.log(
      `\n  ${h.name} (${fmt(answer.totalCount)} rows): cold ${fmt(m.cold, 1)} ms, kept ${fmt(m.kept, 1)} ms, hand ${fmt(m.hand, 1)} ms; cold ratio ${fmt(m.cold / m.hand, 2)}x; load average ${load()}`,
    );
    const afterInsert = keyTable ? `${fmt(m.delta, 1)} (${fmt(m.delta / m.hand, 2)}×), CPU ${per('delta')}` : '–';
    if (keyTable) console.log(`  ${h.name} after an insert: ${afterInsert}`);
    const beforeColumns = baseline
      ? ` ${fmt(m.beforeCold, 1)} (${fmt(m.beforeCold / m.hand, 2)}×) | ${fmt(m.beforeKept, 1)} (${fmt(m.beforeKept / m.hand, 2)}×) | ${per('beforeCold')} |`
      : '';
    summary.push(
      `| ${h.name} | ${fmt(answer.totalCount)} | ${fmt(m.cold, 1)} | ${fmt(m.hand, 1)} | **${fmt(m.cold / m.hand, 2)}×** | ${fmt(m.kept, 1)} (${fmt(m.kept / m.hand, 2)}×) | ${afterInsert} | ${per('cold')} | ${per('kept')} | ${per('hand')} |${beforeColumns}`,
    );
  }
  console.log(
    `\nfirst page (take 100, default order) + totalCount, ${RUNS} alternating runs, medians (ms); CPU ms per operation (mean) server / PostgreSQL; load average ${load()}`,
  );
  console.log(
    `\n| named query | rows | HTTP cold | hand-written | cold ratio | HTTP kept (ratio) | HTTP after an insert (ratio) | CPU cold | CPU kept | CPU hand |${baseline ? ' before: cold (ratio) | before: kept (ratio) | before: CPU cold |' : ''}\n|---|---|---|---|---|---|---|---|---|---|${baseline ? '---|---|---|' : ''}`,
  );
  for (const line of summary) console.log(line);
  console.log(`\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
} finally {
  await server.stop();
  await baseline?.stop();
  await client.end();
  await owner.end();
  await handle.close();
  await db.stop();
}

/** The hand-written page and count of `name`, its columns from the definition's keys-phase source where heavy.ts writes none. */
async function handleBaseline(name: string) {
  return handle.withTenant(creds.tenantId, async (trx) => {
    const { query } = await plan(trx, principal, name, {}, false);
    const aggregate = HEAVY_QUERIES.find((h) => h.name === name)?.aggregate;
    const source = (aggregate ? query.source : query.keysSource).compile(trx);
    return heavyBaseline(
      name,
      creds.tenantId,
      100,
      source,
      query.columns.map((c) => c.name),
      query.key,
    );
  });
}
