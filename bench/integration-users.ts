// Integration API benchmark: POST /api/users updates over HTTP (autocannon, 8 connections, each request
// changes one user's Phone) against the very same statements sent directly through pg on 8 connections.
// The direct statements are captured from the service itself (Kysely's query log while it updates a
// marker user: tenant binding, reference resolution, the upsert, the event insert) and replayed with
// each user's values, inside BEGIN/COMMIT like the server's transaction. Alternating rounds, medians.
// Target: HTTP rate >= 50% of the direct rate.
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

const db = await benchDatabase();
try {
  // No workers in the measured process (ATRIUM_ROLE=api): both sides' Updated events stay in the outbox, so neither
  // side's CPU includes dispatching the other's.
  const env = benchEnv(db.url, { ATRIUM_ROLE: 'api' });
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env));
  const server = await startServerProcess(env);
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
  const serverCpuPerUpdate: number[] = [];
  const pgCpuPerUpdate: { http: number[]; direct: number[] } = { http: [], direct: [] };

  const httpRound = async (seconds: number) => {
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
    serverCpuPerUpdate.push(((procCpu(server.child.pid) - cpu0) * 1000) / r.requests.total);
    pgCpuPerUpdate.http.push(((await pgCpuSince(pg0)) * 1000) / r.requests.total);
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

  // Warm-up: JIT, pools, the credential cache, PostgreSQL's caches.
  await httpRound(2);
  await directRound(2);
  const http: number[] = [];
  const direct: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    http.push(await httpRound(DURATION));
    direct.push(await directRound(DURATION));
  }
  await Promise.all([...clients, watcher].map((c) => c.end()));
  const check = (await (await fetch(`${server.baseUrl}/api/users/external?externalId=B-0`, { headers })).json()) as { Phone: string };
  await server.stop();

  const httpRps = median(http);
  const directRps = median(direct);
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `statements per update (direct): ${statements.length} + BEGIN/COMMIT; ${USERS} users; ${CONNECTIONS} connections; ${DURATION} s x ${ROUNDS} rounds`,
  );
  console.log(`POST /api/users (HTTP, update)         median ${fmt(httpRps)} updates/s  rounds: ${http.map((r) => fmt(r)).join(', ')}`);
  console.log(`same statements directly through pg    median ${fmt(directRps)} updates/s  rounds: ${direct.map((r) => fmt(r)).join(', ')}`);
  console.log(
    `server process CPU per update: median ${fmt(median(serverCpuPerUpdate), 2)} ms (rounds: ${serverCpuPerUpdate.map((c) => fmt(c, 2)).join(', ')})`,
  );
  console.log(
    `PostgreSQL CPU per update (all backends of the database): HTTP median ${fmt(median(pgCpuPerUpdate.http), 2)} ms, direct ${fmt(median(pgCpuPerUpdate.direct), 2)} ms`,
  );
  console.log(`ratio HTTP / direct: ${fmt((httpRps / directRps) * 100, 1)}% (target >= 80%)`);
  if (!check.Phone?.startsWith('p-')) throw new Error(`updates did not land: ${JSON.stringify(check)}`);
} finally {
  await db.stop();
}
