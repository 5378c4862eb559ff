// Integration API benchmark: POST /api/users updates over HTTP (autocannon, 8 connections, each request
// changes one user's Phone) against two baselines sent directly through pg on 8 connections:
// - raw: one hand-written INSERT … ON CONFLICT per update (issue 32, item 3b), as the database owner with no
//   transaction around it: it resolves CompanyCode, DepartmentExternalId and TypologyExternalId, upserts the user
//   on the same unique constraint (tenant_id, external_id) and appends the same outbox event row (Created or
//   Updated, the changed fields' names and values) in one statement, a named prepared statement per connection.
//   Before the rounds it is checked to give identical results: a user created and then updated through it and
//   another through POST /api/users end with the same row and the same event rows (ids and names aside).
// - replayed: the service's own statements, captured from the service itself (Kysely's query log while it
//   updates a marker user: tenant binding, reference resolution, the upsert, the event insert) and replayed with
//   each user's values, inside BEGIN/COMMIT like the server's transaction.
// Alternating rounds, medians. Target (issue 32): HTTP rate >= 80% of the raw rate.
// Run: npm run bench -- integration-users   (or: npx node bench/integration-users.ts)
import { readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { upsertUser } from '../src/integration/users.ts';
import { bindTenant } from '../src/platform/db/database.ts';
import type { Database } from '../src/platform/db/schema.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const USERS = 800;

// The hand-written statement of the raw baseline. $1 tenant, $2 UserName, $3 Name, $4 ExternalId, $5 CompanyCode,
// $6 DepartmentExternalId, $7 TypologyExternalId, $8 IsActive, $9 Phone. The event's detail: on create every
// non-null column, on update the written columns whose value changed, named as the API names them.
const UPDATED_COLUMNS = ['user_name', 'name', 'external_id', 'is_active', 'phone', 'company_id', 'department_id', 'typology_id'];
const RAW_UPSERT = `
with ref as (
  select c.id as company_id, d.id as department_id,
    (select y.id from typologies y where y.tenant_id = $1 and y.external_id = $7
      order by (y.department_id = d.id) desc nulls last limit 1) as typology_id
  from companies c join departments d on d.tenant_id = c.tenant_id and d.company_id = c.id and d.external_id = $6
  where c.tenant_id = $1 and c.code = $5
), up as (
  insert into users as t (tenant_id, user_name, name, external_id, is_active, phone, company_id, department_id, typology_id,
    created_by_id, modified_by_id, inactivated_on_utc)
  select $1, $2, $3, $4, $8, $9, ref.company_id, ref.department_id, ref.typology_id, null, null, case when not $8 then now() end
  from ref where ref.typology_id is not null
  on conflict (tenant_id, external_id) do update set
    ${UPDATED_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')},
    inactivated_on_utc = case when t.is_active = excluded.is_active then t.inactivated_on_utc when excluded.is_active then null else now() end,
    modified_on_utc = now(), modified_by_id = excluded.modified_by_id
  where row(${UPDATED_COLUMNS.map((c) => `t.${c}`).join(', ')}) is distinct from row(${UPDATED_COLUMNS.map((c) => `excluded.${c}`).join(', ')})
  returning (xmax = 0) as inserted, to_jsonb(old) as before, to_jsonb(new) as after
), ev as (
  insert into events (tenant_id, action_type, document_type, document_id, detail, user_id)
  select $1, case when up.inserted then 'Created' else 'Updated' end, 'Skill.Module.BusinessObjects.User', (up.after->>'id')::uuid,
    (select coalesce(jsonb_object_agg(
        case a.key when 'email' then 'Mail' when 'password_hash' then 'Password' else replace(initcap(replace(a.key, '_', ' ')), ' ', '') end,
        case when a.key = 'password_hash' then '"********"'::jsonb else a.value end), '{}')
      from jsonb_each(up.after) a
      where a.key not in ('tenant_id', 'created_on_utc', 'created_by_id', 'modified_on_utc', 'modified_by_id', 'inactivated_on_utc')
        and case when up.inserted then a.value <> 'null'::jsonb
                 else a.key in (${UPDATED_COLUMNS.map((c) => `'${c}'`).join(', ')}) and a.value is distinct from up.before -> a.key end),
    null
  from up
)
select up.inserted, up.after->>'id' as id from up`;

const db = await benchDatabase();
try {
  // No workers in the measured process (ATRIUM_ROLE=api): both sides' Updated events stay in the outbox, so neither
  // side's CPU includes dispatching the other's.
  const env = benchEnv(db.url, { ATRIUM_ROLE: 'api' });
  // With a baseline tree, its CLI creates the tenant (an older tree refuses a database with migrations it does not know).
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env, process.env.BENCH_BASELINE_TREE));
  // BENCH_BASELINE_TREE=<checkout>: a second server from that tree (e.g. a worktree of main) on the same database,
  // started first (an older tree refuses migrations it does not know), measured in the same rounds.
  const baseline = process.env.BENCH_BASELINE_TREE ? await startServerProcess(env, process.env.BENCH_BASELINE_TREE) : null;
  const server = await startServerProcess(env);
  const servers = [{ name: 'this tree', server }, ...(baseline ? [{ name: `baseline (${process.env.BENCH_BASELINE_TREE})`, server: baseline }] : [])];
  const headers = { 'content-type': 'application/json', 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const userBody = (i: number | string, phone: string) => ({
    UserName: `bench.${i}`,
    Name: `Bench User ${i}`,
    ExternalId: `B-${i}`,
    CompanyCode: creds.companyCode,
    DepartmentExternalId: creds.departmentExternalId,
    TypologyExternalId: creds.typologyExternalId,
    IsActive: true,
    Phone: phone,
  });

  // The users every round updates, created through the API.
  const ids: string[] = [];
  for (let i = 0; i < USERS; i += CONNECTIONS) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(CONNECTIONS, USERS - i) }, (_, k) =>
        fetch(`${server.baseUrl}/api/users`, { method: 'POST', headers, body: JSON.stringify(userBody(i + k, 'initial')) }).then((r) => r.json()),
      ),
    );
    for (const u of batch) ids.push((u as { Id: string }).Id);
  }
  const marker = (await (
    await fetch(`${server.baseUrl}/api/users`, { method: 'POST', headers, body: JSON.stringify(userBody('MARKER', 'initial')) })
  ).json()) as { Id: string };

  // Capture the statements of one update, exactly as the service sends them.
  const captured: { sql: string; params: unknown[] }[] = [];
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (e) => {
      if (e.level === 'query') captured.push({ sql: e.query.sql, params: [...e.query.parameters] });
    },
  });
  await kysely.transaction().execute(async (trx) => {
    await bindTenant(trx, creds.tenantId, Date.now() + 30_000);
    await upsertUser(trx, { tenantId: creds.tenantId, userId: null }, userBody('MARKER', 'MARKER-PHONE'));
  });
  await kysely.destroy();
  const statements = captured.filter((s) => !/^(begin|commit|rollback)/i.test(s.sql));
  if (process.env.BENCH_DEBUG) console.log(JSON.stringify(captured, null, 1));
  const fill = (i: number, phone: string) => (p: unknown) =>
    typeof p === 'string'
      ? p
          .replaceAll('MARKER-PHONE', phone)
          .replaceAll(marker.Id, ids[i])
          .replaceAll('bench.MARKER', `bench.${i}`)
          .replaceAll('Bench User MARKER', `Bench User ${i}`)
          .replaceAll('B-MARKER', `B-${i}`)
      : p;

  let counter = 0;
  const nextPhone = () => `p-${++counter}`;

  // The raw baseline's values for user i, and the check that it gives what POST /api/users gives: the same
  // user row and the same event rows, after a create, an update, a repeat that changes nothing (no event) and
  // a deactivation (ids, names and times aside).
  const rawValues = (i: number | string, phone: string, active = true) => [
    creds.tenantId,
    `bench.${i}`,
    `Bench User ${i}`,
    `B-${i}`,
    creds.companyCode,
    creds.departmentExternalId,
    creds.typologyExternalId,
    active,
    phone,
  ];
  const rawUpsert = (c: pg.Client, values: unknown[]) => c.query({ name: 'raw_upsert', text: RAW_UPSERT, values });
  {
    const owner = new pg.Client({ connectionString: db.url });
    await owner.connect();
    const steps: [string, boolean][] = [
      ['c-1', true],
      ['c-2', true],
      ['c-2', true],
      ['c-3', false],
    ];
    for (const [phone, active] of steps) {
      const res = await fetch(`${server.baseUrl}/api/users`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...userBody('CHECK-H', phone), IsActive: active }),
      });
      if (!res.ok) throw new Error(`check: POST /api/users ${res.status} ${await res.text()}`);
      await rawUpsert(owner, rawValues('CHECK-R', phone, active));
    }
    const state = async (tag: string) => {
      const { rows } = await owner.query<{ id: string; row: Record<string, unknown>; inactivated: boolean }>(
        `select u.id, to_jsonb(u) - '{created_on_utc,modified_on_utc,inactivated_on_utc}'::text[] as row, u.inactivated_on_utc is not null as inactivated
         from users u where u.tenant_id = $1 and u.external_id = $2`,
        [creds.tenantId, `B-${tag}`],
      );
      const user = rows[0];
      const events = (
        await owner.query('select action_type, document_type, detail, user_id from events where tenant_id = $1 and document_id = $2 order by seq', [
          creds.tenantId,
          user.id,
        ])
      ).rows;
      return JSON.stringify({ row: user.row, inactivated: user.inactivated, events }).replaceAll(user.id, 'ID').replaceAll(tag, 'TAG');
    };
    const [viaHttp, viaRaw] = [await state('CHECK-H'), await state('CHECK-R')];
    if (viaHttp !== viaRaw) throw new Error(`the raw baseline differs from POST /api/users:\n${viaHttp}\n${viaRaw}`);
    if (process.env.BENCH_DEBUG) console.log(viaHttp);
    await owner.end();
  }

  // CPU seconds (utime + stime) of a process, from /proc: the server's, and this database's PostgreSQL backends'
  // (the server's pools and the direct clients alike), to show what one update costs each side, whatever the load.
  const procCpu = (pid: number | undefined) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };
  const watcher = new pg.Client({ connectionString: db.url });
  await watcher.connect();
  const backendsCpu = async () => {
    const { rows } = await watcher.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return new Map(rows.map((r) => [r.pid, procCpu(r.pid)]));
  };
  const pgCpuSince = async (before: Map<number, number>) => {
    let sum = 0;
    for (const [pid, cpu] of await backendsCpu()) if (before.has(pid)) sum += cpu - (before.get(pid) ?? 0);
    return sum;
  };
  const serverCpuPerUpdate: number[][] = servers.map(() => []);
  const pgCpuPerUpdate: { http: number[][]; direct: number[]; raw: number[] } = { http: servers.map(() => []), direct: [], raw: [] };

  const httpRound = async (k: number, seconds: number) => {
    const { server } = servers[k];
    let n = 0;
    const cpu0 = procCpu(server.child.pid);
    const pg0 = await backendsCpu();
    const r = await autocannon({
      url: `${server.baseUrl}/api/users`,
      connections: CONNECTIONS,
      duration: seconds,
      method: 'POST',
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(userBody(n++ % USERS, nextPhone())) }) }],
    });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`HTTP round: ${r.non2xx} non-2xx, ${r.errors} errors`);
    serverCpuPerUpdate[k].push(((procCpu(server.child.pid) - cpu0) * 1000) / r.requests.total);
    pgCpuPerUpdate.http[k].push(((await pgCpuSince(pg0)) * 1000) / r.requests.total);
    return r.requests.total / seconds;
  };

  const clients = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      return c;
    }),
  );
  const directRound = async (seconds: number) => {
    const pg0 = await backendsCpu();
    const until = Date.now() + seconds * 1000;
    let done = 0;
    let n = 0;
    await Promise.all(
      clients.map(async (c) => {
        while (Date.now() < until) {
          const i = n++ % USERS;
          const phone = nextPhone();
          await c.query('begin');
          for (const s of statements) await c.query(s.sql, s.params.map(fill(i, phone)));
          await c.query('commit');
          done++;
        }
      }),
    );
    pgCpuPerUpdate.direct.push(((await pgCpuSince(pg0)) * 1000) / done);
    return done / seconds;
  };
  const rawRound = async (seconds: number) => {
    const pg0 = await backendsCpu();
    const until = Date.now() + seconds * 1000;
    let done = 0;
    let n = 0;
    await Promise.all(
      clients.map(async (c) => {
        while (Date.now() < until) {
          await rawUpsert(c, rawValues(n++ % USERS, nextPhone()));
          done++;
        }
      }),
    );
    pgCpuPerUpdate.raw.push(((await pgCpuSince(pg0)) * 1000) / done);
    return done / seconds;
  };

  // Warm-up: JIT, pools, the credential cache, PostgreSQL's caches.
  for (const k of servers.keys()) await httpRound(k, 2);
  await directRound(2);
  await rawRound(2);
  // The warm-up's CPU figures are not the rounds'.
  for (const a of [...serverCpuPerUpdate, ...pgCpuPerUpdate.http, pgCpuPerUpdate.direct, pgCpuPerUpdate.raw]) a.length = 0;
  const http: number[][] = servers.map(() => []);
  const direct: number[] = [];
  const raw: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(os.loadavg()[0]);
    // Alternate the order, so no side always runs on the machine another just warmed.
    const sides = [
      ...servers.map((_, k) => () => httpRound(k, DURATION).then((r) => http[k].push(r))),
      () => rawRound(DURATION).then((r) => raw.push(r)),
      () => directRound(DURATION).then((r) => direct.push(r)),
    ];
    for (const side of round % 2 ? sides.reverse() : sides) await side();
  }
  await Promise.all([...clients, watcher].map((c) => c.end()));
  const check = (await (await fetch(`${server.baseUrl}/api/users/external?externalId=B-0`, { headers })).json()) as { Phone: string };
  for (const { server } of servers) await server.stop();

  const rawRps = median(raw);
  const directRps = median(direct);
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  console.log(`1-minute load average at the start of each round: ${loads.map((l) => fmt(l, 2)).join(', ')}`);
  console.log(
    `statements per update: replayed ${statements.length} + BEGIN/COMMIT, raw 1; ${USERS} users; ${CONNECTIONS} connections; ${DURATION} s x ${ROUNDS} rounds`,
  );
  const ms = (xs: number[]) => fmt(median(xs), 2);
  console.log(
    `raw INSERT … ON CONFLICT through pg       median ${fmt(rawRps)} updates/s  rounds: ${raw.map((r) => fmt(r)).join(', ')}; PostgreSQL CPU ${ms(pgCpuPerUpdate.raw)} ms/update`,
  );
  console.log(
    `service's statements replayed through pg  median ${fmt(directRps)} updates/s  rounds: ${direct.map((r) => fmt(r)).join(', ')}; PostgreSQL CPU ${ms(pgCpuPerUpdate.direct)} ms/update`,
  );
  const rows: string[] = [];
  for (const [k, { name }] of servers.entries()) {
    const httpRps = median(http[k]);
    console.log(`\nPOST /api/users, ${name}: median ${fmt(httpRps)} updates/s  rounds: ${http[k].map((r) => fmt(r)).join(', ')}`);
    console.log(
      `  CPU per update: server ${ms(serverCpuPerUpdate[k])} ms (rounds ${serverCpuPerUpdate[k].map((c) => fmt(c, 2)).join(', ')}), PostgreSQL ${ms(pgCpuPerUpdate.http[k])} ms`,
    );
    console.log(`  ratio HTTP / raw: ${fmt((httpRps / rawRps) * 100, 1)}% (target >= 80%); HTTP / replayed: ${fmt((httpRps / directRps) * 100, 1)}%`);
    rows.push(
      `| ${name} | ${fmt(httpRps)} | ${fmt(rawRps)} | **${fmt((httpRps / rawRps) * 100, 1)} %** | ${fmt(directRps)} (${fmt((httpRps / directRps) * 100, 1)} %) | ` +
        `${ms(serverCpuPerUpdate[k])} | ${ms(pgCpuPerUpdate.http[k])} vs ${ms(pgCpuPerUpdate.raw)} vs ${ms(pgCpuPerUpdate.direct)} |`,
    );
  }
  console.log(
    '\n| updates/s | HTTP | raw | HTTP / raw | replayed (HTTP / replayed) | server CPU ms/update | PostgreSQL CPU ms/update: HTTP vs raw vs replayed |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  if (!check.Phone?.startsWith('p-')) throw new Error(`updates did not land: ${JSON.stringify(check)}`);
} finally {
  await db.stop();
}
