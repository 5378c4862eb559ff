// The paging client of issue 32 item 4: a Python `requests` client reads all of DE-TimeSheets the way the
// platform's public BigQuery loader does (SkillsWorkflow/GoogleBigQuery, src/sw_bq_loader/skills_workflow.py:
// a requests.Session, POST …/named-query/DE-TimeSheets/dynamic-execute with Accept/Content-Type and the
// X-AppTenant/X-AppId/X-AppSecret headers, {"queryBuilder": {"skip", "take", "orderBy": [{field, "asc"}]}},
// skip = rows read so far, stopping at the first page's totalCount, an empty page or a short one), with take
// 2,000 and orderBy on the key (TimesheetId), against one CSV export of the same rows read over HTTP; without
// writes and while another client writes a timesheet every second (an insert as the tenant, which every kept
// count, position and page read ahead of the tenant's timesheets must notice). Alternating rounds; the server's
// CPU seconds per read and its peak RSS (VmHWM) with `npm start`'s memory flags; the load average.
// Run: npm run bench -- extraction-loader-python
//   BENCH_DATABASE_URL=postgres://… BENCH_TENANT=/path/tenant-50.json (a kept database; else a fresh one with a
//   BENCH_SCALE demo tenant, default 50), BENCH_ROUNDS=1, BENCH_BEFORE=/path/to/other/checkout (its server
//   measured too, alternating with this one's: before/after in one run).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { benchDatabase, benchEnv, cpuSeconds, fmt, median, root, runCli, SERVER_MEMORY_ENV, startServerProcess } from './lib.ts';

const ROUNDS = Math.max(1, Math.min(20, Number(process.env.BENCH_ROUNDS ?? 1)));
const TAKE = 2000;

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

// The loader's paging loop (facts of the public loader, written here for the bench): rows are counted and their
// keys kept (as 128-bit ints) to check that no row live at the start was missed, not held as the loader holds them.
const LOADER = `
import json, os, sys, time, uuid, requests
base, tenant, app, secret = sys.argv[1:5]
take = int(sys.argv[5])
session = requests.Session()
url = base + "/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute"
headers = {"Accept": "application/json", "Content-Type": "application/json",
           "X-AppTenant": tenant, "X-AppId": app, "X-AppSecret": secret}
builder = {"skip": 0, "take": take, "orderBy": [{"field": "TimesheetId", "direction": "asc"}]}
def page(b):
    r = session.post(url, headers=headers, json={"queryBuilder": b}, timeout=90)
    if r.status_code != 200:
        raise SystemExit("HTTP %d: %s" % (r.status_code, r.text[:300]))
    p = r.json()
    return p["data"], p.get("totalCount")
start = time.perf_counter()
rows, total = page(builder)
seen = set(uuid.UUID(r["TimesheetId"]).int for r in rows)
n, pages = len(rows), 1
if n >= take:
    while total is None or n < total:
        b = dict(builder, skip=n, take=take)
        rows, _ = page(b)
        pages += 1
        if not rows:
            break
        n += len(rows)
        seen.update(uuid.UUID(r["TimesheetId"]).int for r in rows)
        if len(rows) < take:
            break
print(json.dumps({"rows": n, "distinct": len(seen), "pages": pages, "total": total, "seconds": time.perf_counter() - start}))
`;

type Creds = { tenantId: string; appId: string; appSecret: string };
const kept = process.env.BENCH_DATABASE_URL;
const db = kept ? { url: kept, stop: async () => {} } : await benchDatabase('atrium_bench_loader');
const env = benchEnv(db.url, { ATRIUM_REQUEST_TIMEOUT_MS: '600000' });
const creds: Creds = kept
  ? JSON.parse(readFileSync(process.env.BENCH_TENANT ?? '', 'utf8'))
  : JSON.parse(await runCli(['tenants', 'create', '--name', 'Loader', '--demo', '--scale', process.env.BENCH_SCALE ?? '50', '--json'], env));
ensurePythonRequests();
const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-loader-'));
const script = path.join(dir, 'loader.py');
writeFileSync(script, LOADER);

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
const liveCount = async () =>
  Number((await owner.query('select count(*) as n from timesheets where tenant_id = $1 and deleted_on is null', [creds.tenantId])).rows[0].n);

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

function python(baseUrl: string): Promise<{ rows: number; distinct: number; pages: number; total: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script, baseUrl, creds.tenantId, creds.appId, creds.appSecret, String(TAKE)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`loader exited ${code}: ${out}`))));
  });
}

async function csvExport(baseUrl: string): Promise<{ rows: number; seconds: number }> {
  const s = performance.now();
  const res = await request(`${baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
    method: 'POST',
    headers: { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json', accept: 'text/csv' },
    body: '{}',
  });
  if (res.statusCode !== 200) throw new Error(`csv: ${res.statusCode}`);
  let lines = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  return { rows: lines - 1, seconds: (performance.now() - s) / 1000 };
}

const results: Record<string, { paged: number[]; csv: number[]; pagedCpu: number[]; csvCpu: number[]; note: string[] }> = {};
try {
  for (const [label, cwd] of checkouts) servers.push({ label, s: await startServerProcess({ ...env, ...SERVER_MEMORY_ENV }, cwd) });
  await owner.query('vacuum analyze timesheets');
  console.log(`DE-TimeSheets of tenant ${creds.tenantId}: ${fmt(await liveCount())} live timesheets; load average ${load()}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const writes of [false, true]) {
      for (const { label, s } of round % 2 === 0 ? servers : [...servers].reverse()) {
        const key = `${label}, ${writes ? 'a timesheet written every second' : 'no writes'}`;
        results[key] ??= { paged: [], csv: [], pagedCpu: [], csvCpu: [], note: [] };
        const r = results[key];
        const pid = s.child.pid as number;
        const w = writes ? writer() : null;
        const liveBefore = await liveCount();
        let cpu = cpuSeconds({ [pid]: 'server' }).server ?? 0;
        const paged = await python(s.baseUrl);
        r.pagedCpu.push((cpuSeconds({ [pid]: 'server' }).server ?? 0) - cpu);
        cpu = cpuSeconds({ [pid]: 'server' }).server ?? 0;
        const csv = await csvExport(s.baseUrl);
        r.csvCpu.push((cpuSeconds({ [pid]: 'server' }).server ?? 0) - cpu);
        const written = w ? await w.stop() : 0;
        const liveAfter = await liveCount();
        // Every row live when the read began is read (distinct keys), nothing beyond what exists at its end.
        if (paged.distinct < liveBefore || paged.distinct > liveAfter) {
          throw new Error(`${key}: read ${paged.distinct} distinct rows, ${liveBefore} live before and ${liveAfter} after`);
        }
        if (csv.rows < liveBefore || csv.rows > liveAfter) throw new Error(`${key}: the CSV export had ${csv.rows} rows (${liveBefore}–${liveAfter} live)`);
        r.paged.push(paged.seconds);
        r.csv.push(csv.seconds);
        r.note.push(`${fmt(paged.rows)} rows (${fmt(paged.distinct)} distinct) in ${paged.pages} pages, ${written} written`);
        console.log(
          `  ${key}: paged ${fmt(paged.seconds, 1)} s, CSV ${fmt(csv.seconds, 1)} s, ratio ${fmt(paged.seconds / csv.seconds, 2)}x; ${r.note.at(-1)}; load average ${load()}`,
        );
      }
    }
  }
  console.log(
    `\nDE-TimeSheets read by a Python requests client in pages of ${fmt(TAKE)} (orderBy TimesheetId) vs one CSV export; medians of ${ROUNDS} round(s); load average ${load()}`,
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
