// Demo data never holds a routable address (issue 27, point 1): every host it names is under `.invalid`
// (RFC 6761: never resolves) and every mail or link address under example.com / example.org / example.net
// (RFC 2606). The scan reads every row of a scale-1 demo tenant, in every table with a tenant_id.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let db: pg.Client;

before(async () => {
  server = await startTestServer();
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});
after(async () => {
  await db?.end();
  await server?.close();
});

const IPV4 = /(?<![\d.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\d.])/g;
const URL_HOST = /[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s"\\]*@)?(\[[^\]]*\]|[^/\s"\\?#:]+)/gi;
const MAIL_DOMAIN = /[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;
const HOST_KEY = /"([A-Za-z_]*(?:host|server|address)[A-Za-z_]*)"\s*:\s*"([^"]*)"/gi;
const ALLOWED = (host: string) => /(^|\.)invalid$/i.test(host) || /(^|\.)example\.(com|org|net)$/i.test(host);

/** Every address-like piece of text that is not allowed, with where it was found. */
export function foreignAddresses(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(IPV4)) if (m.slice(1, 5).every((o) => Number(o) <= 255)) found.push(`IP literal ${m[0]}`);
  for (const m of text.matchAll(URL_HOST)) if (!ALLOWED(m[1])) found.push(`link host ${m[1]}`);
  for (const m of text.matchAll(MAIL_DOMAIN)) if (!ALLOWED(m[1])) found.push(`mail domain ${m[1]}`);
  for (const m of text.matchAll(HOST_KEY)) if (m[2] !== '' && !ALLOWED(m[2].replace(/:\d+$/, ''))) found.push(`${m[1]} ${m[2]}`);
  return found;
}

test('the scan itself: it finds what the issue found, and passes what demo data may hold', () => {
  assert.deepEqual(foreignAddresses('{"ftpHostIp": "10.0.0.15"}'), ['IP literal 10.0.0.15', 'ftpHostIp 10.0.0.15']);
  assert.deepEqual(foreignAddresses('see https://boards.acme.io/x and it@acme.pt'), ['link host boards.acme.io', 'mail domain acme.pt']);
  assert.deepEqual(
    foreignAddresses('{"ftpHostIp": "sftp.hr-feed.invalid", "Mail": "a@ag.example.com", "url": "https://boards.example.com/p"} 1234.56 v1.2.3'),
    [],
  );
});

test('a scale-1 demo tenant names no address outside .invalid and example.com/.org/.net', async () => {
  const tenant = await server.createTenant('Address Agency', { demoData: true });
  const tables = (
    await db.query<{ table_name: string }>(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' and table_name <> 'tenants' order by 1`,
    )
  ).rows.map((r) => r.table_name);
  // PostgreSQL picks the rows that hold anything address-like; the scan above judges them.
  const candidate = String.raw`[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|://|@|[Hh]ost|[Ss]erver|[Aa]ddress`;
  const problems: string[] = [];
  let scanned = 0;
  for (const table of tables) {
    const { rows } = await db.query<{ t: string }>(`select t::text as t from ${table} t where tenant_id = $1 and t::text ~ $2`, [tenant.tenantId, candidate]);
    scanned += rows.length;
    for (const r of rows) for (const p of foreignAddresses(r.t)) problems.push(`${table}: ${p}`);
  }
  assert.ok(scanned > 20, `rows with addresses were scanned (${scanned})`);
  assert.deepEqual([...new Set(problems)].slice(0, 20), []);
});
