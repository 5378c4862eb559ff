// Scheduled extraction benchmark on the demo generator at scale 50 (about 1.05M timesheets): a
// schedule of DE-TimeSheets (all 38 fields) run now as csv (3 runs) and as ndjson and json (1 run each),
// by the server process (role all, its worker inside). Reports duration, rows/s, file size, and the
// server's peak RSS (VmHWM; target for the 1M-row csv < 300 MB), sampled RSS while each run ran.
// Run: npm run bench -- schedules   (BENCH_SCALE=50)
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const SCALE = process.env.BENCH_SCALE ?? '50';

const db = await benchDatabase('atrium_bench_schedules');
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-schedules-'));
try {
  // As `npm start` runs the server: with a young generation of 8 MB semi-spaces.
  const env = benchEnv(db.url, { NODE_OPTIONS: '--max-semi-space-size=8', DATA_DIR: dataDir });
  const t0 = Date.now();
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--demo', '--scale', SCALE, '--json'], env));
  console.log(`demo data at scale ${SCALE}: ${fmt((Date.now() - t0) / 1000, 1)} s`);
  const server = await startServerProcess(env);
  const status = (field: 'VmHWM' | 'VmRSS') =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const auth = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.baseUrl}/api/v3/analytics/schedules${url}`, {
      method,
      headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await new Promise((r) => setTimeout(r, 2000));
  console.log(`server RSS idle: ${fmt(status('VmRSS'), 1)} MB (peak so far ${fmt(status('VmHWM'), 1)} MB)`);

  const runOnce = async (format: string) => {
    const schedule = await api('POST', '', { Name: `bench ${format}`, Query: 'DE-TimeSheets', Format: format, CronExpression: '0 3 * * *', Active: false });
    const started = performance.now();
    let run = await api('POST', `/${schedule.id}/run?wait=0`);
    let peak = 0;
    while (run.status === 'Running') {
      await new Promise((r) => setTimeout(r, 200));
      peak = Math.max(peak, status('VmRSS'));
      run = await api('GET', `/${schedule.id}/runs/${run.id}`);
    }
    const ms = performance.now() - started;
    if (run.status !== 'Succeeded') throw new Error(`${format} run failed: ${run.error}`);
    console.log(
      `  ${format.padEnd(6)} ${fmt(run.rows)} rows, ${fmt(run.bytes / 1024 / 1024, 1)} MB in ${fmt(ms / 1000, 1)} s = ${fmt(run.rows / (ms / 1000))} rows/s; RSS during the run up to ${fmt(peak, 1)} MB`,
    );
    await api('DELETE', `/${schedule.id}`);
    return ms;
  };

  const csv = [];
  for (let i = 0; i < 3; i++) csv.push(await runOnce('csv'));
  const hwmCsv = status('VmHWM');
  await runOnce('ndjson');
  await runOnce('json');
  console.log(`\ncsv median: ${fmt(median(csv) / 1000, 1)} s`);
  console.log(`server peak RSS (VmHWM) after the csv runs: ${fmt(hwmCsv, 1)} MB (target < 300 MB); after ndjson and json: ${fmt(status('VmHWM'), 1)} MB`);
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
  await server.stop();
} finally {
  await db.stop();
  await rm(dataDir, { recursive: true, force: true });
}
