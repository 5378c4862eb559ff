// GET /api/usertypes/name answers from a kept lookup while the tenant's user types are unchanged (decision
// 0060): after any write to them, by the API's own process or straight in SQL, the next request reads anew.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { findUserTypeByNameKept } from '../src/integration/service.ts';
import { keptReads, MAX_KEPT } from '../src/platform/db/kept-reads.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Kept Agency');
  other = await server.createTenant('Other Kept Agency');
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner.end();
  await server.close();
});

const lookup = (t: typeof tenant, name: string) => server.request('GET', `/api/usertypes/name?name=${encodeURIComponent(name)}`, { headers: appHeaders(t) });
const counts = () => ({ ...keptReads(server.runtime.ctx.db).counts });

test('a kept user type answers until a write to the tenant user types, whoever wrote it', async () => {
  const first = await lookup(tenant, 'Temporary');
  assert.equal(first.status, 200);
  const before = counts();
  const again = await lookup(tenant, 'TEMPORARY');
  assert.deepEqual(again.body, first.body);
  assert.equal(counts().kept, before.kept + 1, 'the second lookup was answered from the kept one');

  // Renamed in SQL by the owner (no API, no notification): the very next lookup sees it.
  await owner.query(`update user_types set name = 'Temporary (old)' where id = $1`, [first.body.id]);
  assert.equal((await lookup(tenant, 'Temporary')).status, 404);
  assert.equal((await lookup(tenant, 'Temporary (old)')).body.id, first.body.id);
  // A miss is kept too, and a new row ends it.
  assert.equal((await lookup(tenant, 'Temporary')).status, 404);
  const created = await owner.query(`insert into user_types (tenant_id, name) values ($1, 'Temporary') returning id`, [tenant.tenantId]);
  const found = await lookup(tenant, 'Temporary');
  assert.equal(found.status, 200);
  assert.equal(found.body.id, created.rows[0].id);
  await owner.query(`delete from user_types where id = $1`, [created.rows[0].id]);
  assert.equal((await lookup(tenant, 'Temporary')).status, 404);
  await owner.query(`update user_types set name = 'Temporary' where id = $1`, [first.body.id]);
  assert.equal((await lookup(tenant, 'Temporary')).body.id, first.body.id);
});

test('requests in flight together share the check, and all see a write committed before they were sent', async () => {
  const known = await lookup(tenant, 'Temporary');
  assert.equal(known.status, 200);
  await owner.query(`update user_types set name = 'Temporary' where id = $1`, [known.body.id]); // a write that changes nothing visible
  await owner.query(`update user_types set name = 'Renamed at once' where id = $1`, [known.body.id]);
  const answers = await Promise.all(Array.from({ length: 40 }, () => lookup(tenant, 'Temporary')));
  assert.ok(answers.every((a) => a.status === 404));
  await owner.query(`update user_types set name = 'Temporary' where id = $1`, [known.body.id]);
  const before = counts();
  const back = await Promise.all(Array.from({ length: 40 }, () => lookup(tenant, 'Temporary')));
  assert.ok(back.every((a) => a.status === 200 && a.body.id === known.body.id));
  const after = counts();
  assert.ok(after.loaded - before.loaded <= 40 && after.kept + after.loaded - before.kept - before.loaded >= 40);
});

test('a request that arrives while a check is in flight joins the next check, so it sees a write committed meanwhile', async () => {
  const db = server.runtime.ctx.db;
  const find = (name: string) => findUserTypeByNameKept(db, tenant.tenantId, name);
  const known = await find('Temporary');
  await find('Temporary'); // kept now
  const before = counts();
  const first = find('Temporary').catch(() => null);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(counts().checks, before.checks + 1, "the first request's check has left");
  await owner.query(`update user_types set name = 'Renamed meanwhile' where id = $1`, [known.id]);
  // Joining the check in flight could answer "unchanged" from before the rename; the next one cannot.
  await assert.rejects(find('Temporary'), /No user type named/);
  await first;
  assert.equal((await find('Renamed meanwhile')).id, known.id);
  await owner.query(`update user_types set name = 'Temporary' where id = $1`, [known.id]);
  assert.equal((await find('Temporary')).id, known.id);
});

test('requests that arrive while a check is in flight share one check', async () => {
  const db = server.runtime.ctx.db;
  const find = () => findUserTypeByNameKept(db, tenant.tenantId, 'Temporary');
  await find();
  await find();
  const before = counts();
  let settled = false;
  const inFlight = find().finally(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(counts().checks, before.checks + 1);
  // Requests over several turns while the first check is out: none sends a check of its own meanwhile.
  const later: Promise<unknown>[] = [];
  for (let turn = 0; turn < 4; turn++) {
    for (let i = 0; i < 10; i++) later.push(find());
    await new Promise((resolve) => setImmediate(resolve));
    if (settled) continue;
    assert.equal(counts().checks, before.checks + 1, `turn ${turn}: still the one check in flight`);
  }
  await Promise.all([inFlight, ...later]);
  const after = counts();
  assert.equal(after.kept - before.kept, 41);
});

test("one tenant's kept answer is never another's", async () => {
  const mine = await lookup(tenant, 'Temporary');
  const theirs = await lookup(other, 'Temporary');
  assert.equal(mine.status, 200);
  assert.equal(theirs.status, 200);
  assert.notEqual(mine.body.id, theirs.body.id);
  assert.equal((await lookup(other, 'Temporary')).body.id, theirs.body.id);
  assert.equal((await lookup(tenant, 'Temporary')).body.id, mine.body.id);
});

test('kept answers are bounded', async () => {
  const db = server.runtime.ctx.db;
  const names = Array.from({ length: MAX_KEPT + 50 }, (_, i) => `No such type ${i}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((n) => findUserTypeByNameKept(db, tenant.tenantId, n).catch(() => null)));
  }
  assert.ok(keptReads(db).size <= MAX_KEPT, `${keptReads(db).size} kept`);
  // Names longer than any user type's are not kept at all.
  const loaded = counts().loaded;
  assert.equal((await lookup(tenant, 'x'.repeat(300))).status, 404);
  assert.equal(counts().loaded, loaded);
});
