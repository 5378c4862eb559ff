// The SFTP user feed end to end: a real OpenSSH server and a real SMTP server started here, files in the
// Data directory, runs through the HTTP API. Every rule of the spec's user-feed rows, the dry run, the
// results file, the folders, the e-mail on errors only, idempotence and two runs at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { TestServer } from './helpers.ts';
import { type Smtp, startSmtp } from './smtp-server.ts';
import { csv, type FeedFixture, type FeedFolders, type FeedRow, feedRow, list, put, readJson, startFeedFixture } from './user-feed-helpers.ts';

let server: TestServer;
let smtp: Smtp;
let db: pg.Client;
let h: Record<string, string>;
let tenantId: string;
let folders: FeedFolders;
let base: FeedRow;
let fixture: FeedFixture;

before(async () => {
  smtp = await startSmtp();
  fixture = await startFeedFixture({
    env: { ATRIUM_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, ATRIUM_SMTP_FROM: 'Atrium <atrium@test.example>' },
    tenantName: 'Feed Agency',
    folder: 'agency',
  });
  ({ server, db, h, folders } = fixture);
  tenantId = fixture.tenant.tenantId;
  const mailbox = await server.request('PUT', '/api/configuration-keys/Notifications', { headers: h, json: { Mailbox: 'hr-ops@example.com' } });
  assert.ok(mailbox.status < 300, mailbox.text);
  const city = await server.request('POST', '/api/cities', { headers: h, json: { externalId: 'LIS', name: 'Lisbon', countryExternalId: 'PT' } });
  assert.ok(city.status < 300, city.text);
  base = {
    ...fixture.base,
    divisionid: 'IGNORED-DIV',
    userTypologyGroup: 'Engineering',
    resourceType: 'Developer',
    weeklyRequiredHours: '40',
    hireDate: '2024-01-15',
    administrativeResponsible: 'IGNORED',
    planningResponsible: 'IGNORED',
    leavesResponsible: 'IGNORED',
  };
});

after(async () => {
  await fixture?.close();
  await smtp?.close();
});

const row = (externalId: string, extra: FeedRow = {}): FeedRow =>
  feedRow(base, externalId, {
    email: `${externalId.toLowerCase()}@agency.example`,
    ssoUsername: `${externalId.toLowerCase()}@agency.example`,
    externalNumber: `P-${externalId}`,
    workphone: '+351 210 000 000',
    ...extra,
  });

async function run(query = '') {
  const res = await server.request('POST', `/api/v3/user-feed/run${query}`, { headers: h });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; status: string; dryRun: boolean; automationRunId: string; files: Record<string, any>[] };
}

const user = async (externalId: string) => {
  const res = await server.request('GET', `/api/users/external?externalId=${externalId}`, { headers: h });
  return res.status === 200 ? (res.body as Record<string, any>) : null;
};

const eventCount = async (): Promise<number> => Number((await db.query('select count(*)::int as n from events where tenant_id = $1', [tenantId])).rows[0].n);

test('settings: off by default at 04:00 UTC; PUT switches it on as an automation with that schedule; a bad cron is a 400 with its path', async () => {
  const first = await server.request('GET', '/api/v3/user-feed', { headers: h });
  assert.deepEqual(first.body, { enabled: false, schedule: '0 4 * * *', dryRun: false, automationId: null, nextRunUtc: null });
  const on = await server.request('PUT', '/api/v3/user-feed', { headers: h, json: { enabled: true } });
  assert.equal(on.status, 200, on.text);
  const next = new Date(on.body.nextRunUtc);
  assert.equal(next.getUTCHours(), 4);
  assert.equal(next.getUTCMinutes(), 0);
  assert.ok(next.getTime() > Date.now() && next.getTime() <= Date.now() + 86_400_000);
  const automation = await server.request('GET', `/api/v3/automations/${on.body.automationId}`, { headers: h });
  assert.equal(automation.status, 200);
  assert.deepEqual(automation.body.scheduler, { cronExpression: '0 4 * * *', isActive: true });
  const bad = await server.request('PUT', '/api/v3/user-feed', { headers: h, json: { schedule: '0 25 * * *' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.errors[0].path, '/body/schedule');
  // The key's secret is stored sealed, and shown masked to a reader without the Administrator role.
  const stored = await db.query(`select value->>'ftpPrivateKey' as k from configuration_keys where tenant_id = $1 and key = 'SFTP-HRFEED'`, [tenantId]);
  assert.ok(!stored.rows[0].k.includes('PRIVATE KEY'));
  const off = await server.request('PUT', '/api/v3/user-feed', { headers: h, json: { enabled: false } });
  assert.equal(off.body.nextRunUtc, null);
});

test('a file with every kind of row: created, manager, no manager, skipped, freelancer, unknown userType, malformed, unknown department', async () => {
  const mailsBefore = smtp.mails.length;
  const eventsBefore = await eventCount();
  const content = csv([
    row('A001'),
    row('A002', { responsible: 'A001', fslaStatus: 'true', workLocation: 'Lisbon' }),
    row('A003', { responsible: 'NOBODY' }),
    row('A004', { isActive: 'false' }),
    row('F001', { userType: 'Temporary', employeeClass: 'Freelancer', userTypologyGroup: 'Creative', resourceType: 'Illustrator' }),
    row('A005', { userType: 'Contractor' }),
    row('A006', { departmentid: 'NO-SUCH-DEPT' }),
    // Fails after its typology group and typology were created (the login is A001's): both roll back with it.
    row('A008', { username: 'a001', userTypologyGroup: 'Orphan Group', resourceType: 'Orphan Title' }),
  ]).concat('A007,too,few,cells\r\n');
  await put(folders.data, 'AD_UserAccounts_20250102030405.csv', content);
  const r = await run();
  assert.equal(r.status, 'Failed');
  assert.equal(r.files.length, 1);
  const f = r.files[0];
  assert.equal(f.name, 'AD_UserAccounts_20250102030405.csv');
  assert.deepEqual(
    { rows: f.rows, created: f.created, updated: f.updated, deactivated: f.deactivated, skipped: f.skipped, failed: f.failed },
    { rows: 9, created: 4, updated: 0, deactivated: 0, skipped: 1, failed: 4 },
  );
  const by = Object.fromEntries(f.rowResults.map((x: any) => [x.externalId ?? `row ${x.row}`, x]));
  assert.equal(by.A004.outcome, 'Skipped');
  assert.match(by.A003.message, /created without a manager/);
  assert.match(by.A005.message, /userType "Regular\/Permanent Contractor|userType "Contractor/);
  assert.match(by.A006.message, /no department "NO-SUCH-DEPT"/);
  assert.match(by.A008.message, /UserName/);
  assert.match(by['row 9'].message, /the row has 4 cells; the header has 24/);

  const a1 = await user('A001');
  assert.equal(a1?.IsActive, true);
  assert.equal(a1?.UserName, 'a001');
  assert.equal(a1?.Name, 'User A001');
  assert.equal(a1?.Mail, 'a001@agency.example');
  assert.equal(a1?.ExternalNumber, 'P-A001');
  assert.equal(a1?.RequiredWeeklyHours, 40);
  assert.equal(a1?.HireDate?.slice(0, 10), '2024-01-15');
  assert.equal(a1?.TypologyExternalId, 'Developer');
  const a2 = await user('A002');
  assert.equal(a2?.ResponsibleId, a1?.Id);
  assert.equal(a2?.PaidOvertime, true);
  assert.ok(a2?.CityId);
  assert.equal((await user('A003'))?.ResponsibleId, null);
  assert.equal(await user('A004'), null);
  assert.equal(await user('A005'), null);
  const f1 = await user('F001');
  assert.equal(f1?.IsActive, true, 'the second pass activated the freelancer');
  const groups = await db.query('select name from typology_groups where tenant_id = $1 order by name', [tenantId]);
  assert.ok(groups.rows.some((g) => g.name === 'FREELANCE Creative'));
  assert.ok(groups.rows.some((g) => g.name === 'Engineering'));
  assert.ok(!groups.rows.some((g) => g.name === 'Orphan Group'), 'a failed row leaves nothing behind');
  assert.equal((await db.query(`select count(*)::int as n from typologies where tenant_id = $1 and name = 'Orphan Title'`, [tenantId])).rows[0].n, 0);
  const ts = await db.query('select external_id, timesheet_required from users where tenant_id = $1 and external_id in ($2, $3)', [tenantId, 'A001', 'F001']);
  assert.deepEqual(Object.fromEntries(ts.rows.map((x) => [x.external_id, x.timesheet_required])), { A001: true, F001: false });
  // The freelancer: created inactive, then activated, as the Integration API's writes would say it.
  const fEvents = await db.query(
    `select action_type, detail from events where tenant_id = $1 and document_type like '%.User' and document_id = $2 order by seq`,
    [tenantId, f1?.Id],
  );
  assert.equal(fEvents.rows[0].action_type, 'Created');
  assert.equal(fEvents.rows[0].detail.IsActive, false);
  assert.ok(fEvents.rows.some((e) => e.action_type === 'Updated' && e.detail.IsActive === true));
  const kinds = await db.query('select distinct document_type from events where tenant_id = $1', [tenantId]);
  for (const t of ['User', 'UserTypologyGroup', 'UserTypology'])
    assert.ok(
      kinds.rows.some((k) => k.document_type.endsWith(`.${t}`)),
      t,
    );
  assert.ok((await eventCount()) > eventsBefore);

  // Any failed row sends the file to the failure folder with its results file beside it.
  assert.deepEqual(await list(folders.data), ['Failure']);
  assert.deepEqual(await list(folders.failure), ['AD_UserAccounts_20250102030405.csv', 'SR_UserAccounts_20250102030405.json']);
  const result = await readJson(folders.failure, 'SR_UserAccounts_20250102030405.json');
  assert.equal(result.data_results.status, 'FAILED');
  assert.match(result.data_results.message, /4 of 9 rows failed; 1 users created without a manager/);
  assert.deepEqual(result.data_results.errors.map((e: any) => e.uid).sort(), ['A005', 'A006', 'A008', 'row 9']);
  for (let i = 0; i < 50 && smtp.mails.length === mailsBefore; i++) await sleep(50);
  assert.equal(smtp.mails.length, mailsBefore + 1);
  const mail = smtp.mails.at(-1);
  assert.deepEqual(mail?.to, ['hr-ops@example.com']);
  assert.match(mail?.body ?? '', /A005: userType/);
  assert.match(mail?.body ?? '', /A006: no department/);

  const runs = await server.request('GET', '/api/v3/user-feed/runs', { headers: h });
  assert.equal(runs.body[0].id, r.id);
  const one = await server.request('GET', `/api/v3/user-feed/runs/${r.id}`, { headers: h });
  assert.equal(one.body.files[0].rowResults.length, 9);
  const automationRun = await server.request(
    'GET',
    `/api/v3/automations/${r.files.length && (await server.request('GET', '/api/v3/user-feed', { headers: h })).body.automationId}/runs/${r.automationRunId}`,
    { headers: h },
  );
  assert.equal(automationRun.status, 200);
  assert.equal(automationRun.body.status, 'Failed');
});

test('dry run reports what would change and changes nothing; the real run then deactivates, in the spec order; no e-mail on success', async () => {
  const mailsBefore = smtp.mails.length;
  await put(folders.data, 'AD_UserAccounts_20250103000000.csv', csv([row('A001', { isActive: 'false', expirationDate: '2025-03-31' }), row('D001')]));
  const eventsBefore = await eventCount();
  const dry = await run('?dryRun=true');
  assert.equal(dry.dryRun, true);
  assert.equal(dry.status, 'Succeeded');
  assert.deepEqual(
    dry.files[0].rowResults.map((x: any) => [x.externalId, x.outcome]),
    [
      ['A001', 'Deactivated'],
      ['D001', 'Created'],
    ],
  );
  assert.equal(await eventCount(), eventsBefore, 'a dry run raises no event');
  assert.equal(await user('D001'), null);
  assert.equal((await user('A001'))?.IsActive, true);
  assert.deepEqual(await list(folders.data), ['AD_UserAccounts_20250103000000.csv', 'Failure'], 'a dry run moves nothing');

  const real = await run();
  assert.equal(real.status, 'Succeeded');
  assert.equal(real.files[0].deactivated, 1);
  assert.equal(real.files[0].created, 1);
  const a1 = await user('A001');
  assert.equal(a1?.IsActive, false);
  assert.equal(a1?.ExpirationDate?.slice(0, 10), '2025-03-31');
  assert.equal(a1?.UserName, 'a001_A001');
  assert.equal(a1?.SsoUserName, 'a001@agency.example_A001');
  const updates = await db.query(`select detail from events where tenant_id = $1 and document_id = $2 and seq > $3 order by seq`, [tenantId, a1?.Id, 0]);
  const last3 = updates.rows.slice(-3).map((e) => Object.keys(e.detail).sort());
  assert.deepEqual(last3, [['ExpirationDate'], ['IsActive'], ['SsoUserName', 'UserName']]);
  assert.deepEqual(await list(folders.success), ['AD_UserAccounts_20250103000000.csv', 'SR_UserAccounts_20250103000000.json']);
  const result = await readJson(folders.success, 'SR_UserAccounts_20250103000000.json');
  assert.deepEqual(result.data_results.status, 'SUCCEEDED');
  assert.deepEqual(result.data_results.errors, []);
  await sleep(300);
  assert.equal(smtp.mails.length, mailsBefore, 'no e-mail on success');
});

test('idempotent: the same content under a new name changes nothing and raises no event; an unchanged row is Unchanged', async () => {
  const content = csv([row('I001'), row('I002', { responsible: 'I001' })]);
  await put(folders.data, 'AD_UserAccounts_20250104000000.csv', content);
  const first = await run();
  assert.equal(first.files[0].created, 2);
  const events = await eventCount();
  await put(folders.data, 'AD_UserAccounts_20250105000000.csv', content);
  const again = await run();
  assert.equal(again.files[0].alreadyProcessed, true);
  assert.match(again.files[0].message, /already processed as AD_UserAccounts_20250104000000.csv/);
  assert.equal(await eventCount(), events);
  assert.ok((await list(folders.success)).includes('AD_UserAccounts_20250105000000.csv'));
  // Other content whose rows match what is stored: Unchanged, and still no event.
  await put(folders.data, 'AD_UserAccounts_20250106000000.csv', `${content}\r\n`);
  const same = await run();
  assert.deepEqual(
    same.files[0].rowResults.map((x: any) => x.outcome),
    ['Unchanged', 'Unchanged'],
  );
  assert.equal(await eventCount(), events);
  const changed = await run('?dryRun=false');
  assert.equal(changed.files.length, 0, 'nothing left in the Data directory');
});

test('file rules: suffix order, a misnamed or unreadable file fails whole to the failure folder with its reason; the JSON template is read', async () => {
  const mailsBefore = smtp.mails.length;
  await put(folders.data, 'AD_UserAccounts_20250108000000.csv', JSON.stringify({ users: [row('J001', { name: 'Second name' })] }));
  await put(folders.data, 'AD_UserAccounts_20250107000000.csv', JSON.stringify({ users: [row('J001', { name: 'First name' })] }));
  await put(folders.data, 'AD_UserAccounts_2025.csv', csv([row('X001')]));
  await put(folders.data, 'AD_UserAccounts_20250109000000.csv', '{"users": not json');
  await put(folders.data, 'readme.txt', 'not a feed file');
  const r = await run();
  assert.deepEqual(
    r.files.map((f) => [f.name, f.status]),
    [
      ['AD_UserAccounts_2025.csv', 'Failed'],
      ['AD_UserAccounts_20250107000000.csv', 'Succeeded'],
      ['AD_UserAccounts_20250108000000.csv', 'Succeeded'],
      ['AD_UserAccounts_20250109000000.csv', 'Failed'],
    ],
  );
  assert.match(r.files[0].message, /suffix "2025" is not a timestamp YYYYMMDDHHmmss/);
  assert.match(r.files[3].message, /neither a CSV nor valid JSON/);
  assert.equal((await user('J001'))?.Name, 'Second name', 'the later suffix wins');
  assert.equal(await user('X001'), null);
  assert.deepEqual(await list(folders.data), ['Failure', 'Success', 'readme.txt']);
  const failure = await list(folders.failure);
  for (const n of ['AD_UserAccounts_2025.csv', 'SR_AD_UserAccounts_2025.json', 'AD_UserAccounts_20250109000000.csv', 'SR_UserAccounts_20250109000000.json'])
    assert.ok(failure.includes(n), n);
  assert.equal((await readJson(folders.failure, 'SR_AD_UserAccounts_2025.json')).data_results.status, 'FAILED');
  for (let i = 0; i < 50 && smtp.mails.length < mailsBefore + 2; i++) await sleep(50);
  assert.equal(smtp.mails.length, mailsBefore + 2, 'one e-mail per failed file');
});

test('two runs at once never process the same file: each row is applied once', async () => {
  const rows = Array.from({ length: 40 }, (_, i) => row(`C${String(i).padStart(3, '0')}`));
  await put(folders.data, 'AD_UserAccounts_20250110000000.csv', csv(rows));
  const [a, b] = await Promise.all([run(), run()]);
  const statuses = [...a.files, ...b.files].map((f) => f.status).sort();
  assert.ok(statuses.includes('Succeeded'));
  const created = [...a.files, ...b.files].reduce((n, f) => n + f.created, 0);
  assert.equal(created, 40);
  const ev = await db.query(
    `select count(*)::int as n from events e join users u on u.id::text = e.document_id::text where e.tenant_id = $1 and e.action_type = 'Created' and u.external_id like 'C%'`,
    [tenantId],
  );
  assert.equal(ev.rows[0].n, 40);
  const files = await db.query('select count(*)::int as n from user_feed_files where tenant_id = $1 and file_name = $2', [
    tenantId,
    'AD_UserAccounts_20250110000000.csv',
  ]);
  assert.equal(files.rows[0].n, 1);
});

test('rows run in batches on several connections: a manager later in the file is found; cycles and repeated externalIds keep the file order', async () => {
  // A chain over two batches (so batches run at once): each row after the first names the row before it.
  const rows = Array.from({ length: 230 }, (_, i) =>
    row(`W${String(i).padStart(3, '0')}`, i === 0 ? {} : { responsible: `W${String(i - 1).padStart(3, '0')}` }),
  );
  rows.push(
    row('W300', { responsible: 'W310', resourceType: 'Wave Title', userTypologyGroup: 'Wave Group' }),
    row('W400'),
    row('W500', { responsible: 'W501' }),
    row('W501', { responsible: 'W500' }),
    row('W400', { name: 'Renamed W400' }),
    row('W310'),
  );
  await put(folders.data, 'AD_UserAccounts_20250111000000.csv', csv(rows));
  const r = await run();
  assert.equal(r.status, 'Succeeded', JSON.stringify(r.files[0]).slice(0, 400));
  assert.equal(r.files[0].created, 235);
  const ids = await db.query(
    `select u.external_id, u.name, m.external_id as manager from users u left join users m on m.id = u.responsible_id where u.tenant_id = $1 and u.external_id like 'W%'`,
    [tenantId],
  );
  const by = Object.fromEntries(ids.rows.map((x) => [x.external_id, x]));
  for (let i = 1; i < 230; i++) assert.equal(by[`W${String(i).padStart(3, '0')}`].manager, `W${String(i - 1).padStart(3, '0')}`);
  assert.equal(by.W300.manager, 'W310', 'a manager later in the file is found');
  assert.equal(by.W400.name, 'Renamed W400', 'the later row of an externalId wins');
  // A cycle runs in the file's order: the first row's manager did not exist yet.
  assert.equal(by.W500.manager, null);
  assert.equal(by.W501.manager, 'W500');
  const groups = await db.query(`select count(*)::int as n from typology_groups where tenant_id = $1 and name = 'Wave Group'`, [tenantId]);
  assert.equal(groups.rows[0].n, 1);
});

test('a leaver deactivated later in the file frees the login for a new user earlier in it', async () => {
  await put(folders.data, 'AD_UserAccounts_20250112000000.csv', csv([row('L001')]));
  assert.equal((await run()).files[0].created, 1);
  await put(folders.data, 'AD_UserAccounts_20250113000000.csv', csv([row('L002', { username: 'l001' }), row('L001', { isActive: 'false' })]));
  const r = await run();
  assert.deepEqual({ created: r.files[0].created, deactivated: r.files[0].deactivated, failed: r.files[0].failed }, { created: 1, deactivated: 1, failed: 0 });
  assert.equal((await user('L002'))?.UserName, 'l001');
  assert.equal((await user('L001'))?.UserName, 'l001_L001');
});

test('the schedule fires the feed through the automation worker, once per fire time', async () => {
  const on = await server.request('PUT', '/api/v3/user-feed', { headers: h, json: { enabled: true, schedule: '0 4 * * *' } });
  await put(folders.data, 'AD_UserAccounts_20250111000000.csv', csv([row('S001')]));
  // The fire time comes now instead of at 04:00.
  await db.query("update automations set next_fire_utc = now() - interval '1 second' where id = $1", [on.body.automationId]);
  let runs: any[] = [];
  for (let i = 0; i < 100; i++) {
    runs = (await server.request('GET', '/api/v3/user-feed/runs', { headers: h })).body.filter((x: any) => x.trigger === 'schedule');
    if (runs.length && runs[0].status !== 'Running') break;
    await sleep(100);
  }
  assert.equal(runs.length, 1);
  assert.equal(runs[0].status, 'Succeeded');
  assert.equal((await user('S001'))?.IsActive, true);
  const next = (await server.request('GET', '/api/v3/user-feed', { headers: h })).body.nextRunUtc;
  assert.equal(new Date(next).getUTCHours(), 4);
  await server.request('PUT', '/api/v3/user-feed', { headers: h, json: { enabled: false } });
});
