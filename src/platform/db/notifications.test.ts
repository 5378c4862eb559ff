// The LISTEN connection: a commit that writes events notifies once per statement; a lost connection
// comes back by itself, and its handlers run once then, since what was sent meanwhile is gone.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createTestDatabase } from '../../../test/helpers.ts';
import { Notifications } from './notifications.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let owner: pg.Client;

before(async () => {
  database = await createTestDatabase();
  owner = new pg.Client({ connectionString: database.connectionString });
  await owner.connect();
});
after(async () => {
  await owner.end();
  await database.drop();
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

test('events committed in a transaction wake a listener once, at commit', async () => {
  const notifications = new Notifications(database.connectionString);
  let woken = 0;
  await notifications.listen('atrium_events', () => woken++);
  try {
    const tenant = (await owner.query<{ id: string }>(`insert into tenants (name, slug) values ('N', 'n-notify') returning id`)).rows[0].id;
    await owner.query('begin');
    await owner.query(
      `insert into events (tenant_id, action_type, document_type, detail) select $1, 'Ping', 'Deliverable', '{}' from generate_series(1, 500)`,
      [tenant],
    );
    await owner.query(`insert into events (tenant_id, action_type, document_type, detail) values ($1, 'Ping', 'Deliverable', '{}')`, [tenant]);
    await sleep(100);
    assert.equal(woken, 0, 'nothing before the commit');
    await owner.query('commit');
    await until(() => woken > 0, 'the notification');
    await sleep(100);
    assert.equal(woken, 1, 'two statements of one transaction: one notification');
  } finally {
    await notifications.close();
  }
});

test('a lost LISTEN connection comes back; its handlers run once on reconnect', async () => {
  const notifications = new Notifications(database.connectionString);
  let woken = 0;
  await notifications.listen('atrium_auth', () => woken++);
  try {
    await owner.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'atrium-listen' and datname = current_database()`);
    await until(() => woken === 1, 'the handler after the reconnect');
    await until(() => notifications.connected, 'the reconnect');
    await owner.query(`select pg_notify('atrium_auth', '')`);
    await until(() => woken === 2, 'a notification after the reconnect');
  } finally {
    await notifications.close();
  }
});
