// The paging client of issue 32 item 4: a Python `requests` client (bench/extraction-loader-python.py) reads all of
// DE-TimeSheets the way the platform's public BigQuery loader does (SkillsWorkflow/GoogleBigQuery: skip = rows read
// so far, take 2,000, orderBy the key ascending, stopping at the first page's totalCount), against one CSV export of
// the same rows read over HTTP; without writes and while another client writes a timesheet every second (an insert
// as the tenant, which every kept count, position and page read ahead of the tenant's timesheets must notice).
// Alternating rounds; the server's CPU seconds per read and its peak RSS (VmHWM) with `npm start`'s memory flags;
// the load average.
//
// The same rows: the timesheets live when the read starts (kept in a temporary table) are the reference. Without
// writes, the loader's rows are exactly those (no key missing, none twice) and each equals the export's row (a
// CRC-32 of TimesheetId, UserId, Day, JobId, Status and ProjectId as each format prints them). With writes, the
// pages are offset pages of a table that grows while it is read (the platform's as Atrium's: `skip` counts rows,
// and an insert before the client's position moves every later row by one), so what an offset reader can get is
// checked: every row it read exists and equals the export's; it read at most one row twice per insert; a live row
// it did not read is one of the last (after the last key it read: an insert before the position pushed it past
// the first page's totalCount), at most one per insert. The writer's own rows may or may not be read.
// Run: npm run bench -- extraction-loader-python
//   BENCH_DATABASE_URL=postgres://… BENCH_TENANT=/path/tenant-50.json (a kept database; else a fresh one with a
//   BENCH_SCALE demo tenant, default 50), BENCH_ROUNDS=1, BENCH_WRITES=both|only|none (default both),
//   BENCH_BEFORE=/path/to/other/checkout (its server measured too, alternating with this one's: before/after in
//   one run).
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { crc32 } from 'node:zlib';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { request } from 'undici';
import { benchDatabase, benchEnv, cpuSeconds, fmt, median, root, runCli, serverMemoryEnv, startServerProcess } from './lib.ts';

const ROUNDS = Math.max(1, Math.min(20, Number(process.env.BENCH_ROUNDS ?? 1)));
const TAKE = 2000;
const QUERY = 'DE-TimeSheets';
const KEY = 'TimesheetId';
/** The fields whose CRC-32 is compared (the .py's CHECKED, in its order). */
const CHECKED = ['TimesheetId', 'UserId', 'Day', 'JobId', 'Status', 'ProjectId'];
const WRITES = ({ both: [false, true], only: [true], none: [false] } as Record<string, boolean[]>)[process.env.BENCH_WRITES ?? 'both'];
if (!WRITES) throw new Error('BENCH_WRITES is both, only or none');

/** python3 with requests (Debian's python3-requests, installed here when missing). */
function ensurePythonRequests(): void {
  const has = () => {
    try {
      execFileSync('python3', ['-c', 'import requests'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (has()) return;
  console.log('installing python3-requests (apt-get)');
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'python3-requests'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!has()) throw new Error('python3 requests is not available');
}

type Creds = { tenantId: string; appId: string; appSecret: string };
const kept = process.env.BENCH_DATABASE_URL;
const db = kept ? { url: kept, stop: async () => {} } : await benchDatabase('atrium_bench_loader');
const env = benchEnv(db.url, { ATRIUM_REQUEST_TIMEOUT_MS: '600000' });
const creds: Creds = kept
  ? JSON.parse(readFileSync(process.env.BENCH_TENANT ?? '', 'utf8'))
  : JSON.parse(await runCli(['tenants', 'create', '--name', 'Loader', '--demo', '--scale', process.env.BENCH_SCALE ?? '50', '--json'], env));
ensurePythonRequests();
const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-loader-'));
const script = path.join(root, 'bench', 'extraction-loader-python.py');

const checkouts: [string, string][] = [['this', root]];
if (process.env.BENCH_BEFORE) checkouts.unshift(['before', path.resolve(process.env.BENCH_BEFORE)]);
const servers: { label: string; s: Awaited<ReturnType<typeof startServerProcess>> }[] = [];
const owner = new pg.Client({ connectionString: db.url });
await owner.connect();
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');
const vm = (pid: number, field: 'VmHWM' | 'VmRSS') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const LIVE = 'from timesheets where tenant_id = $1 and deleted_on is null';
const liveCount = async () => Number((await owner.query(`select count(*) as n ${LIVE}`, [creds.tenantId])).rows[0].n);

/** One timesheet a second, inserted as the tenant (bound as the API binds its writes), until stopped. */
function writer(): { stop: () => Promise<number> } {
  let written = 0;
  let stopped = false;
  const w = new pg.Client({ connectionString: db.url });
  const done = (async () => {
    await w.connect();
    while (!stopped) {
      const s = performance.now();
      await w.query('begin');
      await w.query(`select set_config('atrium.tenant_id', $1, true)`, [creds.tenantId]);
      await w.query(
        `insert into timesheets (tenant_id, user_id, job_id, work_type_id, date, duration_minutes, is_billable, status, description,
            booked_company_id, booked_department_id, booked_typology_id, booked_hourly_cost)
         select tenant_id, user_id, job_id, work_type_id, current_date, 30, is_billable, 'Draft', 'bench loader write',
            booked_company_id, booked_department_id, booked_typology_id, booked_hourly_cost
           from timesheets where tenant_id = $1 and deleted_on is null limit 1`,
        [creds.tenantId],
      );
      await w.query('commit');
      written++;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - s))));
    }
    await w.end();
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return written;
    },
  };
}

/** The server's page counters (kept counts, seek positions, pages read ahead), by name and result. */
async function pageCounters(baseUrl: string): Promise<Map<string, number>> {
  const text = await (await request(`${baseUrl}/metrics`)).body.text();
  const found = new Map<string, number>();
  for (const m of text.matchAll(/^atrium_extraction_(counts|seeks|read_ahead_pages)_total\{result="(\w+)"\} (\d+)/gm))
    found.set(`${m[1]} ${m[2]}`, Number(m[3]));
  return found;
}
const counterDelta = (before: Map<string, number>, after: Map<string, number>) =>
  [...after]
    .map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const)
    .filter(([, d]) => d > 0)
    .map(([k, d]) => `${k} ${d}`)
    .join(', ');

type Paged = { rows: number; distinct: number; pages: number; total: number; seconds: number; bookkeeping: number };
function python(baseUrl: string, out: string): Promise<Paged> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script, baseUrl, creds.tenantId, creds.appId, creds.appSecret, String(TAKE), QUERY, KEY, out], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`loader exited ${code}: ${text}`))));
  });
}

/** One CSV export over HTTP, timed to its last byte; its body kept (chunks as they came) for the check after. */
async function csvExport(baseUrl: string): Promise<{ seconds: number; body: Buffer[] }> {
  const s = performance.now();
  const res = await request(`${baseUrl}/api/v3/analytics/named-query/${QUERY}/dynamic-execute`, {
    method: 'POST',
    headers: { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json', accept: 'text/csv' },
    body: '{}',
  });
  if (res.statusCode !== 200) throw new Error(`csv: ${res.statusCode}`);
  const body: Buffer[] = [];
  for await (const chunk of res.body as AsyncIterable<Buffer>) body.push(chunk);
  return { seconds: (performance.now() - s) / 1000, body };
}

/** The CSV's records (RFC 4180: quoted fields may hold commas, quotes doubled, line breaks), each as its fields. */
function* csvRecords(body: Buffer[]): Generator<string[]> {
  const decoder = new StringDecoder('utf8');
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let afterQuote = false;
  for (const chunk of body) {
    const text = decoder.write(chunk);
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (quoted) {
        if (c === 34) {
          field += text.slice(from, i);
          from = i + 1;
          quoted = false;
          afterQuote = true;
        }
        continue;
      }
      if (c === 34) {
        // An opening quote, or the second of a doubled one inside a quoted field.
        field += text.slice(from, i) + (afterQuote ? '"' : '');
        from = i + 1;
        quoted = true;
      } else if (c === 44 || c === 10) {
        field += text.slice(from, i);
        fields.push(field.endsWith('\r') && c === 10 ? field.slice(0, -1) : field);
        field = '';
        from = i + 1;
        if (c === 10) {
          yield fields;
          fields = [];
        }
      }
      afterQuote = false;
    }
    field += text.slice(from);
  }
  if (field || fields.length) yield [...fields, field];
}

/** Loads the export's rows into csv_rows (key, CRC-32 of the checked fields as the loader computes it); their count. */
async function loadCsv(body: Buffer[]): Promise<number> {
  const records = csvRecords(body);
  const header = records.next().value as string[];
  const at = CHECKED.map((f) => header.indexOf(f));
  if (at.some((i) => i < 0)) throw new Error(`the CSV lacks a checked field: ${header.join(',')}`);
  await owner.query('create temporary table csv_rows (id uuid, crc bigint)');
  const sink = owner.query(copyFrom('copy csv_rows from stdin with (format csv)'));
  let n = 0;
  await pipeline(
    (function* () {
      let batch = '';
      for (const r of records) {
        n++;
        batch += `${r[at[0]]},${crc32(at.map((i) => r[i]).join('|'))}\n`;
        if (batch.length > 1 << 16) {
          yield batch;
          batch = '';
        }
      }
      if (batch) yield batch;
    })(),
    sink,
  );
  return n;
}

/** Checks one read (see the head of this file); its notes. */
async function check(key: string, paged: Paged, loaderFile: string, csvBody: Buffer[], written: number): Promise<string> {
  await owner.query('create temporary table loader_rows (id uuid, crc bigint)');
  await pipeline(createReadStream(loaderFile), owner.query(copyFrom('copy loader_rows from stdin with (format csv)')));
  const csvRows = await loadCsv(csvBody);
  const { rows } = await owner.query<Record<string, string>>(
    `select (select count(*) from loader_rows l where not exists (select 1 from csv_rows c where c.id = l.id)) as read_not_exported,
            (select count(*) from loader_rows l join csv_rows c using (id) where c.crc <> l.crc) as differ,
            (select count(*) from start_keys s where not exists (select 1 from csv_rows c where c.id = s.id)) as not_exported,
            (select count(*) from csv_rows c where not exists (select 1 from timesheets t where t.tenant_id = $1 and t.id = c.id and t.deleted_on is null)) as exported_not_live,
            (select count(*) from start_keys s where not exists (select 1 from loader_rows l where l.id = s.id)) as missed,
            (select count(*) from start_keys s where not exists (select 1 from loader_rows l where l.id = s.id)
                and s.id < (select id from loader_rows order by id desc limit 1)) as missed_within,
            (select count(*) from loader_rows) as distinct_read,
            (select count(*) from start_keys) as start_rows`,
    [creds.tenantId],
  );
  await owner.query('drop table loader_rows; drop table csv_rows');
  const r = Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
  const twice = paged.rows - paged.distinct;
  const fail = (what: string) => {
    throw new Error(`${key}: ${what} (${JSON.stringify({ ...r, twice, written, csvRows })})`);
  };
  if (r.distinct_read !== paged.distinct) fail('the loader kept another number of keys than it read');
  if (r.read_not_exported) fail('rows read that the export does not have');
  if (r.differ) fail('rows that differ from the export');
  if (r.not_exported || r.exported_not_live) fail('the export is not the live rows');
  if (written === 0 && (r.missed || twice)) fail('rows missed or read twice without writes');
  if (r.missed_within) fail('a live row missed before the last key read');
  if (r.missed > written || twice > written) fail('more rows missed or read twice than inserted');
  return `${fmt(paged.rows)} rows read in ${paged.pages} pages (${fmt(twice)} twice); of the ${fmt(r.start_rows)} live at the start ${fmt(r.missed)} not read (the last); ${fmt(csvRows)} exported, all read rows equal to theirs; ${written} written`;
}

const results: Record<string, { paged: number[]; csv: number[]; pagedCpu: number[]; csvCpu: number[] }> = {};
try {
  for (const [label, cwd] of checkouts) servers.push({ label, s: await startServerProcess({ ...env, ...serverMemoryEnv(cwd) }, cwd) });
  await owner.query('vacuum analyze timesheets');
  console.log(`${QUERY} of tenant ${creds.tenantId}: ${fmt(await liveCount())} live timesheets; load average ${load()}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const writes of WRITES) {
      for (const { label, s } of round % 2 === 0 ? servers : [...servers].reverse()) {
        const key = `${label}, ${writes ? 'a timesheet written every second' : 'no writes'}`;
        results[key] ??= { paged: [], csv: [], pagedCpu: [], csvCpu: [] };
        const r = results[key];
        const pid = s.child.pid as number;
        await owner.query(`create temporary table start_keys as select id ${LIVE}`, [creds.tenantId]);
        const w = writes ? writer() : null;
        const loaderFile = path.join(dir, 'loader.csv');
        const counters = await pageCounters(s.baseUrl);
        let cpu = cpuSeconds({ [pid]: 'server' }).server ?? 0;
        const paged = await python(s.baseUrl, loaderFile);
        const pageNotes = counterDelta(counters, await pageCounters(s.baseUrl));
        r.pagedCpu.push((cpuSeconds({ [pid]: 'server' }).server ?? 0) - cpu);
        // The writer stops with the paged read: the export is the rows as they are once the read ended.
        const written = w ? await w.stop() : 0;
        cpu = cpuSeconds({ [pid]: 'server' }).server ?? 0;
        const csv = await csvExport(s.baseUrl);
        r.csvCpu.push((cpuSeconds({ [pid]: 'server' }).server ?? 0) - cpu);
        const note = await check(key, paged, loaderFile, csv.body, written);
        await owner.query('drop table start_keys');
        r.paged.push(paged.seconds);
        r.csv.push(csv.seconds);
        console.log(
          `  ${key}: paged ${fmt(paged.seconds, 1)} s (+${fmt(paged.bookkeeping, 1)} s of the check's bookkeeping, not counted), CSV ${fmt(csv.seconds, 1)} s, ratio ${fmt(paged.seconds / csv.seconds, 2)}x, server CPU ${fmt(r.pagedCpu.at(-1) ?? 0, 1)} / ${fmt(r.csvCpu.at(-1) ?? 0, 1)} s; ${note}; pages: ${pageNotes}; load average ${load()}`,
        );
      }
    }
  }
  console.log(
    `\n${QUERY} read by a Python requests client in pages of ${fmt(TAKE)} (orderBy ${KEY}) vs one CSV export; medians of ${ROUNDS} round(s); load average ${load()}`,
  );
  console.log('| server | writes | paged read (s) | CSV export (s) | ratio (target <= 2.5x) | server CPU s: paged / CSV |\n|---|---|---|---|---|---|');
  for (const [key, r] of Object.entries(results)) {
    const [label, writes] = key.split(', ');
    console.log(
      `| ${label} | ${writes} | ${fmt(median(r.paged), 1)} | ${fmt(median(r.csv), 1)} | ${fmt(median(r.paged) / median(r.csv), 2)}x | ${fmt(median(r.pagedCpu), 1)} / ${fmt(median(r.csvCpu), 1)} |`,
    );
  }
  for (const { label, s } of servers) {
    console.log(
      `server ${label}: peak RSS (VmHWM) ${fmt(vm(s.child.pid as number, 'VmHWM'), 1)} MB (target < 300 MB), now ${fmt(vm(s.child.pid as number, 'VmRSS'), 1)} MB`,
    );
  }
} finally {
  for (const { s } of servers) await s.stop();
  // The timesheets the writer added are removed (a kept database stays as it was).
  await owner.query(`delete from timesheets where tenant_id = $1 and description = 'bench loader write'`, [creds.tenantId]);
  await owner.end();
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}
