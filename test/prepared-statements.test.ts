// readAsTenant's read lanes: pipelined connections shared by all tenants, statements prepared once
// per lane. One prepared statement on one lane, interleaved for two tenants, answers each tenant with
// its own rows only (RLS reads the tenant at execution, generic plans included); lanes survive
// errors, lost connections and a changed table, and refuse anything but queries.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { compileShaped, DatabaseHandle, executeLast, executePrepared, type Trx } from '../src/platform/db/database.ts';
import { MAX_PREPARED_PER_LANE } from '../src/platform/db/read-lanes.ts';
import type { Database } from '../src/platform/db/schema.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let a: Awaited<ReturnType<TestServer['createTenant']>>;
let b: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  a = await server.createTenant('Prepared A');
  b = await server.createTenant('Prepared B');
});
after(() => server.close());

/** The test database with every plan generic: a plan can then hold no tenant's id. */
const genericPlansUrl = (): string => {
  const url = new URL(server.databaseUrl);
  url.searchParams.set('options', '-c plan_cache_mode=force_generic_plan');
  return url.toString();
};

const lookup = (trx: Trx) => trx.selectFrom('user_types').select(['id', 'tenant_id']).where(sql`lower(name)`, '=', 'temporary').execute();

interface PreparedRow {
  statement: string;
  generic_plans: string;
  custom_plans: string;
}
const preparedOnLane = (trx: Trx) =>
  sql<PreparedRow>`select statement, generic_plans::text, custom_plans::text from pg_prepared_statements`.execute(trx).then((r) => r.rows);
const backendPid = (trx: Trx) => sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx).then((r) => r.rows[0].pid);

test('one prepared statement on one lane, interleaved for two tenants, answers each only its own rows', async () => {
  const db = new DatabaseHandle(genericPlansUrl(), { readLanes: 1 });
  try {
    const pid = await db.readAsTenant(a.tenantId, backendPid);
    const expected = new Map<string, string>();
    // 300 reads in flight at once, tenants in an irregular order, all written back to back on one lane.
    const order = Array.from({ length: 300 }, (_, i) => ((i * 7) % 11 < 5 ? a : b));
    const results = await Promise.all(order.map((t) => db.readAsTenant(t.tenantId, lookup).then((rows) => ({ t, rows }))));
    for (const { t, rows } of results) {
      assert.equal(rows.length, 1);
      assert.equal(rows[0].tenant_id, t.tenantId);
      if (!expected.has(t.tenantId)) expected.set(t.tenantId, rows[0].id);
      assert.equal(rows[0].id, expected.get(t.tenantId));
    }
    assert.notEqual(expected.get(a.tenantId), expected.get(b.tenantId));
    // The session setting seen by each statement is its own tenant's, even interleaved.
    const settings = await Promise.all(
      order
        .slice(0, 60)
        .map((t) =>
          db
            .readAsTenant(t.tenantId, (trx) => sql<{ t: string }>`select current_setting('atrium.tenant_id') as t`.execute(trx))
            .then((r) => assert.equal(r.rows[0].t, t.tenantId)),
        ),
    );
    assert.equal(settings.length, 60);
    // It really was one connection and one prepared statement, executed with generic plans.
    assert.equal(await db.readAsTenant(b.tenantId, backendPid), pid);
    const prepared = (await db.readAsTenant(b.tenantId, preparedOnLane)).filter((p) => p.statement.includes('user_types'));
    assert.equal(prepared.length, 1);
    assert.equal(Number(prepared[0].generic_plans), 300);
    assert.equal(Number(prepared[0].custom_plans), 0);
  } finally {
    await db.close();
  }
});

test('several lanes under concurrent mixed tenants never cross tenants; lanes run as the request role', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { readLanes: 3 });
  try {
    // Bursts of one tenant spread over every lane, so the next burst rebinds them all.
    const jobs = Array.from({ length: 400 }, (_, i) => {
      const t = Math.floor(i / 50) % 2 ? a : b;
      return db.readAsTenant(t.tenantId, lookup).then((rows) => assert.deepEqual([...new Set(rows.map((r) => r.tenant_id))], [t.tenantId]));
    });
    await Promise.all(jobs);
    const who = await db.readAsTenant(a.tenantId, (trx) => sql<{ u: string }>`select current_user as u`.execute(trx));
    assert.equal(who.rows[0].u, 'atrium_app');
  } finally {
    await db.close();
  }
});

test('readAsTenant runs queries only, and transactions (withTenant) prepare nothing unmarked', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { readLanes: 1 });
  try {
    await assert.rejects(
      db.readAsTenant(a.tenantId, (trx) => sql`set role postgres`.execute(trx)),
      /SELECT and WITH/,
    );
    await assert.rejects(
      db.readAsTenant(a.tenantId, (trx) => sql`reset all`.execute(trx)),
      /SELECT and WITH/,
    );
    await assert.rejects(
      db.readAsTenant(a.tenantId, (trx) => trx.insertInto('roles').values({ tenant_id: a.tenantId, name: 'Nope' }).execute()),
      /SELECT and WITH/,
    );
    await assert.rejects(
      db.readAsTenant(a.tenantId, (trx) => (trx as unknown as Kysely<Database>).transaction().execute(async () => {})),
      /no transactions/,
    );
    await assert.rejects(db.readAsTenant('not-a-uuid', lookup));
    assert.equal((await db.withTenant(a.tenantId, preparedOnLane)).length, 0);
  } finally {
    await db.close();
  }
});

test('a lane holds at most MAX_PREPARED_PER_LANE prepared statements; errors leave it usable', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { readLanes: 1 });
  try {
    for (let i = 0; i < MAX_PREPARED_PER_LANE + 20; i++) {
      const r = await db.readAsTenant(a.tenantId, (trx) => sql<{ n: number }>`select ${i}::int + ${sql.raw(String(i))} as n`.execute(trx));
      assert.equal(r.rows[0].n, 2 * i);
    }
    assert.equal((await db.readAsTenant(a.tenantId, preparedOnLane)).length, MAX_PREPARED_PER_LANE);
    // A failing statement between others on the same lane fails alone.
    const [before, failed, next] = await Promise.allSettled([
      db.readAsTenant(a.tenantId, lookup),
      db.readAsTenant(b.tenantId, (trx) => sql`select 1 / ${0}::int`.execute(trx)),
      db.readAsTenant(b.tenantId, lookup),
    ]);
    assert.equal(before.status === 'fulfilled' && before.value[0].tenant_id, a.tenantId);
    assert.equal(failed.status, 'rejected');
    assert.equal(next.status === 'fulfilled' && next.value[0].tenant_id, b.tenantId);
  } finally {
    await db.close();
  }
});

test('a lane whose connection is lost is replaced; a changed table is re-prepared', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { readLanes: 1 });
  const owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  try {
    const pid = await db.readAsTenant(a.tenantId, backendPid);
    await owner.query('select pg_terminate_backend($1)', [pid]);
    await new Promise((r) => setTimeout(r, 100));
    await db.readAsTenant(a.tenantId, lookup).catch(() => {}); // may meet the dying lane once
    const rows = await db.readAsTenant(b.tenantId, lookup);
    assert.equal(rows[0].tenant_id, b.tenantId);
    assert.notEqual(await db.readAsTenant(b.tenantId, backendPid), pid);

    // select * prepared, then the table changes under it (another process migrating): the read still answers.
    const all = (trx: Trx) => trx.selectFrom('user_types').selectAll().where(sql`lower(name)`, '=', 'temporary').execute();
    for (let i = 0; i < 3; i++) assert.equal((await db.readAsTenant(a.tenantId, all))[0].tenant_id, a.tenantId);
    await owner.query('alter table user_types add column lane_probe int');
    const changed = (await db.readAsTenant(a.tenantId, all))[0] as Record<string, unknown>;
    assert.equal(changed.tenant_id, a.tenantId);
    assert.ok('lane_probe' in changed);
  } finally {
    await owner.query('alter table user_types drop column if exists lane_probe').catch(() => {});
    await owner.end();
    await db.close();
  }
});

test('in transactions, a statement run with executePrepared is prepared once per connection, answers each tenant its own rows, and is re-prepared after its table changed', async () => {
  // One connection, every plan generic: the one prepared statement serves both tenants in turn.
  const db = new DatabaseHandle(genericPlansUrl(), { poolSize: 1, readLanes: 1 });
  const owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  const marked = (trx: Trx) =>
    executePrepared(trx, sql<{ id: string; tenant_id: string }>`select * from user_types where lower(name) = ${'temporary'}`).then((r) => r.rows);
  try {
    const seen = new Map<string, string>();
    for (const t of [a, b, a, b, b, a]) {
      const rows = await db.withTenant(t.tenantId, marked);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].tenant_id, t.tenantId);
      seen.set(t.tenantId, rows[0].id);
    }
    assert.notEqual(seen.get(a.tenantId), seen.get(b.tenantId));
    const mine = (await db.withTenant(a.tenantId, preparedOnLane)).filter((p) => p.statement.includes('from user_types where lower(name)'));
    assert.equal(mine.length, 1, 'prepared once on the connection');
    assert.equal(Number(mine[0].generic_plans), 6);

    // A failing statement rolls its transaction back; the connection serves the next one.
    await assert.rejects(
      db.withTenant(a.tenantId, async (trx) => {
        await trx.insertInto('roles').values({ tenant_id: a.tenantId, name: 'Prepared probe' }).execute();
        await executePrepared(trx, sql`select 1 / ${0}::int`);
      }),
      /division by zero/,
    );
    const probe = await db.withTenant(a.tenantId, (trx) => trx.selectFrom('roles').select('id').where('name', '=', 'Prepared probe').execute());
    assert.equal(probe.length, 0, 'the write before the failure was rolled back');

    // The table changes under the prepared select * (another process migrating): that transaction fails once,
    // the connection forgets its statements, and the next transaction answers with the new column.
    await owner.query('alter table user_types add column tx_probe int');
    await assert.rejects(db.withTenant(a.tenantId, marked), /cached plan must not change result type/);
    const changed = (await db.withTenant(a.tenantId, marked))[0] as Record<string, unknown>;
    assert.equal(changed.tenant_id, a.tenantId);
    assert.ok('tx_probe' in changed);
  } finally {
    await owner.query('alter table user_types drop column if exists tx_probe').catch(() => {});
    await owner.end();
    await db.close();
  }
});

test("a transaction's last statement leaves with BEGIN and COMMIT in one socket write; failing, it rolls back", async () => {
  const db = new DatabaseHandle(server.databaseUrl, { poolSize: 1, readLanes: 1 });
  // The one connection's local port (this process's test server has connections of its own to the same PostgreSQL).
  let port = 0;
  // Its socket writes while `fn` runs: net.Socket's _write and _writev are where a stream's writes reach the socket.
  const writesDuring = async <T>(fn: () => Promise<T>): Promise<{ result: T; writes: number }> => {
    const proto = net.Socket.prototype as unknown as Record<'_write' | '_writev', (this: net.Socket, ...args: unknown[]) => unknown>;
    const originals = { _write: proto._write, _writev: proto._writev };
    let writes = 0;
    for (const m of ['_write', '_writev'] as const)
      proto[m] = function (this: net.Socket, ...args: unknown[]) {
        if (this.localPort === port) writes++;
        return originals[m].apply(this, args);
      };
    try {
      return { result: await fn(), writes };
    } finally {
      Object.assign(proto, originals);
    }
  };
  const insertRole = (name: string) =>
    sql<{ id: string }>`insert into roles (tenant_id, name) values (current_setting('atrium.tenant_id')::uuid, ${name}) returning id`;
  const rolesNamed = (prefix: string) =>
    db.withTenant(a.tenantId, (trx) => trx.selectFrom('roles').select('name').where('name', 'like', `${prefix}%`).orderBy('name').execute());
  try {
    await db.withTenant(a.tenantId, (trx) => executePrepared(trx, insertRole('Last warm-up'), { last: true }));
    port = await db.withTenant(a.tenantId, async (trx) => (await sql<{ port: number }>`select inet_client_port() as port`.execute(trx)).rows[0].port);
    // Warm: BEGIN with the binding, the prepared statement (Bind, Describe, Execute, Sync) and COMMIT, one write.
    const { result: xact, writes } = await writesDuring(() =>
      db.withTenant(a.tenantId, async (trx) => {
        await executePrepared(trx, insertRole('Last probe 1'), { last: true });
        // COMMIT left with the statement: what follows runs in a transaction of its own, with no id yet.
        return (await sql<{ x: string | null }>`select pg_current_xact_id_if_assigned()::text as x`.execute(trx)).rows[0].x;
      }),
    );
    assert.equal(writes, 2, 'one write for BEGIN, the statement and COMMIT; one for the select after it');
    assert.equal(xact, null);
    // Without `last`, the same transaction writes its COMMIT after the statement's answer.
    const plain = await writesDuring(() => db.withTenant(a.tenantId, (trx) => executePrepared(trx, insertRole('Last probe 2'))));
    assert.equal(plain.writes, 2);
    assert.deepEqual(
      (await rolesNamed('Last probe')).map((r) => r.name),
      ['Last probe 1', 'Last probe 2'],
    );

    // A transaction that first looks something up on a read lane (a turn of the event loop later) still sends its
    // opening with its first statement (decision 0088): one write for BEGIN, the statement and COMMIT.
    const afterLookup = await writesDuring(() =>
      db.withTenant(a.tenantId, async (trx) => {
        await db.readAsTenant(a.tenantId, (lane) => lane.selectFrom('roles').select('id').limit(1).execute());
        await new Promise((resolve) => setTimeout(resolve, 5));
        await executePrepared(trx, insertRole('Last probe 3'), { last: true });
      }),
    );
    assert.equal(afterLookup.writes, 1, 'BEGIN waits for the first statement');
    // executeLast: an unprepared read (a page's rows) ending the transaction takes COMMIT with it, in the same write.
    const lastRead = await writesDuring(() =>
      db.withTenant(a.tenantId, async (trx) => {
        await executePrepared(trx, insertRole('Last probe 4'));
        return (await executeLast(trx, sql<{ n: number }>`select count(*)::int as n from roles where name like 'Last probe%'`)).rows[0].n;
      }),
    );
    assert.deepEqual([lastRead.result, lastRead.writes], [4, 2], 'BEGIN with the insert; the read with COMMIT');
    // One that runs no statement sends nothing: no BEGIN, no COMMIT.
    const idle = await writesDuring(() => db.withTenant(a.tenantId, async () => 'nothing'));
    assert.deepEqual([idle.result, idle.writes], ['nothing', 0]);
    // Nor on failure: no ROLLBACK for a transaction never opened.
    const refused = await writesDuring(() =>
      db
        .withTenant(a.tenantId, async () => {
          throw new Error('refused before any statement');
        })
        .catch((err: Error) => err.message),
    );
    assert.deepEqual([refused.result, refused.writes], ['refused before any statement', 0]);
    // The connection opens the next transaction as usual, the earlier ones' rows are there.
    assert.deepEqual(
      (await rolesNamed('Last probe')).map((r) => r.name),
      ['Last probe 1', 'Last probe 2', 'Last probe 3', 'Last probe 4'],
    );

    // A last statement that fails: the COMMIT behind it ends the transaction as a ROLLBACK, the earlier write is gone,
    // and the connection serves the next transaction.
    await assert.rejects(
      db.withTenant(a.tenantId, async (trx) => {
        await trx.insertInto('roles').values({ tenant_id: a.tenantId, name: 'Last failed 1' }).execute();
        await executePrepared(trx, sql`select 1 / ${0}::int`, { last: true });
      }),
      /division by zero/,
    );
    assert.deepEqual(await rolesNamed('Last failed'), []);
    // `last` on a statement outside withTenant's own transaction (a nested Kysely transaction of the owner) does nothing.
    await db.asOwner(async (trx) => {
      await executePrepared(trx, sql`insert into roles (tenant_id, name) values (${a.tenantId}, 'Last owner 1')`, { last: true });
      await trx.insertInto('roles').values({ tenant_id: a.tenantId, name: 'Last owner 2' }).execute();
    });
    assert.deepEqual(
      (await rolesNamed('Last owner')).map((r) => r.name),
      ['Last owner 1', 'Last owner 2'],
    );
  } finally {
    await db.close();
  }
});

test('compileShaped builds a statement once per shape and binds each call its own values', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { poolSize: 1, readLanes: 1 });
  let builds = 0;
  const insert = (name: string, shape = 'probe:roles') =>
    compileShaped<{ name: string }>(shape, { name, tenant: a.tenantId }, (v) => {
      builds++;
      return sql`insert into roles (tenant_id, name) values (${v('tenant')}, ${v('name')}) returning name, ${'fixed'}::text as fixed`;
    });
  try {
    const first = insert('Shaped 1');
    const second = insert('Shaped 2');
    assert.equal(builds, 1, 'built once for the shape');
    assert.equal(first.sql, second.sql);
    assert.deepEqual(second.parameters, [a.tenantId, 'Shaped 2', 'fixed']);
    for (const q of [first, second]) await db.withTenant(a.tenantId, (trx) => executePrepared(trx, q));
    const rows = await db.withTenant(a.tenantId, (trx) => trx.selectFrom('roles').select('name').where('name', 'like', 'Shaped%').orderBy('name').execute());
    assert.deepEqual(
      rows.map((r) => r.name),
      ['Shaped 1', 'Shaped 2'],
    );
    assert.throws(() => compileShaped('probe:missing', {}, (v) => sql`select ${v('absent')}`), /no value for slot absent/);
  } finally {
    await db.close();
  }
});
