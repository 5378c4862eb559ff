// User feed benchmark: one AD_UserAccounts file of 10,000 rows (new users over 20 typology groups and 50
// business titles, every tenth reporting to an earlier user) on a real sshd, run end to end through
// POST /api/v3/user-feed/run: download, every row through the Integration API's services with its events
// and its committed outcome, the results file and the move. Target: under 60 s.
// Baseline: what an engineer would write by hand over pg for the same file (download, parse, one
// transaction: groups and typologies with INSERT … ON CONFLICT, the users by COPY into a temp table and one
// INSERT … SELECT, managers by one UPDATE), with no events and no per-row outcomes; checked to leave the same
// users. Rounds alternate Atrium and the baseline, each on a fresh tenant.
// Run: npm run bench -- user-feed   (BENCH_ROWS, BENCH_ROUNDS override the defaults)
// The engine first: the CSV parser's module is one of its action families.
import '../src/automations/engine.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import SftpClient from 'ssh2-sftp-client';
import { parseCsv } from '../src/automations/actions/files.ts';
import { startSftpServer } from '../test/sftp-server.ts';
import { csv, type FeedRow } from '../test/user-feed-helpers.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const FILE = 'AD_UserAccounts_20250301040000.csv';

function rows(creds: { companyCode: string; departmentExternalId: string }): FeedRow[] {
  return Array.from({ length: ROWS }, (_, i) => {
    const id = `E${String(i).padStart(6, '0')}`;
    return {
      companyCode: creds.companyCode,
      departmentid: creds.departmentExternalId,
      userTypologyGroup: `Group ${(i % 50) % 20}`,
      resourceType: `Title ${i % 50}`,
      userType: 'Regular/Permanent',
      name: `Employee ${id}`,
      externalId: id,
      externalNumber: `P${i}`,
      responsible: i % 10 === 9 ? `E${String(i - 9).padStart(6, '0')}` : '',
      email: `${id.toLowerCase()}@agency.example`,
      ssoUsername: `${id.toLowerCase()}@agency.example`,
      username: id.toLowerCase(),
      weeklyRequiredHours: '40',
      hireDate: '2024-05-01',
      isActive: 'true',
    };
  });
}

/** The users a run leaves, comparable across tenants. */
async function usersOf(pool: pg.Pool, tenantId: string): Promise<string[]> {
  const { rows: r } = await pool.query(
    `select u.external_id, u.user_name, u.name, u.email, u.sso_user_name, u.is_active, u.external_number, u.required_weekly_hours::float8 as h,
       u.hire_date::text, u.timesheet_required, t.name as typology, g.name as grp, m.external_id as manager, ut.name as user_type
     from users u join typologies t on t.id = u.typology_id join typology_groups g on g.id = t.typology_group_id
       join user_types ut on ut.id = u.user_type_id left join users m on m.id = u.responsible_id
     where u.tenant_id = $1 and u.external_id like 'E%' order by u.external_id`,
    [tenantId],
  );
  return r.map((u) => JSON.stringify(u));
}

/** The hand-written import: the same file, the same users, straight into the tables. */
async function baseline(pool: pg.Pool, sftp: { host: string; port: number; username: string; privateKey: string }, remote: string, tenantId: string) {
  const client = new SftpClient();
  await client.connect({ host: sftp.host, port: sftp.port, username: sftp.username, privateKey: sftp.privateKey });
  const text = ((await client.get(remote)) as Buffer).toString('utf8');
  await client.end();
  const [header, ...data] = (await parseCsv(text)).filter((r) => r.length > 1);
  const col = Object.fromEntries(header.map((h, i) => [h, i]));
  const db = await pool.connect();
  try {
    await db.query('begin');
    await db.query(
      'create temp table feed (ext text, company text, dep text, grp text, title text, utype text, name text, num text, resp text, mail text, sso text, uname text, hours numeric, hire date) on commit drop',
    );
    const copy = db.query(copyFrom('copy feed from stdin'));
    const esc = (v: string) => (v === '' ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t'));
    const keys = [
      'externalId',
      'companyCode',
      'departmentid',
      'userTypologyGroup',
      'resourceType',
      'userType',
      'name',
      'externalNumber',
      'responsible',
      'email',
      'ssoUsername',
      'username',
      'weeklyRequiredHours',
      'hireDate',
    ];
    await new Promise<void>((resolve, reject) => {
      copy.on('finish', resolve).on('error', reject);
      copy.end(data.map((r) => `${keys.map((k) => esc(r[col[k]])).join('\t')}\n`).join(''));
    });
    await db.query(
      `insert into typology_groups (tenant_id, name, company_id)
       select distinct $1::uuid, f.grp, c.id from feed f join companies c on c.tenant_id = $1 and c.code = f.company
       where not exists (select 1 from typology_groups g where g.tenant_id = $1 and lower(g.name) = lower(f.grp))`,
      [tenantId],
    );
    await db.query(
      `insert into typologies (tenant_id, department_id, typology_group_id, name, external_id)
       select distinct on (d.id, f.title) $1::uuid, d.id, g.id, f.title, f.title
       from feed f join companies c on c.tenant_id = $1 and c.code = f.company join departments d on d.tenant_id = $1 and d.company_id = c.id and d.external_id = f.dep
         join typology_groups g on g.tenant_id = $1 and lower(g.name) = lower(f.grp)
       on conflict do nothing`,
      [tenantId],
    );
    await db.query(
      `insert into users (tenant_id, external_id, user_name, name, email, sso_user_name, is_active, external_number, required_weekly_hours, hire_date,
         timesheet_required, company_id, department_id, typology_id, user_type_id)
       select $1, f.ext, f.uname, f.name, f.mail, f.sso, true, f.num, f.hours, f.hire, f.utype !~* '^temporary', c.id, d.id, t.id, ut.id
       from feed f join companies c on c.tenant_id = $1 and c.code = f.company join departments d on d.tenant_id = $1 and d.company_id = c.id and d.external_id = f.dep
         join typologies t on t.tenant_id = $1 and t.department_id = d.id and t.external_id = f.title join user_types ut on ut.tenant_id = $1 and ut.name = f.utype
       on conflict (tenant_id, external_id) do update set user_name = excluded.user_name, name = excluded.name, email = excluded.email`,
      [tenantId],
    );
    await db.query(
      `update users u set responsible_id = m.id from feed f join users m on m.tenant_id = $1 and m.external_id = f.resp
       where u.tenant_id = $1 and u.external_id = f.ext and f.resp is not null`,
      [tenantId],
    );
    await db.query('commit');
  } catch (err) {
    await db.query('rollback');
    throw err;
  } finally {
    db.release();
  }
}

const atriumTenants: string[] = [];
const baselineTenants: string[] = [];
const sftp = await startSftpServer();
const db = await benchDatabase();
try {
  const env = benchEnv(db.url, { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  await runCli(['migrate'], env);
  const server = await startServerProcess(env);
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const atriumTimes: number[] = [];
  const baselineTimes: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of ['atrium', 'baseline'] as const) {
        const creds = JSON.parse(await runCli(['tenants', 'create', '--name', `Bench ${side} ${round}`, '--json'], env));
        const dir = path.join(sftp.root, `${side}${round}`, 'Data');
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, FILE), csv(rows(creds)));
        const headers = { 'content-type': 'application/json', 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
        const t0 = performance.now();
        if (side === 'atrium') {
          const key = {
            ftpHostIp: sftp.address,
            ftpUsername: sftp.username,
            ftpPrivateKey: sftp.privateKey,
            ftpPath: dir,
            ftpToPathSuccess: `${dir}/Success`,
            ftpToPathFailure: `${dir}/Failure`,
            fileNameContains: 'AD_UserAccounts_',
          };
          const k = await fetch(`${server.baseUrl}/api/configuration-keys/SFTP-HRFEED`, { method: 'PUT', headers, body: JSON.stringify(key) });
          if (!k.ok) throw new Error(`key: ${k.status} ${await k.text()}`);
          const started = performance.now();
          const res = await fetch(`${server.baseUrl}/api/v3/user-feed/run`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' } });
          let body = (await res.json()) as { id: string; status: string; files: { created: number; failed: number }[] };
          // Past the request limit the run answers 202 and goes on: follow it to its end.
          while (res.status === 202 && body.status === 'Running') {
            await new Promise((r) => setTimeout(r, 200));
            body = (await (await fetch(`${server.baseUrl}/api/v3/user-feed/runs/${body.id}`, { headers })).json()) as typeof body;
          }
          atriumTimes.push(performance.now() - started);
          if (body.status !== 'Succeeded' || body.files[0]?.created !== ROWS) throw new Error(`atrium run: ${JSON.stringify(body).slice(0, 500)}`);
        } else {
          await baseline(pool, sftp, path.join(dir, FILE), creds.tenantId);
          baselineTimes.push(performance.now() - t0);
        }
        (side === 'atrium' ? atriumTenants : baselineTenants).push(creds.tenantId);
      }
    }
    const mine = await usersOf(pool, atriumTenants[0]);
    const theirs = await usersOf(pool, baselineTenants[0]);
    const differ = mine.findIndex((u, i) => u !== theirs[i]);
    const same = mine.length === ROWS && theirs.length === ROWS && differ === -1;
    if (!same) console.log(`users differ (${mine.length} vs ${theirs.length}); first:\n  ${mine[differ]}\n  ${theirs[differ]}`);
    const load = os.loadavg()[0];
    console.log(`user feed, ${fmt(ROWS)} rows, ${ROUNDS} rounds alternating (load ${load.toFixed(2)}, ${os.cpus().length} CPUs)`);
    console.log(
      `  atrium   (SFTP, services, events, per-row outcomes, results file, move): median ${fmt(median(atriumTimes) / 1000, 1)} s  [${atriumTimes.map((t) => fmt(t / 1000, 1)).join(', ')}]  ${fmt(ROWS / (median(atriumTimes) / 1000))} rows/s`,
    );
    console.log(
      `  baseline (SFTP, COPY + INSERT … SELECT, no events, no outcomes):     median ${fmt(median(baselineTimes) / 1000, 2)} s  [${baselineTimes.map((t) => fmt(t / 1000, 2)).join(', ')}]`,
    );
    console.log(`  ratio atrium/baseline: ${fmt(median(atriumTimes) / median(baselineTimes), 1)}x; same users: ${same}`);
    if (!same) process.exitCode = 1;
  } finally {
    await pool.end();
    await server.stop();
  }
} finally {
  await db.stop();
  await sftp.close();
}
