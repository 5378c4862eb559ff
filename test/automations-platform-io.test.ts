// The platform's I/O actions written exactly as its documentation shows them (actionType, its field names
// and casing; only hosts moved to loopback and credentials to the test's own), saved and run through the
// HTTP API: the three published recipes end to end against a real SMTP server and an HTTP stub, files handed
// on as the platform does, CSVMap, ReadFileData, ApplyTemplate, CreatePdfFromDocument (the PDF read back),
// Email attachments, Rest responseHeaders, the four SFTP actions on a real OpenSSH server, OAuth2 and Azure AD
// tokens from a token endpoint stub (masked everywhere), and XmlMap refusing XML bombs and deep nesting.
import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, verify, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import forge from 'node-forge';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from './sftp-server.ts';
import { type Smtp, startSmtp } from './smtp-server.ts';

interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let f: ClientApiFixture;
let smtp: Smtp;
let sftp: SftpServer;
let stub: string;
let stubServer: ReturnType<typeof createServer>;
const hits: Hit[] = [];
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x41]);
const TIMESHEET =
  'Nome do funcionário;ID do funcionário;Departamento;Entrada 1;Saída 1;Entrada 2;Saída 2\n' +
  'John Doe;12345;Engineering;09:00;12:00;13:00;18:00\n' +
  'Jane Smith;67890;Marketing;08:30;12:30;13:30;17:30\n';
const PFX_PASSWORD = 'MyfilePfxPassword';
let pfx: Buffer;
let certPem: string;

/** A self-signed certificate and its key as a PFX (what AzureAdCertificateAuthentication reads). */
function makePfx(): { pfx: Buffer; certPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const attrs = [{ name: 'commonName', value: 'atrium-test.invalid' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.sign(key, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, [cert], PFX_PASSWORD, { algorithm: '3des' });
  return { pfx: Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'latin1'), certPem: forge.pki.certificateToPem(cert) };
}

const json = (res: any, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Verifies an RS256 client assertion against the test certificate: its signature, x5t, aud, iss and sub. */
function assertionOk(jwt: string, audience: string, clientId: string): boolean {
  const [h, c, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString());
  const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
  const x5t = createHash('sha1').update(new X509Certificate(certPem).raw).digest('base64url');
  const signed = verify('sha256', Buffer.from(`${h}.${c}`), createPublicKey(certPem), Buffer.from(s, 'base64url'));
  return (
    signed &&
    header.alg === 'RS256' &&
    header.x5t === x5t &&
    claims.aud === audience &&
    claims.iss === clientId &&
    claims.sub === clientId &&
    claims.exp > Date.now() / 1000
  );
}

async function startStub(): Promise<void> {
  stubServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', stub);
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const form = new URLSearchParams(body.toString());
      const p = url.pathname;
      if (p === '/api/analytics/globalQuery/Expense%20-%20Export/execute' && req.method === 'POST')
        return json(res, 200, {
          Data: [
            { Employee: 'Smith, Ann', CostCenter: 'CC-1', TotalValue: 120.5, ExpenseDate: '2026-03-01', Secret: 'not exported' },
            { Employee: 'Zoe "Z" Doe', CostCenter: 'CC-2', TotalValue: 80, ExpenseDate: '2026-03-02', Secret: 'not exported' },
          ],
        });
      if (p === '/api/files' && req.method === 'POST') return json(res, 201, { received: true, id: 'F-1' });
      if (p.startsWith('/api/projects/')) return json(res, 200, { Id: p.split('/').pop(), Name: 'Summer Campaign 2026' });
      if (p === '/projects' && req.method === 'POST') return json(res, 200, { ok: true });
      if (p === '/project-file') return json(res, 200, { Uri: `${stub}/files/logo.bin` });
      if (p === '/files/logo.bin') return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(BINARY);
      if (p === '/files/timesheet.csv') return res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(TIMESHEET);
      if (p === '/files/file.pfx') return res.writeHead(200, { 'content-type': 'application/x-pkcs12' }).end(pfx);
      if (p === '/upload') return json(res, 200, { size: body.length });
      if (p === '/files/id_ed25519') return res.writeHead(200, { 'content-type': 'text/plain' }).end(sftp?.privateKey ?? '');
      if (p === '/api/users' && req.method === 'POST') {
        const user = JSON.parse(body.toString());
        return json(res, 200, { userName: user.userName, externalId: user.externalId });
      }
      if (p === '/headers') return json(res, 200, { ok: true }, { 'x-api-version': '2.1', 'x-other': 'not asked for' });
      if (p === '/oauth/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri') ?? '');
        back.searchParams.set('code', 'CODE-0123456789');
        back.searchParams.set('state', url.searchParams.get('client_id') === 'BadStateClient' ? 'forged' : (url.searchParams.get('state') ?? ''));
        return res.writeHead(302, { location: back.toString() }).end();
      }
      if (p === '/oauth/token') {
        if (form.get('grant_type') !== 'authorization_code' || form.get('code') !== 'CODE-0123456789' || form.get('client_secret') !== 'MyClientSecret')
          return json(res, 400, { error: 'invalid_grant' });
        return json(res, 200, { access_token: 'oauth-access-7f3c9d2e1b', expires_in: 14400, refresh_token: 'oauth-refresh-55aa66bb', token_type: 'Bearer' });
      }
      const azure = /^\/azure\/([^/]+)\/oauth2\/token$/.exec(p);
      if (azure) {
        const audience = `${stub}/azure/${azure[1]}/oauth2/token`;
        const ok =
          form.get('grant_type') === 'client_credentials' &&
          form.get('resource') === 'https://graph.microsoft.com' &&
          (form.get('client_secret') === 'azure-client-secret-1'
            ? true
            : form.get('client_assertion_type') === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' &&
              assertionOk(form.get('client_assertion') ?? '', audience, form.get('client_id') ?? ''));
        if (!ok) return json(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
        return json(res, 200, {
          token_type: 'Bearer',
          expires_in: 3599,
          resource: form.get('resource'),
          access_token: `azure-token-${form.get('client_secret') ? 'secret' : 'cert'}-9c8b7a`,
        });
      }
      return json(res, 200, { ok: true });
    });
  });
  await new Promise<void>((resolve) => stubServer.listen(0, '127.0.0.1', resolve));
  stub = `http://127.0.0.1:${(stubServer.address() as AddressInfo).port}`;
}

before(async () => {
  ({ pfx, certPem } = makePfx());
  await startStub();
  smtp = await startSmtp();
  if (existsSync(SSHD)) sftp = await startSftpServer();
  f = await clientApiFixture('Platform IO Agency', {
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    ATRIUM_SMTP_FROM: 'Atrium <atrium@test.example>',
    ATRIUM_AZURE_AD_AUTHORITY: `${stub}/azure`,
  });
});

after(async () => {
  await f?.close();
  await smtp?.close();
  await sftp?.close();
  await new Promise((resolve) => stubServer?.close(resolve));
});

async function save(definition: Record<string, unknown>): Promise<string> {
  const res = await f.server.request('POST', '/api/v3/automations', { headers: f.h, json: definition });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function runNow(id: string, input: unknown = null): Promise<any> {
  const res = await f.server.request('POST', `/api/v3/automations/${id}/run`, { headers: f.h, json: { input } });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The execute URL, as a trigger calls it: the answer is the reached Result's httpResponse. */
async function execute(id: string, body: unknown): Promise<{ status: number; text: string; body: any }> {
  return f.server.request('POST', `/api/tenants/${f.tenant.tenantId}/integration-workflows/${id}/execute`, { headers: f.h, json: body });
}

const output = (run: any, name: string) => run.actions.find((a: any) => a.name === name)?.output;
const succeeded = (run: any) => assert.equal(run.status, 'Succeeded', JSON.stringify(run, null, 1).slice(0, 3000));

/** The text a PDF shows: its content streams inflated, the strings of their Tj/TJ operators decoded. */
function pdfText(pdf: Buffer): string {
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const raw = pdf.toString('latin1');
  const out: string[] = [];
  const re = /stream\r?\n/g;
  for (let m = re.exec(raw); m; m = re.exec(raw)) {
    const start = m.index + m[0].length;
    const end = raw.indexOf('endstream', start);
    if (end < 0) break;
    const dict = raw.slice(Math.max(0, m.index - 300), m.index);
    let data = Buffer.from(raw.slice(start, end), 'latin1');
    if (/FlateDecode/.test(dict.slice(dict.lastIndexOf('<<'))))
      try {
        data = inflateSync(data);
      } catch {
        continue;
      }
    const content = data.toString('latin1');
    for (const t of content.matchAll(/<([0-9A-Fa-f]*)>\s*Tj|\(((?:\\.|[^\\)])*)\)\s*Tj/g))
      out.push(t[1] !== undefined ? Buffer.from(t[1], 'hex').toString('latin1') : t[2].replace(/\\(.)/g, '$1'));
    re.lastIndex = end;
  }
  return out.join('\n');
}

/** An attachment of a received mail: its MIME part named `fileName`, decoded from Base64. */
function attachment(mail: string, fileName: string): Buffer | null {
  const boundary = /boundary="?([^";\r\n]+)"?/.exec(mail)?.[1];
  if (!boundary) return null;
  for (const part of mail.split(`--${boundary}`).flatMap((p) => {
    const inner = /boundary="?([^";\r\n]+)"?/.exec(p)?.[1];
    return inner ? p.split(`--${inner}`) : [p];
  })) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const headers = part.slice(0, split);
    if (!new RegExp(`filename="?${fileName.replace(/\./g, '\\.')}"?`).test(headers)) continue;
    const body = part.slice(split + 4).replace(/\s+/g, '');
    return /base64/i.test(headers) ? Buffer.from(body, 'base64') : Buffer.from(part.slice(split + 4), 'utf8');
  }
  return null;
}

describe('the published recipes, end to end', () => {
  test('Build your first automation (NotifyOnProjectCreated): the project name reaches the external endpoint; 200 with content-type json', async () => {
    const id = await save({
      name: 'NotifyOnProjectCreated',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'NotifyChannel' },
        {
          actionType: 'Rest',
          name: 'NotifyChannel',
          next: 'Exit',
          Method: 'POST',
          bodyMediaType: 'Json',
          url: `${stub}/projects`,
          body: '{"text":"New project created: {{[\'#HttpRequest\'].Body.Name}}"}',
          isApiCall: false,
          ensureSuccessStatusCode: true,
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '' } },
      ],
    });
    const before = hits.length;
    const res = await execute(id, { Id: '5b4c3d2e-0000-4000-8000-000000000001', Name: 'Summer Campaign 2026' });
    assert.equal(res.status, 200, res.text);
    const sent = hits.slice(before).find((h) => h.url === '/projects');
    assert.ok(sent, 'NotifyChannel called the endpoint');
    assert.equal(sent.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(sent.body.toString()), { text: 'New project created: Summer Campaign 2026' });

    // "Saving makes it fire on every project creation": attached to the project-created event.
    const sub = await f.server.request('POST', '/api/webhook-subscriptions', {
      headers: f.h,
      json: {
        Name: 'projects created',
        ActionType: 'Created',
        DocumentType: 'Skill.Module.BusinessObjects.Project',
        IsAutomation: true,
        AutomationId: id,
        Active: true,
      },
    });
    assert.equal(sub.status, 201, sub.text);
    const fromEvent = hits.length;
    await f.send('POST', '/api/v3/projects', {
      OperationType: 0,
      CreateModel: { Name: 'Harbour Lights 2026', CompanyId: f.tenant.companyId, ClientId: f.clientId },
    });
    const until = Date.now() + 30_000;
    let notified: Hit | undefined;
    while (!notified && Date.now() < until) {
      notified = hits.slice(fromEvent).find((h) => h.url === '/projects');
      if (!notified) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(notified, 'the event ran the automation');
    assert.deepEqual(JSON.parse(notified.body.toString()), { text: 'New project created: Harbour Lights 2026' });
  });

  test("an event's Body has the document's fields the event does not carry (an Updated project's Name, read when the run starts)", async () => {
    const id = await save({
      name: 'OnProjectUpdated',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'Notify' },
        {
          actionType: 'Rest',
          name: 'Notify',
          next: 'Exit',
          Method: 'POST',
          bodyMediaType: 'Json',
          url: `${stub}/project-updated`,
          body: '{"name": "{{[\'#HttpRequest\'].Body.Name}}", "investment": "{{[\'#HttpRequest\'].Body.Investment}}", "event": "{{[\'#HttpRequest\'].Body.actionType}}", "changed": "{{[\'#HttpRequest\'].Body.detail.Name}}"}',
          ensureSuccessStatusCode: true,
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200 } },
      ],
    });
    const project = await f.send('POST', '/api/v3/projects', {
      OperationType: 0,
      CreateModel: { Name: 'Northern Lights 2026', CompanyId: f.tenant.companyId, ClientId: f.clientId },
    });
    const projectId = project.Id ?? project.id;
    const sub = await f.server.request('POST', '/api/webhook-subscriptions', {
      headers: f.h,
      json: {
        Name: 'projects updated',
        ActionType: 'Updated',
        DocumentType: 'Skill.Module.BusinessObjects.Project',
        IsAutomation: true,
        AutomationId: id,
        Active: true,
      },
    });
    assert.equal(sub.status, 201, sub.text);
    const from = hits.length;
    // Only Investment changes: the Updated event's detail has no Name; Body has it from the document.
    await f.send('PATCH', `/api/projects/${projectId}`, { Investment: { value: 250 } });
    const until = Date.now() + 30_000;
    let notified: Hit | undefined;
    while (!notified && Date.now() < until) {
      notified = hits.slice(from).find((h) => h.url === '/project-updated');
      if (!notified) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(notified, 'the Updated event ran the automation');
    assert.deepEqual(JSON.parse(notified.body.toString()), { name: 'Northern Lights 2026', investment: '250', event: 'Updated', changed: '' });
    await f.server.request('DELETE', `/api/webhook-subscriptions/${sub.body.id ?? sub.body.Id}`, { headers: f.h });
  });

  test("Export data to a CSV file: the CSV text, Base64 in the delivered body, columns as listed; Result is DeliverFile's result", async () => {
    const id = await save({
      name: 'ExportExpensesToCsv',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetData' },
        {
          actionType: 'Rest',
          name: 'GetData',
          next: 'CreateCsv',
          Method: 'POST',
          bodyMediaType: 'Json',
          url: `${stub}/api/analytics/globalQuery/Expense - Export/execute`,
          body: '{}',
        },
        {
          actionType: 'CreateCsv',
          name: 'CreateCsv',
          next: 'DeliverFile',
          hasHeaderRecord: true,
          delimiter: ',',
          quote: '"',
          data: "{{['GetData'].Content.Data}}",
          dataColumns: ['Employee', 'CostCenter', 'TotalValue', 'ExpenseDate'],
        },
        {
          actionType: 'Rest',
          name: 'DeliverFile',
          next: 'Exit',
          Method: 'POST',
          bodyMediaType: 'Raw',
          url: `${stub}/api/files`,
          body: '{"fileName":"expenses.csv","content":"{{[\'CreateCsv\']$ | ToBase64}}"}',
          requestHeaders: [{ name: 'Content-Type', value: 'application/json' }],
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, headers: {}, body: "{{['DeliverFile']}}" } },
      ],
    });
    const before = hits.length;
    const run = await runNow(id);
    succeeded(run);
    const csv = 'Employee,CostCenter,TotalValue,ExpenseDate\r\n"Smith, Ann",CC-1,120.5,2026-03-01\r\n"Zoe ""Z"" Doe",CC-2,80,2026-03-02\r\n';
    assert.equal(output(run, 'CreateCsv'), csv, 'the CSV action hands on the CSV text itself');
    const delivered = hits.slice(before).find((h) => h.url === '/api/files');
    assert.ok(delivered);
    assert.equal(delivered.headers['content-type'], 'application/json');
    const sent = JSON.parse(delivered.body.toString());
    assert.equal(sent.fileName, 'expenses.csv');
    assert.equal(Buffer.from(sent.content, 'base64').toString('utf8'), csv, "{{['CreateCsv']$ | ToBase64}} is the Base64 of the CSV text");
    assert.equal(run.result.statusCode, 200);
    assert.equal(run.result.body.StatusCode, 201);
    assert.deepEqual(run.result.body.Content, { received: true, id: 'F-1' });
  });

  test("Send an email notification: the project name from GetDetails in the HTML body, the sender's display name; with a CSV attached by its name", async () => {
    const recipe = (extra: Record<string, unknown>, before: Record<string, unknown>[] = [], next = 'SendEmail') => ({
      name: `NotifyByEmail ${Object.keys(extra).length}`,
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetDetails' },
        { actionType: 'Rest', name: 'GetDetails', next, Method: 'GET', url: `${stub}/api/projects/{{['#HttpRequest'].Body.Id}}` },
        ...before,
        {
          actionType: 'Email',
          name: 'SendEmail',
          next: 'Exit',
          subject: 'New project created',
          body: "<p>Project <strong>{{['GetDetails'].Content.Name}}</strong> was just created.</p>",
          fromDisplayName: 'Notifications | Skills Workflow',
          toAddress: 'team@example.com',
          ...extra,
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, headers: {}, body: '' } },
      ],
    });
    const id = await save(recipe({}));
    const projectId = '5b4c3d2e-0000-4000-8000-000000000002';
    const mailsBefore = smtp.mails.length;
    const res = await execute(id, { Id: projectId });
    assert.equal(res.status, 200, res.text);
    assert.ok(
      hits.some((h) => h.url === `/api/projects/${projectId}`),
      'GetDetails read the project named by the trigger',
    );
    const mail = smtp.mails[mailsBefore];
    assert.ok(mail, 'one mail sent');
    assert.deepEqual(mail.to, ['team@example.com']);
    assert.match(mail.body, /Subject: New project created/);
    assert.match(mail.body, /From: "?Notifications \| Skills Workflow"? <atrium@test\.example>/);
    assert.match(mail.body.replace(/=\r\n/g, ''), /<strong>Summer Campaign 2026<\/strong>/);

    // The recipe's "Adapt it": a generated CSV attached by the file's name.
    const withCsv = await save(
      recipe(
        { attachments: ['projects.csv'] },
        [
          {
            actionType: 'CreateCsv',
            name: 'ProjectsCsv',
            next: 'SendEmail',
            fileName: 'projects.csv',
            data: ["{{['GetDetails'].Content}}"],
            dataColumns: ['Id', 'Name'],
          },
        ],
        'ProjectsCsv',
      ),
    );
    const n = smtp.mails.length;
    assert.equal((await execute(withCsv, { Id: projectId })).status, 200);
    const csv = attachment(smtp.mails[n].body, 'projects.csv');
    assert.ok(csv, smtp.mails[n].body.slice(0, 2000));
    assert.equal(csv.toString('utf8'), `Id,Name\r\n${projectId},Summer Campaign 2026\r\n`);
  });
});

describe('files and documents', () => {
  test('Download then Rest with bodyMediaType File: $.Content hands the downloaded bytes on unchanged', async () => {
    const id = await save({
      name: 'Copy a file',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetProjectFile' },
        { actionType: 'Rest', name: 'GetProjectFile', next: 'DownloadFile', Method: 'GET', url: `${stub}/project-file` },
        { actionType: 'Download', name: 'DownloadFile', next: 'UploadFile', url: "{{['GetProjectFile']$.Content.Uri}}" },
        {
          actionType: 'Rest',
          name: 'UploadFile',
          next: 'Exit',
          Method: 'Post',
          url: `${stub}/upload?name=Summer Campaign 2019`,
          body: "{{['DownloadFile']$.Content}}",
          bodyMediaType: 'File',
          RequestHeaders: [
            { name: 'Accept', value: 'application/json; odata=verbose' },
            { name: 'Authorization', value: 'Bearer {Token}' },
          ],
        },
        { actionType: 'Result', name: 'Exit' },
      ],
    });
    const before = hits.length;
    const run = await runNow(id);
    succeeded(run);
    const upload = hits.slice(before).find((h) => h.url.startsWith('/upload'));
    assert.ok(upload);
    assert.deepEqual(upload.body, BINARY, 'the bytes, not a text or JSON form of them');
    assert.equal(upload.headers.accept, 'application/json; odata=verbose');
    const downloaded = output(run, 'DownloadFile');
    assert.equal(downloaded.Content, BINARY.toString('base64'), "a binary file's Content reads as its Base64");
    assert.equal(downloaded.FileName, 'logo.bin');
    assert.equal(output(run, 'UploadFile').Content.size, BINARY.length);
  });

  test('CSVMap as its examples show: a header row with selectColumns (case-insensitive), Field1.. without one, read via $.Content; ignoreSaveToContext', async () => {
    const id = await save({
      name: 'Timesheets',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'DownloadFile' },
        { actionType: 'Download', name: 'DownloadFile', next: 'ParseTimesheet', url: `${stub}/files/timesheet.csv` },
        {
          actionType: 'CSVMap',
          name: 'ParseTimesheet',
          next: 'ParseNoHeaders',
          data: "{{['DownloadFile']}}",
          delimiter: ';',
          namesInFirstRow: true,
          selectColumns: ['Nome do funcionário', 'id do FUNCIONÁRIO', 'Entrada 1', 'Saída 1'],
        },
        {
          actionType: 'CSVMap',
          name: 'ParseNoHeaders',
          next: 'Quiet',
          data: 'John Doe,john@example.com,Engineering\nJane Smith,jane@example.com,Marketing',
          namesInFirstRow: false,
          delimiter: ',',
        },
        {
          actionType: 'CSVMap',
          name: 'Quiet',
          next: 'Exit',
          data: "{{['DownloadFile']$.Content}}",
          delimiter: ';',
          namesInFirstRow: true,
          ignoreSaveToContext: true,
        },
        {
          actionType: 'Result',
          name: 'Exit',
          httpResponse: {
            statusCode: 200,
            body: { first: "{{['ParseTimesheet']$.Content[0]}}", second: "{{['ParseNoHeaders']$.Content[1].Field2}}", quiet: "{{['Quiet']}}" },
          },
        },
      ],
    });
    const run = await runNow(id);
    succeeded(run);
    assert.deepEqual(run.result.body.first, { 'Nome do funcionário': 'John Doe', 'ID do funcionário': '12345', 'Entrada 1': '09:00', 'Saída 1': '12:00' });
    assert.deepEqual(output(run, 'ParseNoHeaders').Content[0], { Field1: 'John Doe', Field2: 'john@example.com', Field3: 'Engineering' });
    assert.equal(run.result.body.second, 'jane@example.com');
    assert.deepEqual(run.result.body.quiet, {
      Count: 2,
      Columns: ['Nome do funcionário', 'ID do funcionário', 'Departamento', 'Entrada 1', 'Saída 1', 'Entrada 2', 'Saída 2'],
    });
  });

  test('ApplyTemplate: data is the Liquid template (never an expression), body its model; the three examples render as documented', async () => {
    const id = await save({
      name: 'Templates',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'BuildDocumentTypeMessage' },
        {
          actionType: 'ApplyTemplate',
          name: 'BuildDocumentTypeMessage',
          next: 'BuildStatusMessage',
          body: '{"documentType":"Skill.Module.BusinessObjects.CommercialClient"}',
          data: '<p>Document Type: {{ documentType }}</p>',
        },
        {
          actionType: 'ApplyTemplate',
          name: 'BuildStatusMessage',
          next: 'BuildUserList',
          body: '{"documentName":"Campaign Brief","approved":true}',
          data: '{% if approved %}<p>{{ documentName }} was approved.</p>{% else %}<p>{{ documentName }} is awaiting approval.</p>{% endif %}',
        },
        {
          actionType: 'ApplyTemplate',
          name: 'BuildUserList',
          next: 'Filters',
          body: '{"users":[{"name":"Adam"},{"name":"Maria"}]}',
          data: '<ul>{% for user in users %}<li>{{ user.name }}</li>{% endfor %}</ul>',
        },
        {
          actionType: 'ApplyTemplate',
          name: 'Filters',
          next: 'Exit',
          body: '{"documentName":"brief","userName":"ann","description":"<b>&</b>","from":"{{[\'#HttpRequest\'].Body.From}}"}',
          data: '{{ documentName | upcase }}|{{ missing | default: "Unknown user" }}|{{ description | escape }}|{{ userName | capitalize | prepend: "Hello " }}|{{ from }}',
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, body: "{{['BuildDocumentTypeMessage']}}" } },
      ],
    });
    const run = await runNow(id, { From: 'Lisbon' });
    succeeded(run);
    assert.equal(run.result.body, '<p>Document Type: Skill.Module.BusinessObjects.CommercialClient</p>');
    assert.equal(output(run, 'BuildStatusMessage'), '<p>Campaign Brief was approved.</p>');
    assert.equal(output(run, 'BuildUserList'), '<ul><li>Adam</li><li>Maria</li></ul>');
    assert.equal(output(run, 'Filters'), 'BRIEF|Unknown user|&lt;b&gt;&amp;&lt;/b&gt;|Hello Ann|Lisbon');
    // A broken Liquid template is refused on save, at its path.
    const bad = await f.server.request('POST', '/api/v3/automations', {
      headers: f.h,
      json: {
        name: 'Bad template',
        actions: [
          { actionType: 'Start', name: 'Start', next: 'T' },
          { actionType: 'ApplyTemplate', name: 'T', next: 'Exit', body: '{}', data: '{% if x %}never closed' },
          { actionType: 'Result', name: 'Exit' },
        ],
      },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.ok(JSON.stringify(bad.body).includes('/actions/1/data'), bad.text);
  });

  test('CreatePdfFromDocument renders the project to a PDF holding its fields; Email attaches it as document.pdf', async () => {
    const project = await f.send('POST', '/api/v3/projects', {
      OperationType: 0,
      CreateModel: { Name: 'Atlas Rebrand 2026', CompanyId: f.tenant.companyId, ClientId: f.clientId },
    });
    const id = await save({
      name: 'Project PDF',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetPdfFromDocument' },
        { actionType: 'CreatePdfFromDocument', name: 'GetPdfFromDocument', next: 'SendEmail', documentType: 'Project', documentId: project.Id, layoutId: '20' },
        {
          actionType: 'Email',
          name: 'SendEmail',
          next: 'Exit',
          body: 'This body can also be HTML.',
          subject: 'This is the e-mail subject',
          fromDisplayName: 'Notification | Skills Workflow',
          toAddress: 'user@example.com',
          attachments: ['document.pdf'],
        },
        {
          actionType: 'Result',
          name: 'Exit',
          httpResponse: {
            statusCode: 200,
            body: { name: "{{['GetPdfFromDocument'].FileName}}", type: "{{['GetPdfFromDocument'].ContentType}}", size: "{{['GetPdfFromDocument'].Size}}" },
          },
        },
      ],
    });
    const n = smtp.mails.length;
    const run = await runNow(id);
    succeeded(run);
    const made = run.result.body;
    assert.equal(made.name, 'document.pdf');
    assert.equal(made.type, 'application/pdf');
    const mailed = attachment(smtp.mails[n].body, 'document.pdf');
    assert.ok(mailed, smtp.mails[n].body.slice(0, 1500));
    assert.equal(mailed.length, made.size);
    const text = pdfText(mailed);
    assert.match(text, /Project/);
    assert.match(text, /Atlas Rebrand 2026/);
    assert.ok(text.includes(project.Id), text);

    // An unknown document fails the action with the reason; an attachment naming no file fails the Email.
    const missing = await save({
      name: 'Missing PDF',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'Pdf' },
        {
          actionType: 'CreatePdfFromDocument',
          name: 'Pdf',
          next: 'Exit',
          documentType: 'Project',
          documentId: '00000000-0000-4000-8000-000000000000',
          layoutId: '20',
        },
        { actionType: 'Result', name: 'Exit' },
      ],
    });
    const failed = await runNow(missing);
    assert.equal(failed.status, 'Failed');
    assert.match(failed.error, /There is no Project/);
    const noFile = await save({
      name: 'No attachment',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'SendEmail' },
        {
          actionType: 'Email',
          name: 'SendEmail',
          next: 'Exit',
          body: 'x',
          subject: 'x',
          fromDisplayName: 'x',
          toAddress: 'user@example.com',
          attachments: ['document.pdf'],
        },
        { actionType: 'Result', name: 'Exit' },
      ],
    });
    const refused = await runNow(noFile);
    assert.equal(refused.status, 'Failed');
    assert.match(refused.error, /attachments\/0 names no file of this run: "document\.pdf"/);
  });

  test('Rest responseHeaders brings back only the headers it names', async () => {
    const id = await save({
      name: 'Headers',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'Call' },
        { actionType: 'Rest', name: 'Call', next: 'Exit', Method: 'GET', url: `${stub}/headers`, responseHeaders: ['date', 'x-api-version'] },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, body: "{{['Call'].Headers}}" } },
      ],
    });
    const run = await runNow(id);
    succeeded(run);
    assert.deepEqual(Object.keys(run.result.body).sort(), ['date', 'x-api-version']);
    assert.equal(run.result.body['x-api-version'], '2.1');
  });
});

describe('authentication actions against a token endpoint stub', () => {
  const noLeak = (run: any, ...secrets: string[]) => {
    const text = JSON.stringify(run);
    for (const s of secrets) assert.ok(!text.includes(s), `"${s}" shows in the run: ${text.slice(0, 2000)}`);
  };

  test('OAuth2Authentication: the authorization code flow with state verification; the token reaches a Rest call and is masked everywhere', async () => {
    const definition = (clientId: string) => ({
      name: `OAuth ${clientId}`,
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetToken' },
        {
          actionType: 'OAuth2Authentication',
          name: 'GetToken',
          next: 'Call',
          oauthClientId: clientId,
          oauthClientSecret: 'MyClientSecret',
          oauthBaseUrl: `${stub}/oauth`,
          oauthScope: 'commercial',
          oauthCallbackUrl: 'http://127.0.0.1:4080/oauth/callback',
          OauthUseStateVerification: true,
        },
        {
          actionType: 'Rest',
          name: 'Call',
          next: 'Exit',
          Method: 'POST',
          url: `${stub}/echo`,
          body: '{"token":"{{[\'GetToken\'].access_token}}"}',
          requestHeaders: [{ name: 'Authorization', value: "Bearer {{['GetToken'].access_token}}" }],
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, body: "{{['GetToken']}}" } },
      ],
    });
    const before = hits.length;
    const run = await runNow(await save(definition('MyClientId')));
    succeeded(run);
    const mine = hits.slice(before);
    const authorize = mine.find((h) => h.url.startsWith('/oauth/authorize'));
    assert.ok(authorize);
    const q = new URL(authorize.url, stub).searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), 'MyClientId');
    assert.equal(q.get('redirect_uri'), 'http://127.0.0.1:4080/oauth/callback');
    assert.equal(q.get('scope'), 'commercial');
    assert.ok((q.get('state') ?? '').length >= 16);
    const token = new URLSearchParams(mine.find((h) => h.url === '/oauth/token')?.body.toString());
    assert.equal(token.get('grant_type'), 'authorization_code');
    assert.equal(token.get('redirect_uri'), 'http://127.0.0.1:4080/oauth/callback');
    const call = mine.find((h) => h.url === '/echo');
    assert.equal(call?.headers.authorization, 'Bearer oauth-access-7f3c9d2e1b');
    assert.deepEqual(JSON.parse(call?.body.toString() ?? ''), { token: 'oauth-access-7f3c9d2e1b' });
    assert.equal(run.result.body.access_token, '********');
    assert.equal(run.result.body.refresh_token, '********');
    assert.equal(run.result.body.expires_in, 14400);
    noLeak(run, 'oauth-access-7f3c9d2e1b', 'oauth-refresh-55aa66bb', 'MyClientSecret', 'CODE-0123456789');

    // A state that is not the one sent fails the action.
    const forged = await runNow(await save(definition('BadStateClient')));
    assert.equal(forged.status, 'Failed');
    assert.match(forged.error, /state .* not the one sent/);
  });

  test('AzureAdAuthentication (client secret) and AzureAdCertificateAuthentication (client assertion signed with the PFX key), tokens masked', async () => {
    const tenantGuid = '3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b';
    await f.server.request('PUT', '/api/configuration-keys/AZURE-APP', { headers: f.h, json: { ClientSecret: 'azure-client-secret-1' } });
    const id = await save({
      name: 'Azure tokens',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'Cfg' },
        { actionType: 'ConfigurationKeys', name: 'Cfg', next: 'GetAzureAdToken', value: 'AZURE-APP' },
        {
          actionType: 'AzureAdAuthentication',
          name: 'GetAzureAdToken',
          next: 'GetPfx',
          tenantId: tenantGuid,
          clientId: 'a1b2c3d4-0000-4000-8000-00000000000a',
          clientSecret: "{{['Cfg'].ClientSecret}}",
          resource: 'https://graph.microsoft.com',
        },
        { actionType: 'Download', name: 'GetPfx', next: 'GetCertToken', url: `${stub}/files/file.pfx` },
        {
          actionType: 'AzureAdCertificateAuthentication',
          name: 'GetCertToken',
          next: 'GetCertTokenAsTemplate',
          tenantId: tenantGuid,
          clientId: '3c2b1a00-0000-4000-8000-00000000000b',
          CertificatePfx: 'file.pfx',
          CertificatePfxPassword: PFX_PASSWORD,
        },
        {
          // The platform's certificate template writes this type with CertificatePfx: read as the certificate variant.
          actionType: 'AzureAdAuthentication',
          name: 'GetCertTokenAsTemplate',
          next: 'Exit',
          tenantId: tenantGuid,
          clientId: '3c2b1a00-0000-4000-8000-00000000000b',
          CertificatePfx: 'file.pfx',
          CertificatePfxPassword: PFX_PASSWORD,
          resource: 'https://graph.microsoft.com',
        },
        {
          actionType: 'Result',
          name: 'Exit',
          httpResponse: {
            statusCode: 200,
            body: { fromKey: "{{['GetAzureAdToken']}}", cert: "{{['GetCertToken'].token_type}}", template: "{{['GetCertTokenAsTemplate'].resource}}" },
          },
        },
      ],
    });
    const before = hits.length;
    const run = await runNow(id);
    succeeded(run);
    const mine = hits.slice(before).filter((h) => h.url.startsWith('/azure/'));
    assert.equal(mine.length, 3);
    assert.ok(mine.every((h) => h.url === `/azure/${tenantGuid}/oauth2/token`));
    const secretForm = new URLSearchParams(mine[0].body.toString());
    assert.equal(secretForm.get('client_secret'), 'azure-client-secret-1', 'the configuration key secret reaches the token endpoint in clear');
    assert.equal(secretForm.get('resource'), 'https://graph.microsoft.com');
    const certForm = new URLSearchParams(mine[1].body.toString());
    assert.equal(certForm.get('client_secret'), null);
    assert.ok(assertionOk(certForm.get('client_assertion') ?? '', `${stub}/azure/${tenantGuid}/oauth2/token`, '3c2b1a00-0000-4000-8000-00000000000b'));
    assert.equal(run.result.body.fromKey.access_token, '********');
    assert.equal(run.result.body.fromKey.expires_in, 3599);
    assert.equal(run.result.body.cert, 'Bearer');
    assert.equal(run.result.body.template, 'https://graph.microsoft.com');
    noLeak(run, 'azure-token-secret-9c8b7a', 'azure-token-cert-9c8b7a', 'azure-client-secret-1', PFX_PASSWORD, certForm.get('client_assertion') ?? '');

    // A wrong secret: the endpoint's error in the run error, the secret still masked.
    const wrong = await save({
      name: 'Azure wrong secret',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'T' },
        { actionType: 'AzureAdAuthentication', name: 'T', next: 'Exit', tenantId: tenantGuid, clientId: 'x-client', clientSecret: 'not-the-secret-42' },
        { actionType: 'Result', name: 'Exit' },
      ],
    });
    const failed = await runNow(wrong);
    assert.equal(failed.status, 'Failed');
    assert.match(failed.error, /401: AADSTS7000215/);
    noLeak(failed, 'not-the-secret-42');
  });
});

describe('XmlMap', () => {
  const UBL = `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:c="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <c:ID>INV-2026-0042</c:ID>
  <cac:AccountingSupplierParty><cac:Party><cac:PartyName><c:Name>Acme &amp; Sons</c:Name></cac:PartyName>
    <cac:PostalAddress><c:StreetName>Rua Augusta 10</c:StreetName></cac:PostalAddress></cac:Party></cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty><cac:Party><cac:PostalAddress><c:PostalZone>1100-053</c:PostalZone></cac:PostalAddress></cac:Party></cac:AccountingCustomerParty>
</Invoice>`;
  const xmlMap = (xmldata: string) => ({
    name: `XmlMap ${xmldata.length}`,
    actions: [
      { actionType: 'Start', name: 'Start', next: 'XmlMap' },
      {
        actionType: 'XmlMap',
        name: 'XmlMap',
        next: 'Exit',
        xmldata: "{{['#HttpRequest'].Body.xml}}",
        namespaces: {
          cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
          cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
          ubl: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
        },
        values: {
          Id: '/cbc:ID',
          AccountingSupplierName: '/cac:AccountingSupplierParty/cac:Party/cac:PartyName/cbc:Name',
          StreetName: '/cac:AccountingSupplierParty/cac:Party/cac:PostalAddress/cbc:StreetName',
          PostalCode: '/cac:AccountingCustomerParty/cac:Party/cac:PostalAddress/cbc:PostalZone',
          Name: '/sender/name',
        },
      },
      { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, body: "{{['XmlMap'].Content}}", headers: { 'x-invoice': "{{['XmlMap'].Id}}" } } },
    ],
  });

  test('the template over a UBL invoice: XPaths by namespace URI (the document may use other prefixes), JSON out', async () => {
    const run = await runNow(await save(xmlMap(UBL)), { xml: UBL });
    succeeded(run);
    assert.equal(run.result.headers['x-invoice'], 'INV-2026-0042', 'read at the root as well as under Content');
    assert.deepEqual(run.result.body, {
      Id: 'INV-2026-0042',
      AccountingSupplierName: 'Acme & Sons',
      StreetName: 'Rua Augusta 10',
      PostalCode: '1100-053',
      Name: null,
    });
  });

  test('XML bombs, external entities and deep nesting are refused with a clear run error', async () => {
    const id = await save(xmlMap('x'));
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]><lolz>&lol2;</lolz>`;
    const bomb = await runNow(id, { xml: lol });
    assert.equal(bomb.status, 'Failed');
    assert.match(bomb.error, /declares entities .*refused/);
    const external = await runNow(id, { xml: '<?xml version="1.0"?><!DOCTYPE a SYSTEM "file:///etc/passwd"><a>&x;</a>' });
    assert.equal(external.status, 'Failed');
    assert.match(external.error, /external DTD .*refused/);
    const deep = await runNow(id, { xml: `${'<a>'.repeat(5000)}x${'</a>'.repeat(5000)}` });
    assert.equal(deep.status, 'Failed');
    assert.match(deep.error, /nests elements more than 64 deep: refused/);
    const broken = await runNow(id, { xml: '<a><b></a>' });
    assert.equal(broken.status, 'Failed');
    assert.match(broken.error, /not well-formed XML/);
  });
});

/**
 * Stores the test's SFTP server as configuration key `name` and answers the connection fields an action reads
 * from it (a ConfigurationKeys action named Cfg), as the platform's recipes write them.
 */
async function sftpConnectionKey(name: string) {
  assert.ok(sftp, 'openssh-server is installed (.ci/run installs it)');
  await f.server.request('PUT', `/api/configuration-keys/${name}`, {
    headers: f.h,
    json: { ftpHostIp: sftp.address, ftpUsername: sftp.username, ftpPrivateKeyFile: sftp.privateKey },
  });
  return {
    ftpHostIp: "{{['Cfg'].ftpHostIp}}",
    ftpUsername: "{{['Cfg'].ftpUsername}}",
    ftpPassword: '',
    ftpPrivateKeyFile: "{{['Cfg'].ftpPrivateKeyFile}}",
  };
}

describe('SFTP actions as the sheet writes them, on a real OpenSSH server', () => {
  test('SftpListFiles (filePath), SftpDownload (ftpPath + fileName) → ReadFileData, SftpUpload of a Download (filePath), SftpMoveTo (ftpPath → ftpToPath)', async () => {
    assert.ok(sftp, 'openssh-server is installed (.ci/run installs it)');
    const inbox = path.join(sftp.root, 'Users');
    await mkdir(inbox, { recursive: true });
    await writeFile(path.join(inbox, 'Users.csv'), 'username,Name,email\nann.lee,Ann Lee,ann@example.com\nbo.chen,"Chen, Bo",bo@example.com\n');
    await writeFile(path.join(inbox, 'notes.txt'), 'not a user file');
    const connection = await sftpConnectionKey('SFTP-IO');
    const id = await save({
      name: 'SFTP round trip',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'Cfg' },
        { actionType: 'ConfigurationKeys', name: 'Cfg', next: 'SftpListFiles', value: 'SFTP-IO' },
        {
          actionType: 'SftpListFiles',
          name: 'SftpListFiles',
          next: 'SftpDownload',
          ...connection,
          filePath: inbox,
          fileNameContains: 'Users',
          fileNameEndsWith: '.csv',
        },
        { actionType: 'SftpDownload', name: 'SftpDownload', next: 'ReadFileData', ...connection, ftpPath: inbox, fileName: "{{['SftpListFiles'][0].name}}" },
        { actionType: 'ReadFileData', name: 'ReadFileData', next: 'DownloadFile', fileName: "{{['SftpDownload']}}" },
        { actionType: 'Download', name: 'DownloadFile', next: 'SftpUpload', url: `${stub}/files/timesheet.csv` },
        {
          actionType: 'SftpUpload',
          name: 'SftpUpload',
          next: 'MoveSftpFileSuccess',
          ...connection,
          ftpPath: path.join(sftp.root, 'out'),
          filePath: "{{['DownloadFile'].FilePath}}",
          fileName: 'NewFilename.csv',
        },
        {
          actionType: 'SftpMoveTo',
          name: 'MoveSftpFileSuccess',
          next: 'Exit',
          ...connection,
          ftpPath: inbox,
          ftpToPath: path.join(inbox, 'Success'),
          fileName: 'Users.csv',
        },
        {
          actionType: 'Result',
          name: 'Exit',
          httpResponse: { statusCode: 200, headers: {}, body: { listed: "{{['SftpListFiles'][*].name}}", rows: "{{['ReadFileData']}}" } },
        },
      ],
    });
    const run = await runNow(id);
    succeeded(run);
    assert.deepEqual(run.result.body.listed, ['Users.csv']);
    assert.deepEqual(run.result.body.rows, [
      { username: 'ann.lee', Name: 'Ann Lee', email: 'ann@example.com' },
      { username: 'bo.chen', Name: 'Chen, Bo', email: 'bo@example.com' },
    ]);
    assert.equal(output(run, 'SftpDownload'), 'tmp/SftpDownload/Users.csv');
    assert.equal(await readFile(path.join(sftp.root, 'out', 'NewFilename.csv'), 'utf8'), TIMESHEET);
    assert.deepEqual(await readdir(path.join(inbox, 'Success')), ['Users.csv']);
    assert.deepEqual((await readdir(inbox)).sort(), ['Success', 'notes.txt']);
    assert.ok(!JSON.stringify(run).includes('PRIVATE KEY'), 'the private key is masked');

    // ftpPrivateKeyFile naming a file of the run (the sheet: "private key file name").
    const byFile = await save({
      name: 'SFTP key file',
      actions: [
        { actionType: 'Start', name: 'Start', next: 'GetKey' },
        { actionType: 'Download', name: 'GetKey', next: 'SftpListFiles', url: `${stub}/files/id_ed25519` },
        {
          actionType: 'SftpListFiles',
          name: 'SftpListFiles',
          next: 'Exit',
          ftpHostIp: sftp.address,
          ftpUsername: sftp.username,
          ftpPrivateKeyFile: 'id_ed25519',
          ftpPath: inbox,
          fileNameContains: '',
          fileNameEndsWith: '.txt',
        },
        { actionType: 'Result', name: 'Exit', httpResponse: { statusCode: 200, body: "{{['SftpListFiles'][*].name}}" } },
      ],
    });
    const listed = await runNow(byFile);
    succeeded(listed);
    assert.deepEqual(listed.result.body, ['notes.txt']);
    assert.ok(!JSON.stringify(listed).includes('PRIVATE KEY'), 'a key downloaded as a file is masked in the log too');
  });

  test("the Loop import example: SftpDownload → ReadFileData → Loop over the rows (['#ImportFileData'] per row) → SftpMoveTo ['#ImportFile']", async () => {
    assert.ok(sftp, 'openssh-server is installed (.ci/run installs it)');
    const folder = path.join(sftp.root, 'Import', 'Users');
    await mkdir(folder, { recursive: true });
    const columns =
      'username,Name,externalId,CompanyCode,departmentid,email,hiredate,ssoUsername,expirationDate,weeklyRequiredHours,externalNumber,workphone,isActive';
    await writeFile(
      path.join(folder, 'Users.csv'),
      `${columns}\nann.lee,Ann Lee,U-1,C1,D1,ann@example.com,2026-01-05,ann,,40,N1,+351 1,true\nbo.chen,Bo Chen,U-2,C1,D2,bo@example.com,2026-02-01,bo,,38,N2,+351 2,true\n`,
    );
    const connection = await sftpConnectionKey('SFTP-IMPORT');
    const id = await save({
      name: 'ImportUsers',
      actions: [
        { actionType: 'Start', name: 'Starting', next: 'Cfg' },
        { actionType: 'ConfigurationKeys', name: 'Cfg', next: 'SftpDownload', value: 'SFTP-IMPORT' },
        { actionType: 'SftpDownload', name: 'SftpDownload', next: 'ReadFileData', ...connection, filePath: folder, fileName: 'Users.csv', fileType: 'Csv' },
        { actionType: 'ReadFileData', name: 'ReadFileData', next: 'LoopFileData', fileName: "{{['SftpDownload']}}" },
        { actionType: 'Loop', name: 'LoopFileData', next: 'MoveSftpFileSuccess', body: "{{['ReadFileData']}}", subWorkflow: 'ImportFileData' },
        {
          actionType: 'SftpMoveTo',
          name: 'MoveSftpFileSuccess',
          next: 'ExitSftpSucess',
          ...connection,
          filePath: folder,
          toFilePath: path.join(folder, 'Success'),
          fileName: "{{['#ImportFile']}}",
          fileType: 'Csv',
          hasHeaderRecord: false,
        },
        { actionType: 'Result', name: 'ExitSftpSucess', httpResponse: { statusCode: 200, headers: {}, body: 'File moved to Success folder.' } },
      ],
      subWorkflow: [
        {
          name: 'ImportFileData',
          actions: [
            { actionType: 'Start', name: 'Starting', next: 'ImportUser' },
            {
              actionType: 'Rest',
              name: 'ImportUser',
              // The published example says "CheckUserCreated", which names no action (fact sheet §10.3).
              next: 'ExitUserNotCreated',
              Method: 'Post',
              url: `${stub}/api/users`,
              body: '{"userName":"{{[\'#ImportFileData\'].username}}","name":"{{[\'#ImportFileData\'].Name}}","externalId":"{{[\'#ImportFileData\'].externalId}}","companyCode":"{{[\'#ImportFileData\'].CompanyCode}}","departmentExternalId":"{{[\'#ImportFileData\'].departmentid}}","mail":"{{[\'#ImportFileData\'].email}}","isActive":true,"hireDate":"{{[\'#ImportFileData\'].hiredate}}","ssoUserName":"{{[\'#ImportFileData\'].ssoUsername}}","ssoUserNameUpdatable":true,"expirationDate":"{{[\'#ImportFileData\'].expirationDate}}","requiredWeeklyHours":"{{[\'#ImportFileData\'].weeklyRequiredHours}}","externalNumberUpdatable":true,"externalNumber":"{{[\'#ImportFileData\'].externalNumber}}","phone":"{{[\'#ImportFileData\'].workphone}}","isActive":"{{[\'#ImportFileData\'].isActive}}"}',
              bodyMediaType: 'Json',
            },
            {
              actionType: 'Result',
              name: 'ExitUserNotCreated',
              httpResponse: { statusCode: 200, headers: {}, body: "User {{['ImportUser'].Content.userName}} imported.." },
            },
          ],
        },
      ],
    });
    const before = hits.length;
    const res = await execute(id, { fileName: 'Users.csv' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'File moved to Success folder.');
    const posted = hits
      .slice(before)
      .filter((h) => h.url === '/api/users')
      .map((h) => JSON.parse(h.body.toString()));
    assert.deepEqual(
      posted.map((u) => [u.userName, u.name, u.mail, u.departmentExternalId, u.phone]),
      [
        ['ann.lee', 'Ann Lee', 'ann@example.com', 'D1', '+351 1'],
        ['bo.chen', 'Bo Chen', 'bo@example.com', 'D2', '+351 2'],
      ],
    );
    assert.deepEqual(await readdir(path.join(folder, 'Success')), ['Users.csv']);
  });
});
