// `atrium import` benchmark (issue #33): a demo tenant (BENCH_SCALE, default 5 ≈ 100,000 timesheets) on one
// server imported into an empty tenant of another (its own database), by the CLI in its own process, against
// the sum of one CSV export (Accept: text/csv) of every named query the import reads, from the same source.
// Goal: import ≤ 3× the exports; peak RSS of the importing process (VmHWM) < 300 MB.
// Run: npm run bench -- import   (BENCH_SCALE overrides the scale; BENCH_BASELINE=<another checkout> also imports
// with that checkout's CLI into a second empty tenant, in the same run, for a side-by-side figure)

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { QUERY_IMPORTS } from '../src/import/mappings.ts';
import { benchDatabase, benchEnv, fmt, root, runCli, startServerProcess } from './lib.ts';

const SCALE = process.env.BENCH_SCALE ?? '5';
/** Node's flags of `npm run atrium` (package.json), so the importing process runs as the README's command runs it. */
const atriumScript: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.atrium;
const NODE_FLAGS = atriumScript.split(/\s+/).filter((a) => a.startsWith('--'));
const ENTRY = atriumScript.split(/\s+/).find((a) => /\.(ts|js)$/.test(a)) ?? 'src/main.ts';
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const hwmMb = (pid: number): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** Rows of the imported tables in a tenant, read from its database: the identical-results check. */
const TABLES = ['users', 'commercial_clients', 'jobs', 'timesheets', 'leaves', 'attendances', 'workloads', 'comments', 'document_history'];
/**
 * Leaves never requested for approval (drafts) are shown by no named query (the platform's DE-Leaves reads
 * RequestedApproval = 1 only; docs/import.md): compared without them, and counted apart.
 */
const WHERE: Record<string, string> = { leaves: 'and (requested_approval or deleted_on is not null)' };
async function tableCounts(url: string, tenantId: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, number> = {};
    for (const t of TABLES)
      out[t] = Number((await c.query(`select count(*)::int as n from ${t} where tenant_id = $1 ${WHERE[t] ?? ''}`, [tenantId])).rows[0].n);
    return out;
  } finally {
    await c.end();
  }
}

const [srcDb, tgtDb] = [await benchDatabase('atrium_import_src'), await benchDatabase('atrium_import_tgt')];
const source = await startServerProcess(benchEnv(srcDb.url));
try {
  const started = Date.now();
  const from = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Source', '--demo', '--scale', SCALE, '--json'], benchEnv(srcDb.url)));
  console.log(`source tenant at scale ${SCALE} created in ${fmt((Date.now() - started) / 1000, 1)} s (load ${load()})`);
  const headers = { 'x-apptenant': from.tenantId, 'x-appid': from.appId, 'x-appsecret': from.appSecret, 'content-type': 'application/json' };
  const queries = [...new Set(QUERY_IMPORTS.map((q) => q.namedQuery))];

  // The baseline: one CSV export of each query the import reads, one after the other.
  let exportMs = 0;
  let exportBytes = 0;
  for (const q of queries) {
    const t0 = performance.now();
    const res = await fetch(`${source.baseUrl}/api/v3/analytics/named-query/${q}/dynamic-execute`, {
      method: 'POST',
      headers: { ...headers, accept: 'text/csv' },
      body: JSON.stringify({ queryBuilder: {} }),
    });
    exportBytes += (await res.arrayBuffer()).byteLength;
    exportMs += performance.now() - t0;
  }
  console.log(`CSV exports of ${queries.length} queries: ${fmt(exportMs / 1000, 2)} s, ${fmt(exportBytes / 1e6, 1)} MB (load ${load()})`);

  // The import, by the CLI in its own process (of `tree`), into an empty tenant; its peak RSS read from /proc while it runs.
  // A baseline tree imports into its own database (it refuses one that holds migrations it does not know).
  const importWith = async (tree: string, tgtDb: { url: string }) => {
    const into = JSON.parse(await runCli(['tenants', 'create', '--name', `Bench Target ${Date.now()}`, '--json'], benchEnv(tgtDb.url), tree));
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [
        ...NODE_FLAGS,
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        // The baseline tree's own entry when it has no bin/atrium.js of this shape.
        existsSync(path.join(tree, ENTRY)) ? ENTRY : 'src/main.ts',
        'import',
        '--from',
        source.baseUrl,
        '--tenant',
        from.tenantId,
        '--app-id',
        from.appId,
        '--into',
        into.tenantId,
        '--json',
      ],
      { cwd: tree, env: { ...process.env, ...benchEnv(tgtDb.url), ATRIUM_IMPORT_APP_SECRET: from.appSecret }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let errOut = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (errOut += d));
    let peak = 0;
    let cpu = 0;
    const poll = setInterval(() => {
      try {
        peak = Math.max(peak, hwmMb(child.pid ?? 0));
        cpu = cpuSeconds(child.pid ?? 0);
      } catch {}
    }, 100);
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    clearInterval(poll);
    const importMs = performance.now() - t0;
    if (code !== 0) throw new Error(`import (${tree}) failed: ${errOut}`);
    const report = JSON.parse(out);
    const [a, b] = await Promise.all([tableCounts(srcDb.url, from.tenantId), tableCounts(tgtDb.url, into.tenantId)]);
    const identical = JSON.stringify(a) === JSON.stringify(b);
    console.log(
      `${tree}: rows per table, source vs target: ${identical ? 'identical' : `DIFFERENT ${JSON.stringify(a)} vs ${JSON.stringify(b)}`} (load ${load()})`,
    );
    if (!identical) process.exitCode = 1;
    return {
      seconds: fmt(importMs / 1000, 2),
      rows: `${fmt(report.rowsRead)} read, ${fmt(report.changedRows)} written`,
      'cpu s (importer)': fmt(cpu, 1),
      'peak RSS MB': fmt(peak, 0),
      ratio: `${fmt(importMs / exportMs, 2)} (goal ≤ 3)`,
    };
  };
  const drafts = await (async () => {
    const c = new pg.Client({ connectionString: srcDb.url });
    await c.connect();
    const n = (await c.query('select count(*)::int as n from leaves where tenant_id = $1 and not requested_approval and deleted_on is null', [from.tenantId]))
      .rows[0].n;
    await c.end();
    return n;
  })();
  const rows: Record<string, Record<string, string>> = {
    exports: { seconds: fmt(exportMs / 1000, 2), rows: '', 'cpu s (importer)': '', 'peak RSS MB': '', ratio: '1.00' },
  };
  if (process.env.BENCH_BASELINE) {
    const baseDb = await benchDatabase('atrium_import_base');
    try {
      rows['import (baseline)'] = await importWith(path.resolve(process.env.BENCH_BASELINE), baseDb);
    } finally {
      await baseDb.stop();
    }
  }
  rows.import = await importWith(root, tgtDb);
  console.table(rows);
  console.log(
    `scale ${SCALE}, load ${load()}; import time includes the CLI's start and migrations; peak RSS goal < 300 MB; ${drafts} draft leaves (never requested) shown by no named query, not compared`,
  );
} finally {
  await source.stop();
  await srcDb.stop();
  await tgtDb.stop();
}
