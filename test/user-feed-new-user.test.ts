// The user feed as a new user meets it (issue 27): bad files fail alone and the next file of the same run
// is processed; a Temporary user's one Created event holds its final values; a freelancer's typology is
// the FREELANCE group's; a key without a credential is a 409 before any connection. A real OpenSSH server.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { appHeaders, type TestServer } from './helpers.ts';
import { csv, type FeedFixture, type FeedFolders, type FeedRow, feedRow, list, put, readJson, startFeedFixture } from './user-feed-helpers.ts';

let server: TestServer;
let db: pg.Client;
let h: Record<string, string>;
let tenantId: string;
let folders: FeedFolders;
let base: FeedRow;
let fixture: FeedFixture;

before(async () => {
  fixture = await startFeedFixture({
    env: { ATRIUM_USER_FEED_MAX_FILE_BYTES: '200000', ATRIUM_USER_FEED_MAX_ROWS: '50' },
    tenantName: 'New User Agency',
    folder: 'newuser',
  });
  ({ server, db, h, folders } = fixture);
  tenantId = fixture.tenant.tenantId;
  base = { ...fixture.base, userTypologyGroup: 'Studio', resourceType: 'Designer' };
});

after(async () => {
  await fixture?.close();
});

const row = (externalId: string, extra: FeedRow = {}): FeedRow => feedRow(base, externalId, extra);

async function run() {
  const res = await server.request('POST', '/api/v3/user-feed/run', { headers: h });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; status: string; error: string | null; files: Record<string, any>[] };
}

const user = async (externalId: string) => {
  const res = await server.request('GET', `/api/users/external?externalId=${externalId}`, { headers: h });
  return res.status === 200 ? (res.body as Record<string, any>) : null;
};

test('bad files fail alone, each moved with a results file naming its reason; the next file of the same run is processed, and a later run too', async () => {
  // In processing order: an unclosed quote, an empty file, too many rows, too large, then a good file.
  await put(folders.data, 'AD_UserAccounts_20250301000001.csv', `${csv([row('B001')])}B002,"never closed,x\r\n`);
  await put(folders.data, 'AD_UserAccounts_20250301000002.csv', '');
  await put(folders.data, 'AD_UserAccounts_20250301000003.csv', csv(Array.from({ length: 51 }, (_, i) => row(`R${i}`))));
  await put(folders.data, 'AD_UserAccounts_20250301000004.csv', `${csv([row('B003')])}${'x'.repeat(200_001)}\r\n`);
  await put(folders.data, 'AD_UserAccounts_20250301000005.csv', csv([row('G001')]));
  const r = await run();
  assert.deepEqual(
    r.files.map((f) => [f.name.slice(-6), f.status]),
    [
      ['01.csv', 'Failed'],
      ['02.csv', 'Failed'],
      ['03.csv', 'Failed'],
      ['04.csv', 'Failed'],
      ['05.csv', 'Succeeded'],
    ],
  );
  const reasons = [
    /the CSV ends inside a quoted cell/,
    /the file is empty \(0 bytes\)/,
    /more than 50 rows \(ATRIUM_USER_FEED_MAX_ROWS\)/,
    /the file is 200,\d+ bytes; the limit is 200,000 \(ATRIUM_USER_FEED_MAX_FILE_BYTES\)/,
  ];
  for (const [i, reason] of reasons.entries()) {
    assert.match(r.files[i].message, reason);
    const name = `SR_UserAccounts_2025030100000${i + 1}.json`;
    const doc = await readJson(folders.failure, name);
    assert.equal(doc.data_results.status, 'FAILED');
    assert.match(doc.data_results.message, reason);
  }
  assert.equal(r.status, 'Failed');
  assert.match(r.error ?? '', /4 of 5 files failed \(AD_UserAccounts_20250301000001\.csv: the CSV ends inside a quoted cell/);
  assert.equal((await user('G001'))?.IsActive, true, 'the file after the bad ones was processed in the same run');
  assert.equal(await user('B001'), null, 'no row of a file that cannot be read is applied');
  assert.deepEqual(await list(folders.data), ['Failure', 'Success']);
  assert.equal((await list(folders.failure)).filter((n) => n.endsWith('.csv')).length, 4);

  await put(folders.data, 'AD_UserAccounts_20250302000000.csv', csv([row('G002')]));
  const later = await run();
  assert.equal(later.status, 'Succeeded');
  assert.equal((await user('G002'))?.IsActive, true, 'later runs proceed');
});

test('a Temporary user is created with its final values: its one Created event says TimesheetRequired false and names its manager', async () => {
  await put(
    folders.data,
    'AD_UserAccounts_20250303000000.csv',
    csv([row('T000'), row('T001', { userType: 'Temporary', responsible: 'T000', fslaStatus: 'true' })]),
  );
  const r = await run();
  assert.equal(r.status, 'Succeeded', JSON.stringify(r.files));
  const t0 = await user('T000');
  const t1 = await user('T001');
  const events = await db.query(
    `select action_type, detail from events where tenant_id = $1 and document_type like '%.User' and document_id = $2 order by seq`,
    [tenantId, t1?.Id],
  );
  assert.deepEqual(
    events.rows.map((e) => e.action_type),
    ['Created'],
    'one write: no Updated event after the Created one',
  );
  assert.equal(events.rows[0].detail.TimesheetRequired, false);
  assert.equal(events.rows[0].detail.ResponsibleId, t0?.Id);
  assert.equal(events.rows[0].detail.PaidOvertime, true);
  const stored = await db.query('select timesheet_required from users where tenant_id = $1 and external_id = $2', [tenantId, 'T001']);
  assert.equal(stored.rows[0].timesheet_required, false);
});

test("a freelancer whose title is a typology of the plain group gets the FREELANCE group's typology; the plain one keeps its group", async () => {
  await put(
    folders.data,
    'AD_UserAccounts_20250304000000.csv',
    csv([row('P001', { resourceType: 'Animator' }), row('F001', { resourceType: 'Animator', userType: 'Temporary', employeeClass: 'Freelancer' })]),
  );
  const r = await run();
  assert.equal(r.status, 'Succeeded', JSON.stringify(r.files));
  const { rows } = await db.query(
    `select u.external_id, t.name as typology, g.name as grp from users u join typologies t on t.id = u.typology_id left join typology_groups g on g.id = t.typology_group_id
      where u.tenant_id = $1 and u.external_id in ('P001', 'F001') order by u.external_id`,
    [tenantId],
  );
  assert.deepEqual(rows, [
    { external_id: 'F001', typology: 'Animator', grp: 'FREELANCE Studio' },
    { external_id: 'P001', typology: 'Animator', grp: 'Studio' },
  ]);
  const empty = await db.query(
    `select g.name, count(t.id)::int as n from typology_groups g left join typologies t on t.typology_group_id = g.id where g.tenant_id = $1 and g.name = 'FREELANCE Studio' group by g.name`,
    [tenantId],
  );
  assert.deepEqual(empty.rows, [{ name: 'FREELANCE Studio', n: 1 }], 'the FREELANCE group holds the typology');
  // A second freelancer of the same title finds that typology rather than creating another.
  await put(
    folders.data,
    'AD_UserAccounts_20250305000000.csv',
    csv([row('F002', { resourceType: 'Animator', userType: 'Temporary', employeeClass: 'Freelancer' })]),
  );
  assert.equal((await run()).status, 'Succeeded');
  assert.equal((await user('F002'))?.TypologyExternalId, (await user('F001'))?.TypologyExternalId);
});

test('a key whose ftpPassword is null (and no private key) is a 409 naming the field, and no connection is opened', async () => {
  const other = await server.createTenant('Keyless Agency');
  const oh = appHeaders(other);
  let connections = 0;
  const listener = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  try {
    const port = (listener.address() as net.AddressInfo).port;
    const key = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', {
      headers: oh,
      json: {
        ftpHostIp: `127.0.0.1:${port}`,
        ftpUsername: 'hrfeed',
        ftpPassword: null,
        ftpPath: '/Data',
        ftpToPathSuccess: '/Data/S',
        ftpToPathFailure: '/Data/F',
      },
    });
    assert.ok(key.status < 300, key.text);
    const res = await server.request('POST', '/api/v3/user-feed/run', { headers: oh });
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.detail ?? res.body.title, /SFTP-HRFEED lacks ftpPassword \(or ftpPrivateKey\)/);
    assert.equal(connections, 0, 'no connection before the missing field is named');
  } finally {
    await new Promise((resolve) => listener.close(resolve));
  }
});
