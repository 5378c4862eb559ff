// SCIM benchmark. (1) Provisioning: the same 10,000 users created through POST /scim/v2/Users (a SCIM
// token, the identity provider's body, resolved through the SCIM settings) and through POST /api/users
// (app headers, the Integration API's body), each on a fresh tenant with 8 concurrent clients; the rounds
// alternate which goes first. Target: SCIM rate >= 0.7 x the Integration API's. (2) Lookup: GET
// /scim/v2/Users?filter=userName eq "…" over a tenant of 100,000 users (the SCIM-provisioned ones plus
// users inserted by SQL), 1 client and then 8, p50 and p95 of the request time.
// Run: npm run bench -- scim   (BENCH_USERS, BENCH_ROUNDS, BENCH_LOOKUP_USERS, BENCH_LOOKUPS override the defaults)
import os from 'node:os';
import pg from 'pg';
import { benchDatabase, benchEnv, fmt, median, pct, runCli, startServerProcess } from './lib.ts';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const LOOKUP_USERS = Number(process.env.BENCH_LOOKUP_USERS ?? 100_000);
const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 2_000);

interface Creds {
  tenantId: string;
  appId: string;
  appSecret: string;
  companyCode: string;
  departmentExternalId: string;
  typologyExternalId: string;
}

const db = await benchDatabase('atrium_bench_scim');
const server = await startServerProcess(benchEnv(db.url));
const env = benchEnv(db.url);

const appHeaders = (c: Creds) => ({ 'content-type': 'application/json', 'x-apptenant': c.tenantId, 'x-appid': c.appId, 'x-appsecret': c.appSecret });

async function tenant(name: string): Promise<Creds> {
  return JSON.parse(await runCli(['tenants', 'create', '--name', name, '--json'], env)) as Creds;
}

async function scimToken(c: Creds): Promise<string> {
  const res = await fetch(`${server.baseUrl}/api/v3/scim/tokens`, { method: 'POST', headers: appHeaders(c), body: JSON.stringify({ name: 'bench' }) });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Sends `count` requests from `clients` concurrent loops; answers the rate and every request's time. */
async function drive(count: number, clients: number, send: (i: number) => Promise<Response>, ok: (status: number) => boolean) {
  let next = 0;
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t0 = performance.now();
        const res = await send(i);
        const text = await res.text();
        times.push(performance.now() - t0);
        if (!ok(res.status)) throw new Error(`request ${i}: ${res.status} ${text.slice(0, 500)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { rate: count / seconds, seconds, times };
}

const person = (i: number) => ({ userName: `bench.${i}@example.com`, given: `Given${i}`, family: `Family${i}`, externalId: `B-${i}`, phone: `+1 555 ${i}` });

async function viaScim(token: string) {
  return drive(
    USERS,
    CLIENTS,
    (i) => {
      const p = person(i);
      return fetch(`${server.baseUrl}/scim/v2/Users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify({
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: p.userName,
          externalId: p.externalId,
          name: { givenName: p.given, familyName: p.family },
          emails: [{ value: p.userName, type: 'work', primary: true }],
          phoneNumbers: [{ value: p.phone, type: 'work' }],
          active: true,
        }),
      });
    },
    (s) => s === 201,
  );
}

async function viaApi(c: Creds) {
  return drive(
    USERS,
    CLIENTS,
    (i) => {
      const p = person(i);
      return fetch(`${server.baseUrl}/api/users`, {
        method: 'POST',
        headers: appHeaders(c),
        body: JSON.stringify({
          UserName: p.userName,
          Name: `${p.given} ${p.family}`,
          ExternalId: p.externalId,
          CompanyCode: c.companyCode,
          DepartmentExternalId: c.departmentExternalId,
          TypologyExternalId: c.typologyExternalId,
          Mail: p.userName,
          Phone: p.phone,
          SsoUserName: p.userName,
          IsActive: true,
        }),
      });
    },
    (s) => s === 201,
  );
}

try {
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const scimRates: number[] = [];
  const apiRates: number[] = [];
  let lookupTenant: { creds: Creds; token: string } | null = null;
  for (let round = 0; round < ROUNDS; round++) {
    const a = await tenant(`Bench API ${round}`);
    const s = await tenant(`Bench SCIM ${round}`);
    const token = await scimToken(s);
    const order = round % 2 === 0 ? (['scim', 'api'] as const) : (['api', 'scim'] as const);
    for (const which of order) {
      const r = which === 'scim' ? await viaScim(token) : await viaApi(a);
      (which === 'scim' ? scimRates : apiRates).push(r.rate);
      console.log(
        `round ${round + 1} ${which === 'scim' ? 'POST /scim/v2/Users' : 'POST /api/users    '}: ${fmt(USERS)} users in ${fmt(r.seconds, 1)} s = ${fmt(r.rate)}/s, ` +
          `p50 ${fmt(pct(r.times, 50), 1)} ms, p95 ${fmt(pct(r.times, 95), 1)} ms (load ${os.loadavg()[0].toFixed(2)})`,
      );
    }
    lookupTenant = { creds: s, token };
  }
  const scimRate = median(scimRates);
  const apiRate = median(apiRates);
  console.log(`provisioning: SCIM ${fmt(scimRate)}/s vs Integration API ${fmt(apiRate)}/s = ${fmt(scimRate / apiRate, 2)}x (target >= 0.70x)`);

  // Lookup over LOOKUP_USERS users: the last SCIM tenant's users plus users inserted directly.
  if (!lookupTenant) throw new Error('no rounds');
  const { creds, token } = lookupTenant;
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  const have = Number((await owner.query('select count(*)::int as n from users where tenant_id = $1', [creds.tenantId])).rows[0].n);
  await owner.query(
    `insert into users (tenant_id, user_name, name, email, external_id, is_active, company_id, department_id, typology_id, user_type_id)
     select u.tenant_id, 'filler.' || g || '@example.com', 'Filler ' || g, 'filler.' || g || '@example.com', 'F-' || g, true,
            u.company_id, u.department_id, u.typology_id, u.user_type_id
     from (select * from users where tenant_id = $1 and user_name = 'bench.0@example.com') u, generate_series(1, $2::int) g`,
    [creds.tenantId, Math.max(0, LOOKUP_USERS - have)],
  );
  await owner.query('analyze users');
  const total = Number((await owner.query('select count(*)::int as n from users where tenant_id = $1', [creds.tenantId])).rows[0].n);
  await owner.end();
  const names = (i: number) => (i % 2 === 0 ? `bench.${(i * 7919) % USERS}@example.com` : `FILLER.${((i * 104729) % (total - USERS)) + 1}@example.com`);
  const lookup = (i: number) =>
    fetch(`${server.baseUrl}/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${names(i)}"`)}`, { headers: { authorization: `Bearer ${token}` } });
  await drive(200, 1, lookup, (s) => s === 200); // warm-up
  for (const clients of [1, CLIENTS]) {
    const r = await drive(LOOKUPS, clients, lookup, (s) => s === 200);
    console.log(
      `filter userName eq over ${fmt(total)} users, ${clients} client(s): ${fmt(LOOKUPS)} lookups, ${fmt(r.rate)}/s, ` +
        `p50 ${fmt(pct(r.times, 50), 2)} ms, p95 ${fmt(pct(r.times, 95), 2)} ms (load ${os.loadavg()[0].toFixed(2)})`,
    );
  }
  // Each answer found exactly its user.
  const check = await (await lookup(1)).json();
  if ((check as { totalResults: number }).totalResults !== 1) throw new Error(`lookup found ${JSON.stringify(check).slice(0, 300)}`);
} finally {
  await server.stop();
  await db.stop();
}
