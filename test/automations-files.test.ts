// File and mail actions against real servers started here: SFTP (list, download, upload, move) on an
// OpenSSH sshd of the test's own, CSV in and out, and Email with an attachment on an SMTP server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from './sftp-server.ts';
import { type Smtp, startSmtp } from './smtp-server.ts';
import { USER_TYPE, waitForHistory } from './webhooks-helpers.ts';

let server: TestServer;
let h: Record<string, string>;
let tenantRefs: Record<string, string>;
let sftp: SftpServer;
let smtp: Smtp;

before(async () => {
  assert.ok(existsSync(SSHD), 'openssh-server is installed (.ci/run installs it)');
  sftp = await startSftpServer();
  smtp = await startSmtp();
  server = await startTestServer({
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    ATRIUM_SMTP_FROM: 'Atrium <atrium@test.example>',
  });
  const tenant = await server.createTenant('Files Agency');
  h = appHeaders(tenant);
  tenantRefs = { CompanyCode: tenant.companyCode, DepartmentExternalId: tenant.departmentExternalId, TypologyExternalId: tenant.typologyExternalId };
});

after(async () => {
  await server?.close();
  await smtp?.close();
  await sftp?.close();
});

test('SFTP list, download, upload and move on a real OpenSSH server; CSV in and out; Email with the file attached', async () => {
  const inbox = path.join(sftp.root, 'in');
  await mkdir(inbox);
  await writeFile(path.join(inbox, 'AD_UserAccounts_20240102000000.csv'), 'name,email\nZoe,"zoe@example.com"\n"Smith, Ann",ann@example.com\n');
  await writeFile(path.join(inbox, 'AD_UserAccounts_20240101000000.csv'), 'name,email\nFirst,first@example.com\n');
  await writeFile(path.join(inbox, 'notes.txt'), 'not a feed file');
  const key = await server.request('PUT', '/api/configuration-keys/SFTP-TEST', {
    headers: h,
    json: { ftpHostIp: sftp.address, ftpUsername: sftp.username, ftpPrivateKeyFile: sftp.privateKey },
  });
  assert.ok(key.status === 200 || key.status === 201, key.text);
  const ftp = (extra: Record<string, unknown>) => ({
    ftpHostIp: "{{['Cfg']$.ftpHostIp}}",
    ftpUsername: "{{['Cfg']$.ftpUsername}}",
    ftpPrivateKeyFile: "{{['Cfg']$.ftpPrivateKeyFile}}",
    ...extra,
  });
  const created = await server.request('POST', '/api/v3/automations', {
    headers: h,
    json: {
      name: 'Feed files',
      actions: [
        { name: 'Start', type: 'Start', next: 'Cfg' },
        { name: 'Cfg', type: 'ConfigurationKeys', value: 'SFTP-TEST', next: 'List' },
        { name: 'List', type: 'SftpListFiles', ...ftp({ ftpPath: inbox, fileNameContains: 'AD_UserAccounts_', fileNameEndsWith: '.csv' }), next: 'Download' },
        { name: 'Download', type: 'SftpDownload', ...ftp({ filePath: "{{['List']$[0].path}}" }), next: 'Rows' },
        { name: 'Rows', type: 'CSVMap', data: "{{['Download']}}", hasHeaderRecord: true, next: 'Csv' },
        {
          name: 'Csv',
          type: 'CreateCsv',
          data: "{{['Rows']}}",
          dataColumns: ['email', 'name'],
          delimiter: ';',
          hasHeaderRecord: true,
          fileName: 'report.csv',
          next: 'Upload',
        },
        { name: 'Upload', type: 'SftpUpload', ...ftp({ ftpPath: path.join(sftp.root, 'out'), fileName: 'report.csv', file: "{{['Csv']}}" }), next: 'Move' },
        { name: 'Move', type: 'SftpMoveTo', ...ftp({ filePath: "{{['List']$[0].path}}", ftpToPath: path.join(sftp.root, 'done') }), next: 'Mail' },
        {
          name: 'Mail',
          type: 'Email',
          toAddress: 'ops@example.com; hr@example.com',
          fromDisplayName: 'Feed Robot',
          subject: "Processed {{['List']$[0].name}}",
          body: "<p>{{['Rows'] | ToJsonString}}</p>",
          attachments: ["{{['Csv']}}"],
          next: 'Done',
        },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { files: "{{['List']$[*].name}}", moved: "{{['Move']$.to}}" } } },
      ],
    },
  });
  assert.equal(created.status, 201, created.text);
  const run = await server.request('POST', `/api/v3/automations/${created.body.id}/run`, { headers: h, json: {} });
  assert.equal(run.status, 200, run.text);
  assert.equal(run.body.status, 'Succeeded', JSON.stringify(run.body));
  assert.deepEqual(run.body.result.body.files, ['AD_UserAccounts_20240101000000.csv', 'AD_UserAccounts_20240102000000.csv']);

  // Uploaded and moved on the server's disk.
  assert.equal(await readFile(path.join(sftp.root, 'out', 'report.csv'), 'utf8'), 'email;name\r\nfirst@example.com;First\r\n');
  assert.deepEqual(await readdir(path.join(sftp.root, 'done')), ['AD_UserAccounts_20240101000000.csv']);
  assert.deepEqual((await readdir(inbox)).sort(), ['AD_UserAccounts_20240102000000.csv', 'notes.txt']);
  assert.equal(run.body.result.body.moved, path.join(sftp.root, 'done', 'AD_UserAccounts_20240101000000.csv'));

  // The mail, with its attachment; the private key never shows in the log.
  assert.equal(smtp.mails.length, 1);
  assert.deepEqual(smtp.mails[0].to, ['ops@example.com', 'hr@example.com']);
  assert.match(smtp.mails[0].body, /Subject: Processed AD_UserAccounts_20240101000000\.csv/);
  assert.match(smtp.mails[0].body, /From: Feed Robot <atrium@test\.example>/);
  assert.match(smtp.mails[0].body, /filename=report\.csv/);
  assert.ok(smtp.mails[0].body.includes(Buffer.from('email;name\r\nfirst@example.com;First\r\n').toString('base64')));
  const log = JSON.stringify(run.body.actions);
  assert.ok(!log.includes('PRIVATE KEY'), 'the private key is masked in the log');
  assert.ok(log.includes('********'));

  // CSV parsing keeps quoted delimiters.
  const second = await server.request('POST', `/api/v3/automations/${created.body.id}/run`, { headers: h, json: {} });
  assert.equal(second.body.status, 'Succeeded', JSON.stringify(second.body));
  const rows = second.body.actions.find((a: any) => a.name === 'Rows').output;
  assert.deepEqual(rows, [
    { name: 'Zoe', email: 'zoe@example.com' },
    { name: 'Smith, Ann', email: 'ann@example.com' },
  ]);
});

test('a wrong password fails the SFTP action with the reason, and the password stays masked', async () => {
  const created = await server.request('POST', '/api/v3/automations', {
    headers: h,
    json: {
      name: 'Wrong password',
      actions: [
        { name: 'Start', type: 'Start', next: 'List' },
        {
          name: 'List',
          type: 'SftpListFiles',
          ftpHostIp: sftp.address,
          ftpUsername: sftp.username,
          ftpPassword: 'not-the-password',
          ftpPath: sftp.root,
          next: 'Done',
        },
        { name: 'Done', type: 'Result' },
      ],
    },
  });
  assert.equal(created.status, 201, created.text);
  const run = await server.request('POST', `/api/v3/automations/${created.body.id}/run`, { headers: h, json: {} });
  assert.equal(run.body.status, 'Failed');
  assert.match(run.body.error, /SFTP 127\.0\.0\.1:\d+: .*authentication/i);
  assert.ok(!JSON.stringify(run.body).includes('not-the-password'));
});

test("the documentation's complete example (event → Rest → Email) runs as written", { timeout: 60_000 }, async () => {
  const doc = await readFile(path.join(import.meta.dirname, '..', 'docs', 'automations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A complete example'));
  const definition = JSON.parse(section.slice(section.indexOf('```json') + 7, section.indexOf('```', section.indexOf('```json') + 7)));
  const created = await server.request('POST', '/api/v3/automations', { headers: h, json: definition });
  assert.equal(created.status, 201, created.text);
  const sub = await server.request('POST', '/api/webhook-subscriptions', {
    headers: h,
    json: { Name: 'user updates', ActionType: 'Updated', DocumentType: USER_TYPE, IsAutomation: true, AutomationId: created.body.id, Active: true },
  });
  assert.equal(sub.status, 201, sub.text);
  const user = { UserName: 'doc.example', Name: 'Doc Example', ExternalId: 'DOC-1', IsActive: true, Mail: 'doc@example.com', ...tenantRefs };
  assert.equal((await server.request('POST', '/api/users', { headers: h, json: user })).status, 201);
  const updated = await server.request('POST', '/api/users', { headers: h, json: { ...user, Name: 'Doc Example Renamed' } });
  assert.equal(updated.status, 200, updated.text);
  const items = await waitForHistory(server, h, sub.body.id, (list) => list.length === 1 && list[0].status !== 'Pending');
  assert.equal(items[0].status, 'Succeeded', JSON.stringify(items));
  assert.equal(items[0].attempts[0].statusCode, 200);
  assert.equal(JSON.parse(items[0].attempts[0].responseBody).user, 'Doc Example Renamed');
  const mail = smtp.mails.find((m) => m.body.includes('Subject: User doc.example was updated'));
  assert.ok(mail, JSON.stringify(smtp.mails.map((m) => m.body.slice(0, 300))));
  assert.deepEqual(mail.to, ['ops@example.com']);
  assert.match(mail.body, /Doc Example Renamed \(doc@example\.com\)/);
});
