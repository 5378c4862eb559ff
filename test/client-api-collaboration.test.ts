// Posts, briefs, teams, custom fields and file links through HTTP with the published bodies; each write
// in its DE-* query and its webhook event at a real receiver; Idempotency-Key replays.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

const PROJECT = 'Skill.Module.BusinessObjects.Project';
let f: ClientApiFixture;
let receiver: Receiver;
let project: any;

before(async () => {
  f = await clientApiFixture('Collaboration Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  for (const ActionType of ['Created', 'Updated', 'UserFieldValueUpdated', 'TeamAdded', 'TeamRemoved']) {
    await createSubscription(f.server, f.h, { Url: `${receiver.url}/${ActionType}`, ActionType, DocumentType: PROJECT });
  }
  await createSubscription(f.server, f.h, {
    Url: `${receiver.url}/File`,
    ActionType: 'Created',
    DocumentType: 'Skill.Module.BusinessObjects.FileSystemObject',
  });
  await createSubscription(f.server, f.h, { Url: `${receiver.url}/Brief`, ActionType: 'Created', DocumentType: 'Skill.Module.BusinessObjects.DocumentBrief' });
  project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Collab', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
});
after(async () => {
  await receiver.close();
  await f.close();
});

/** The deliveries to one subscription path that satisfy `match`, once at least `count` arrived. */
async function delivered(path: string, count: number, match: (p: any) => boolean = () => true): Promise<any[]> {
  const until = Date.now() + 20_000;
  for (;;) {
    const got = receiver.received.filter((r) => r.path === `/hook/${path}` && match(r.payload)).map((r) => r.payload);
    if (got.length >= count) return got;
    if (Date.now() > until) throw new Error(`${path}: ${got.length} of ${count} deliveries`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('Created and Updated carry the changed properties with their types', async () => {
  const [created] = await delivered('Created', 1, (p) => p.document.id === project.Id);
  assert.equal(created.detail.Name, 'Collab');
  assert.equal(created.detail.PropertyTypes.Name, 'String');
  assert.equal(created.detail.ClientId, f.clientId);
  assert.equal(created.detail.PropertyTypes.ClientId, 'Guid');
  await f.send('PATCH', `/api/projects/${project.Id}`, { EndDateUtc: { value: '2026-09-30' }, Name: { value: 'Collab' } });
  const [updated] = await delivered('Updated', 1, (p) => p.document.id === project.Id);
  assert.deepEqual(updated.detail, { EndDateUtc: '2026-09-30', PropertyTypes: { EndDateUtc: 'DateTime' } });
});

test('a comment post with IsVisibleToClient and Notifications; GET /api/posts; DE-Comments; Idempotency-Key replays it', async () => {
  const body = {
    DocumentId: project.Id,
    DocumentTypeName: 'Project',
    Text: 'Client approved the moodboard',
    IsVisibleToClient: true,
    Actions: { Notifications: [{ UserId: f.tenant.userId }] },
  };
  const headers = { ...f.h, 'idempotency-key': 'post-1' };
  const first = await f.server.request('POST', '/api/posts', { headers, json: body });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.IsVisibleToClient, true);
  assert.deepEqual(first.body.Actions.Notifications, [{ UserId: f.tenant.userId, UserName: 'Administrator' }]);
  const replay = await f.server.request('POST', '/api/posts', { headers, json: body });
  assert.equal(replay.status, 201);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body.Id, first.body.Id);
  const list = await f.send('GET', `/api/posts?documentId=${project.Id}`);
  assert.deepEqual(
    list.map((p: any) => p.Id),
    [first.body.Id],
  );
  const [c] = await f.rowsOf('DE-Comments', ['CommentsId', '=', first.body.Id]);
  assert.equal(c.Text, body.Text);
  assert.equal(c.IsVisibleToClient, true);
  assert.equal(c.DocumentType, 'Skill.Module.BusinessObjects.Project', 'the full type name, as the platform stores it');
  const unknownUser = await f.server.request('POST', '/api/posts', {
    headers: f.h,
    json: { ...body, Actions: { Notifications: [{ UserId: crypto.randomUUID() }] } },
  });
  assert.equal(unknownUser.status, 422);
  assert.equal(unknownUser.body.errors[0].path, '/body/Actions/Notifications/0/UserId');
});

test('files: a post links a file (Actions.Files); POST …/folders/{folderId}/links adds one; both in the document’s folder', async () => {
  const res = await f.send('POST', '/api/posts', {
    DocumentId: project.Id,
    DocumentTypeName: 'Project',
    Text: 'Storyboard attached',
    Actions: { Files: [{ Id: null, Name: 'Storyboard v2', Link: 'https://files.example.com/sb/v2.pdf', IsTemp: false, IsFlagged: true, ExternalId: 'SB-2' }] },
  });
  const [file] = res.Actions.Files;
  assert.equal(file.Name, 'Storyboard v2');
  assert.equal(file.IsFlagged, true);
  const folderId = (await f.send('GET', `/api/v3/projects/${project.Id}`)).FileSystemRootId;
  const link = await f.send('POST', `/api/v3/file-system/folders/${folderId}/links`, {
    FolderId: folderId,
    Name: 'Brand book',
    IsFlagged: false,
    IsProtected: true,
    ExternalId: 'BB-1',
    Description: 'The client’s brand book',
    SourceUri: 'https://cdn.example.com/brand-book.pdf',
  });
  assert.equal(link.DocumentId, project.Id);
  assert.equal(link.IsProtected, true);
  const rows = await f.sql('select name, link_url from files where folder_id = $1 order by name', [folderId]);
  assert.deepEqual(
    rows.map((r) => r.name),
    ['Brand book', 'Storyboard v2'],
  );
  const events = await delivered('File', 2);
  assert.deepEqual(events.map((e) => e.detail.Link).sort(), ['https://cdn.example.com/brand-book.pdf', 'https://files.example.com/sb/v2.pdf']);
  const bad = await f.server.request('POST', `/api/v3/file-system/folders/${folderId}/links`, { headers: f.h, json: { SourceUri: 'ftp://x/y' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.errors[0].path, '/body/SourceUri');
});

test('briefs: the published body adds a version each time; GET lists them; DE-Descriptions', async () => {
  const body = {
    DocumentId: project.Id,
    DocumentTypeName: 'Project',
    Text: '<p>Launch <b>summer</b> range</p>',
    PlainText: 'Launch summer range',
    Actions: { Files: [] },
  };
  const v1 = await f.send('POST', '/api/documentBriefs', body);
  assert.equal(v1.Version, 1);
  assert.deepEqual(Object.keys(v1).sort(), ['Actions', 'CreatedById', 'CreatedByName', 'DocumentId', 'EditedOn', 'Id', 'PlainText', 'Text', 'Version']);
  const v2 = await f.send('POST', '/api/documentBriefs', { DocumentId: project.Id, DocumentTypeName: 'Project', Text: '<p>Launch &amp; promote</p>' });
  assert.equal(v2.Version, 2);
  assert.equal(v2.PlainText, 'Launch & promote');
  const list = await f.send('GET', `/api/documentBriefs?documentId=${project.Id}`);
  assert.deepEqual(
    list.map((b: any) => b.Version),
    [2, 1],
  );
  const rows = await f.rowsOf('DE-Descriptions', ['DocumentId', '=', project.Id]);
  assert.deepEqual(rows.map((r) => [r.Version, r.IsLastVersion]).sort(), [
    [1, false],
    [2, true],
  ]);
  await delivered('Brief', 2);
});

test('teams: the published batch body adds by team name and removes by team id; again is no error; TeamAdded/TeamRemoved; DE-Assignments', async () => {
  const [team] = await f.sql(`insert into teams (tenant_id, name) values ($1, 'Account Manager') returning id`, [f.tenant.tenantId]);
  const member = await f.userWith([]);
  const add = {
    AssignmentPostModels: [{ User: member.id, DocumentType: PROJECT, DocumentOid: project.Id, AssignmentType: 'Account Manager', Workload: 0, Priority: 0 }],
    AssignmentDeleteModels: [],
  };
  const first = await f.send('POST', '/api/assignments/batch', add);
  assert.equal(first.AssignmentPostModels[0].Added, true);
  const again = await f.send('POST', '/api/assignments/batch', add);
  assert.equal(again.AssignmentPostModels[0].Added, false);
  const rows = await f.rowsOf('DE-Assignments', ['DocumentId', '=', project.Id]);
  assert.ok(rows.some((r) => r.UserId === member.id && r.Team === 'Account Manager'));
  const [added] = await delivered('TeamAdded', 1, (p) => p.detail.UserId === member.id);
  assert.equal(added.detail.Team, 'Account Manager');

  const removed = await f.send('POST', '/api/assignments/batch', {
    AssignmentPostModels: [],
    AssignmentDeleteModels: [{ User: member.id, DocumentId: project.Id, AssignmentTypeId: team.id }],
  });
  assert.equal(removed.AssignmentDeleteModels[0].Removed, true);
  assert.equal((await f.rowsOf('DE-Assignments', ['DocumentId', '=', project.Id])).filter((r) => r.UserId === member.id).length, 0);
  await delivered('TeamRemoved', 1, (p) => p.detail.UserId === member.id);

  // One transaction: an unknown team in the second item leaves the first undone.
  const other = await f.userWith([]);
  const bad = await f.server.request('POST', '/api/assignments/batch', {
    headers: f.h,
    json: {
      AssignmentPostModels: [
        { User: other.id, DocumentType: PROJECT, DocumentOid: project.Id, AssignmentType: 'Account Manager' },
        { User: other.id, DocumentType: PROJECT, DocumentOid: project.Id, AssignmentType: 'Astronaut' },
      ],
    },
  });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.errors[0].path, '/body/AssignmentPostModels/1/AssignmentType');
  assert.equal((await f.rowsOf('DE-Assignments', ['DocumentId', '=', project.Id])).filter((r) => r.UserId === other.id).length, 0);
});

test('custom fields: PUT /api/v3/documentUserFieldValues checks each type; UserFieldValueUpdated with ColumnName and Value; DE-ProjectsAdditionalInformation', async () => {
  const [dt] = await f.sql(`select id from document_types where tenant_id = $1 and class_name = 'Project'`, [f.tenant.tenantId]);
  const types: [string, string, number][] = [
    ['Budget', 'Number', 4],
    ['Code50', 'Text', 5],
    ['Headcount', 'Number', 3],
    ['Kickoff', 'Date', 1],
    ['Owner', 'Guid', 9],
  ];
  for (const [name, storage, type] of types) {
    await f.sql(`insert into user_fields (tenant_id, document_type_id, column_name, label, data_type, data_type_id) values ($1, $2, $3, $3, $4, $5)`, [
      f.tenant.tenantId,
      dt.id,
      name,
      storage,
      type,
    ]);
  }
  const put = (values: { ColumnName: string; Value: unknown; ColumnDataTypeId?: number }[]) =>
    f.server.request('PUT', '/api/v3/documentUserFieldValues', {
      headers: f.h,
      json: { DocumentTypeName: 'Project', DocumentId: project.Id, DocumentUserFieldValues: values },
    });
  const ok = await put([
    { ColumnName: 'Budget', Value: 1250.75, ColumnDataTypeId: 4 },
    { ColumnName: 'Code50', Value: 'ACME-SPRING' },
    { ColumnName: 'Headcount', Value: 4 },
    { ColumnName: 'Kickoff', Value: '2026-03-02' },
    { ColumnName: 'Owner', Value: f.tenant.userId.toUpperCase() },
  ]);
  assert.equal(ok.status, 200, ok.text);
  const [info] = await f.rowsOf('DE-ProjectsAdditionalInformation', ['ProjectId', '=', project.Id]);
  assert.equal(info.Budget, 1250.75);
  assert.equal(info.Code50, 'ACME-SPRING');
  assert.equal(info.Owner, f.tenant.userId);
  const events = await delivered('UserFieldValueUpdated', 5);
  assert.deepEqual(
    events.map((e) => [e.detail.ColumnName, e.detail.Value]).sort(),
    [
      ['Budget', 1250.75],
      ['Code50', 'ACME-SPRING'],
      ['Headcount', 4],
      ['Kickoff', '2026-03-02'],
      ['Owner', f.tenant.userId],
    ].sort(),
  );
  const refusals: [unknown, string][] = [
    [{ ColumnName: 'Budget', Value: 1.23456 }, 'Money'],
    [{ ColumnName: 'Code50', Value: 'x'.repeat(51) }, 'Varchar50'],
    [{ ColumnName: 'Headcount', Value: 2.5 }, 'Integer'],
    [{ ColumnName: 'Kickoff', Value: 'next week' }, 'Date'],
    [{ ColumnName: 'Owner', Value: 'me' }, 'UniqueIdentifier'],
  ];
  for (const [value, type] of refusals) {
    const res = await put([{ ColumnName: 'Headcount', Value: 5 }, value as any]);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.errors[0].path, '/body/DocumentUserFieldValues/1/Value');
    assert.match(res.body.errors[0].message, new RegExp(type));
  }
  // Nothing of a refused request stays.
  assert.equal((await f.rowsOf('DE-ProjectsAdditionalInformation', ['ProjectId', '=', project.Id]))[0].Headcount, 4);
});
