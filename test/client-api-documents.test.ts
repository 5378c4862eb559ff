// Client API documents through HTTP: the published example bodies sent unchanged (placeholders given
// values), the v3 create envelopes, value-wrapped PATCH, reads, and every write visible at once in its
// DE-* query and in DE-History.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture, defaultWorkflow } from './client-api-helpers.ts';

let f: ClientApiFixture;
before(async () => {
  f = await clientApiFixture('Documents Agency');
});
after(() => f.close());

const EMPTY = '00000000-0000-0000-0000-000000000000';

test('the published "create a project" post creates the project, moves it and answers the post', async () => {
  const wf = await defaultWorkflow(f, 'Project');
  // client-api.md, POST /api/posts, "Example (create a project)", with its placeholders given values.
  const body = {
    DocumentId: EMPTY,
    DocumentTypeName: 'Project',
    Text: 'Kick-off of the spring campaign',
    Actions: {
      Transition: { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start },
      Document: {
        DocumentType: 'Project',
        Project: {
          ClassificationId: null,
          ClientId: f.clientId,
          CompanyId: f.tenant.companyId,
          ContractId: null,
          CurrencyId: f.currencyId,
          BeginDateUtc: '2026-03-01T00:00:00Z',
          EndDateUtc: '2026-06-30T00:00:00Z',
          Investment: 0.0,
          IsDraft: false,
          ProductId: null,
          ProjectNatureId: null,
          ProjectOwnerId: f.tenant.userId,
          ProjectManagerId: f.tenant.userId,
          ProjectType: 0,
          AllowsTimesheet: true,
          IsDeliverable: false,
          IsActivated: true,
          BusinessObjectTypeId: null,
        },
        DocumentBrief: { DocumentTypeName: 'Project', Text: '' },
      },
    },
  };
  const res = await f.server.request('POST', '/api/posts', { headers: f.h, json: body });
  assert.equal(res.status, 201, res.text);
  const post = res.body;
  assert.deepEqual(Object.keys(post).slice(0, 9), [
    'Id',
    'CreatedById',
    'CreatedByName',
    'CreatedOnUtc',
    'ModifiedOnUtc',
    'Text',
    'IsVisibleToClient',
    'DocumentId',
    'DocumentTypeName',
  ]);
  assert.notEqual(post.DocumentId, EMPTY);
  assert.equal(post.Text, body.Text);
  assert.deepEqual(post.Actions.Transition, { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start });
  assert.equal(post.Actions.Document.Id, post.DocumentId);

  const project = await f.send('GET', `/api/v3/projects/${post.DocumentId}`);
  assert.equal(project.Stage, 'In Progress');
  assert.equal(project.StageType, 'In Progress');
  assert.equal(project.ClientId, f.clientId);
  assert.equal(project.BeginDateUtc, '2026-03-01');
  assert.equal(project.ProjectOwnerId, f.tenant.userId);
  assert.equal(project.ProjectManagerId, f.tenant.userId);
  assert.match(project.Number, /^PRJ-\d{6}$/);
  assert.equal(project.Name, project.Number);

  const [row] = await f.rowsOf('DE-Projects', ['ProjectId', '=', post.DocumentId]);
  assert.equal(row?.Stage, 'In Progress');
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', post.DocumentId]);
  assert.deepEqual(history.map((r) => [r.Version, r.Action, r.Stage, r.EndDate === null]).sort(), [
    [1, 'Created', 'Draft', false],
    [2, 'StageChanged', 'In Progress', true],
  ]);
  const comments = await f.rowsOf('DE-Comments', ['DocumentId', '=', post.DocumentId]);
  assert.equal(comments[0]?.Text, body.Text);
  const team = await f.rowsOf('DE-Assignments', ['DocumentId', '=', post.DocumentId]);
  assert.deepEqual(team.map((t) => t.Team).sort(), ['Project Manager', 'Project Owner']);
});

test('jobs: v3 Create and CreateMany envelopes, PATCH with value-wrapped fields, GET; DE-Jobs and DE-History at once', async () => {
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Retainer 2026', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  assert.equal(project.Stage, 'Draft');
  const one = await f.send('POST', '/api/v3/jobs', {
    OperationType: 'Create',
    CreateModel: { Name: 'Key visual', ProjectId: project.Id, DepartmentId: f.tenant.departmentId, AgreedDate: '2026-04-30', Priority: 2 },
  });
  assert.equal(one.Name, 'Key visual');
  assert.equal(one.AgreedDateUtc, '2026-04-30');
  assert.equal(one.Stage, 'Draft');
  assert.ok(one.FileSystemRootId);

  const many = await f.send('POST', '/api/v3/jobs', {
    Type: 2,
    CreateManyModel: [
      { name: 'Banner set', projectId: project.Id, departmentId: f.tenant.departmentId },
      { Name: 'Radio spot', ProjectId: project.Id, DepartmentId: f.tenant.departmentId, Number: 'RADIO-1' },
    ],
  });
  assert.deepEqual(
    many.map((j: any) => j.Name),
    ['Banner set', 'Radio spot'],
  );
  assert.equal(many[1].Number, 'RADIO-1');

  // All or nothing: the second item fails and names its path; the first is not created.
  const bad = await f.server.request('POST', '/api/v3/jobs', {
    headers: f.h,
    json: {
      Type: 'CreateMany',
      CreateManyModel: [
        { Name: 'Lost', ProjectId: project.Id, DepartmentId: f.tenant.departmentId },
        { Name: 'No project', DepartmentId: f.tenant.departmentId },
      ],
    },
  });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.errors[0].path, '/body/CreateManyModel/1/ProjectId');
  assert.equal((await f.rowsOf('DE-Jobs', ['Job', '=', 'Lost'])).length, 0);

  // The published patchable job fields, value-wrapped ("Value" accepted too).
  const patched = await f.send('PATCH', `/api/jobs/${one.Id}`, {
    Subject: { value: 'Hero image and variants' },
    AgreedDateUtc: { Value: '2026-05-15T00:00:00Z' },
    RequestedDate: { value: '2026-04-01' },
    EntryDateUtc: { value: '2026-03-02' },
    Number: { value: 'KV-2026' },
    ToIntegrate: { value: true },
  });
  assert.equal(patched.Subject, 'Hero image and variants');
  assert.equal(patched.AgreedDateUtc, '2026-05-15');
  assert.equal(patched.RequestedDateUtc, '2026-04-01');
  assert.equal(patched.Number, 'KV-2026');
  assert.equal(patched.ToIntegrate, true);
  const [job] = await f.rowsOf('DE-Jobs', ['JobId', '=', one.Id]);
  assert.equal(job.JobNumber, 'KV-2026');
  assert.match(String(job.EndDate), /^2026-05-15/);
  assert.equal(job.Project, 'Retainer 2026');
  assert.equal(job.Stage, 'Draft');
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', one.Id]);
  assert.equal(history.length, 1);
  assert.equal(history[0].Action, 'Created');
  assert.equal(history[0].DocumentType, 'Skill.Module.BusinessObjects.Deliverable', 'the full type name, as the platform stores it');

  const read = await f.send('GET', `/api/v3/jobs/${one.Id}`);
  assert.deepEqual(read, patched);
});

test('projects: PATCH fields and the DocumentUserFieldValues variant; DE-Projects and DE-ProjectsAdditionalInformation', async () => {
  const [dt] = await f.sql(`select id from document_types where tenant_id = $1 and class_name = 'Project'`, [f.tenant.tenantId]);
  await f.sql(
    `insert into user_fields (tenant_id, document_type_id, column_name, label, data_type, data_type_id) values
       ($1, $2, 'Forecasting', 'Forecasting', 'Boolean', 0), ($1, $2, 'Pipeline_Stage', 'Pipeline stage', 'Text', 6)`,
    [f.tenant.tenantId, dt.id],
  );
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Pipeline', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  const patched = await f.send('PATCH', `/api/projects/${project.Id}`, { Name: { value: 'Pipeline renamed' }, Investment: { value: 100 } });
  assert.equal(patched.Name, 'Pipeline renamed');
  assert.equal(patched.Investment, 100);
  // client-api.md: the custom-field variant, verbatim.
  const custom = await f.send('PATCH', `/api/projects/${project.Id}`, {
    DocumentUserFieldValues: { value: { Forecasting: true, Pipeline_Stage: '100% - Delivered' } },
  });
  assert.deepEqual(custom.DocumentUserFieldValues, { Forecasting: true, Pipeline_Stage: '100% - Delivered' });
  const [p] = await f.rowsOf('DE-Projects', ['ProjectId', '=', project.Id]);
  assert.equal(p.Project, 'Pipeline renamed');
  const [info] = await f.rowsOf('DE-ProjectsAdditionalInformation', ['ProjectId', '=', project.Id]);
  assert.equal(info.Forecasting, true);
  assert.equal(info.Pipeline_Stage, '100% - Delivered');

  const wrongType = await f.server.request('PATCH', `/api/projects/${project.Id}`, {
    headers: f.h,
    json: { DocumentUserFieldValues: { value: { Forecasting: 'maybe' } } },
  });
  assert.equal(wrongType.status, 400, wrongType.text);
  assert.equal(wrongType.body.errors[0].path, '/body/DocumentUserFieldValues/Forecasting');
  const unknownColumn = await f.server.request('PATCH', `/api/projects/${project.Id}`, {
    headers: f.h,
    json: { DocumentUserFieldValues: { value: { Nope: 1 } } },
  });
  assert.equal(unknownColumn.status, 422, unknownColumn.text);
  assert.equal(unknownColumn.body.errors[0].path, '/body/DocumentUserFieldValues/Nope');
});

test('contracts: created by a post, PATCH, GET; the new-project template from a contract creates a project under it', async () => {
  const post = await f.send('POST', '/api/posts', {
    DocumentId: EMPTY,
    DocumentTypeName: 'Contract',
    Text: 'Framework agreement signed',
    Actions: {
      Document: {
        DocumentType: 'Contract',
        DocumentActionType: 'Post',
        Contract: { Name: 'Framework 2026', CompanyId: f.tenant.companyId, ClientId: f.clientId, BeginDateUtc: '2026-01-01', EndDateUtc: '2026-12-31' },
      },
    },
  });
  const contractId = post.DocumentId;
  const patched = await f.send('PATCH', `/api/contracts/${contractId}`, { Name: { value: 'Framework 2026/27' }, EndDateUtc: { value: '2027-06-30' } });
  assert.equal(patched.Name, 'Framework 2026/27');
  assert.equal((await f.send('GET', `/api/v3/contracts/${contractId}`)).EndDateUtc, '2027-06-30');
  const [c] = await f.rowsOf('DE-Contracts', ['ContractId', '=', contractId]);
  assert.equal(c?.Contract, 'Framework 2026/27');

  const template = await f.send('GET', `/api/contracts/${contractId}/projects/new`);
  assert.equal(template.ContractId, contractId);
  assert.equal(template.ClientId, f.clientId);
  assert.equal(template.CompanyId, f.tenant.companyId);
  assert.equal(template.CurrencyId, f.currencyId);
  assert.equal(template.BeginDateUtc, '2026-01-01');
  assert.equal(template.EndDateUtc, '2027-06-30');
  // The template goes back unchanged as the CreateModel (properties it carries that a project does not store are ignored and reported).
  const res = await f.server.request('POST', '/api/v3/projects', { headers: f.h, json: { OperationType: 'Create', CreateModel: template } });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.ContractId, contractId);
  assert.equal(res.body.ProjectType, 1);
  assert.match(res.headers.get('x-ignored-properties') ?? '', /CreateModel\.Plannable/);
});

test('requests: POST /api/v3/requests and GET; DE-Requests', async () => {
  const created = await f.send('POST', '/api/v3/requests', {
    OperationType: 0,
    CreateModel: {
      Name: 'Brief: summer promo',
      DepartmentId: f.tenant.departmentId,
      ClientId: f.clientId,
      BeginDateUtc: '2026-06-01T09:00:00Z',
      Priority: 3,
      Markets: [],
    },
  });
  assert.equal(created.BeginDateUtc, '2026-06-01T09:00:00.000Z');
  assert.equal((await f.send('GET', `/api/v3/requests/${created.Id}`)).Priority, 3);
  const [r] = await f.rowsOf('DE-Requests', ['RequestId', '=', created.Id]);
  assert.equal(r.Request, 'Brief: summer promo');
  assert.equal(r.Priority, 3);
  assert.equal(r.Client, 'Acme');
});

test('bad input is a problem naming the field', async () => {
  const cases: [string, string, unknown, number, string][] = [
    ['POST', '/api/v3/jobs', { OperationType: 0, CreateModel: { Name: 'x', ProjectId: 'not-a-guid' } }, 400, '/body/CreateModel/ProjectId'],
    ['POST', '/api/v3/jobs', { OperationType: 7, CreateModel: {} }, 400, '/body/OperationType'],
    ['POST', '/api/v3/jobs', { OperationType: 1, DuplicateModel: {} }, 400, '/body/OperationType'],
    [
      'POST',
      '/api/v3/projects',
      { OperationType: 0, CreateModel: { CompanyId: f.tenant.companyId, ClientId: crypto.randomUUID() } },
      422,
      '/body/CreateModel/ClientId',
    ],
    ['POST', '/api/v3/projects', { OperationType: 0, CreateModel: { ClientId: f.clientId } }, 400, '/body/CreateModel/CompanyId'],
    ['POST', '/api/posts', { DocumentTypeName: 'Spaceship', Text: 'x' }, 422, '/body/DocumentTypeName'],
    ['POST', '/api/posts', { DocumentTypeName: 'Job', Text: 'x' }, 400, '/body/DocumentId'],
    [
      'POST',
      '/api/v3/requests',
      { OperationType: 0, CreateModel: { Name: 'r', DepartmentId: f.tenant.departmentId, BeginDateUtc: 'soon' } },
      400,
      '/body/CreateModel/BeginDateUtc',
    ],
  ];
  for (const [method, path, json, status, field] of cases) {
    const res = await f.server.request(method, path, { headers: f.h, json });
    assert.equal(res.status, status, `${path} ${JSON.stringify(json)}: ${res.text}`);
    assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
    assert.ok(
      res.body.errors?.some((e: any) => e.path === field),
      `${path}: expected ${field} in ${res.text}`,
    );
  }
  const missing = await f.server.request('GET', `/api/v3/jobs/${crypto.randomUUID()}`, { headers: f.h });
  assert.equal(missing.status, 404);
});

test('roles decide: without JobWrite a job cannot be created (403 naming it); with it, it can', async () => {
  const reader = await f.userWith(['JobRead']);
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Roles', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  const model = { OperationType: 0, CreateModel: { Name: 'Try', ProjectId: project.Id, DepartmentId: f.tenant.departmentId } };
  const refused = await f.server.request('POST', '/api/v3/jobs', { headers: reader.headers, json: model });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.requiredRole, 'JobWrite');
  const none = await f.userWith([]);
  const read = await f.server.request('GET', `/api/v3/projects/${project.Id}`, { headers: none.headers });
  assert.equal(read.status, 403);
  assert.deepEqual(read.body.requiredRoles, ['ProjectRead', 'ProjectWrite']);
  const writer = await f.userWith(['JobWrite']);
  const job = await f.send('POST', '/api/v3/jobs', model, writer.headers);
  assert.equal(job.CreatedById, writer.id);
});
