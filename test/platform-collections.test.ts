// The platform's own Postman collections (SkillsWorkflow/Documentation, static/templates: Data Extraction,
// Integration API, Client API) run unchanged: each request that failed in Atrium (issue 31) is sent here
// through HTTP with the collection's own body — its placeholders filled with this tenant's ids, its ids,
// quirks and shapes kept (empty strings, the zero GUID, an empty path segment) — and answers 2xx with its
// effect visible in the matching DE-* query.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { type ClientApiFixture, clientApiFixture, defaultWorkflow } from './client-api-helpers.ts';

let f: ClientApiFixture;
before(async () => {
  f = await clientApiFixture('Collections Agency');
});
after(() => f.close());

const ZERO = '00000000-0000-0000-0000-000000000000';
const basic = () => ({ authorization: `Basic ${Buffer.from(`${f.tenant.tenantId}:${f.tenant.appId}:${f.tenant.appSecret}`).toString('base64')}` });

test('Data Extraction "Departments" and "Descriptions" address named-query//DE-…: repeated slashes are one, at the root, under /t/{slug} and on /odata', async () => {
  for (const name of ['DE-Departments', 'DE-Descriptions']) {
    const res = await f.server.request('POST', `/api/v3/analytics/named-query//${name}/dynamic-execute`, { headers: f.h, json: {} });
    assert.equal(res.status, 200, `${name}: ${res.text}`);
    assert.ok(Array.isArray(res.body.data));
  }
  // The collection's 13 such requests, and every other query of the catalogue, with the empty segment.
  for (const { name } of CATALOGUE) {
    const res = await f.server.request('POST', `/api/v3/analytics/named-query//${name}/dynamic-execute`, { headers: f.h, json: { queryBuilder: { take: 1 } } });
    assert.equal(res.status, 200, `${name}: ${res.text}`);
  }
  const departments = await f.server.request('POST', '/api/v3/analytics/named-query//DE-Departments/dynamic-execute', { headers: f.h, json: {} });
  assert.ok(departments.body.data.some((d: { DepartmentId: string }) => d.DepartmentId === f.tenant.departmentId));
  const slugged = await f.server.request('POST', `//t//${f.tenant.slug}//api//v3/analytics/named-query//DE-Departments/dynamic-execute`, {
    headers: f.h,
    json: {},
  });
  assert.equal(slugged.status, 200, slugged.text);
  assert.deepEqual(slugged.body.data, departments.body.data);
  const odata = await f.server.request('GET', '/odata//v4//DE_Departments?$top=5', { headers: basic() });
  assert.equal(odata.status, 200, odata.text);
  assert.ok(odata.body.value.some((d: { DepartmentId: string }) => d.DepartmentId === f.tenant.departmentId));
  // A path that is still unknown with its slashes collapsed stays a 404.
  assert.equal((await f.server.request('POST', '/api/v3/analytics//named-query-nope/DE-Departments', { headers: f.h, json: {} })).status, 404);
});

test('Client API "Post Project": Investment 0.0 and the zero GUID for ProjectNatureId, ProjectOwnerId and ProjectManagerId', async () => {
  const wf = await defaultWorkflow(f, 'Project');
  const body = {
    DocumentId: ZERO,
    DocumentTypeName: 'Project',
    Text: "Comment to be added initially to the newly created project's feed.",
    Actions: {
      Transition: { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start },
      Document: {
        DocumentType: 'Project',
        Project: {
          ClientId: f.clientId,
          CompanyId: f.tenant.companyId,
          CurrencyId: f.currencyId,
          BeginDateUtc: '2024-05-31T23:22:07.3520703Z',
          EndDateUtc: '2024-12-01T00:22:07.3520703Z',
          Investment: 0.0,
          IsDraft: true,
          ProjectNatureId: ZERO,
          ProjectOwnerId: ZERO,
          ProjectManagerId: ZERO,
          ProjectType: 0,
          AllowsTimesheet: true,
          IsDeliverable: true,
          IsActivated: false,
        },
        DocumentBrief: { DocumentTypeName: 'Project', Text: '' },
      },
    },
  };
  const res = await f.server.request('POST', '/api/posts', { headers: f.h, json: body });
  assert.equal(res.status, 201, res.text);
  const [row] = await f.rowsOf('DE-Projects', [['ProjectId', '=', res.body.DocumentId]]);
  assert.equal(row.Investment, 0);
  assert.equal(row.NatureId, null);
  assert.equal(row.Stage, 'In Progress');
  const project = await f.send('GET', `/api/v3/projects/${res.body.DocumentId}`);
  assert.equal(project.ProjectOwnerId, null, 'the zero GUID is no owner, not a 422');
});

test('Client API project create with "Investment": 100 (the "Project from Contract" model): money in DE-Projects, the OData type Edm.Decimal', async () => {
  const created = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Packaging Adap I', CompanyId: f.tenant.companyId, ClientId: f.clientId, Investment: 100, IsDraft: true, Plannable: false },
  });
  assert.equal(created.Investment, 100);
  const [row] = await f.rowsOf('DE-Projects', [['ProjectId', '=', created.Id]]);
  assert.equal(row.Investment, 100);
  const patched = await f.send('PATCH', `/api/projects/${created.Id}`, { Investment: { value: 1234.56 } });
  assert.equal(patched.Investment, 1234.56);
  assert.equal((await f.rowsOf('DE-Projects', [['Investment', '>', 1000]])).length, 1);
  const metadata = await f.server.request('GET', '/odata/v4/$metadata', { headers: basic() });
  assert.match(metadata.text, /<Property Name="Investment" Type="Edm\.Decimal"/);
  const wrong = await f.server.request('PATCH', `/api/projects/${created.Id}`, { headers: f.h, json: { Investment: { value: true } } });
  assert.equal(wrong.status, 400, 'a flag is no amount');
  assert.ok(
    wrong.body.errors.some((e: { path: string }) => e.path.startsWith('/body/Investment')),
    wrong.text,
  );
});

test('Client API "Create User" (Type 2, CreateManyModel): ResponsibleId and UserTypeId sent as the zero GUID, ExternalId and the rest as ""', async () => {
  const item = (n: number) => ({
    UserName: `UserName_${n}`,
    Name: `Name_${n}`,
    ExternalId: '',
    CompanyId: f.tenant.companyId,
    DivisionId: f.tenant.divisionId,
    DepartmentId: f.tenant.departmentId,
    TypologyId: f.tenant.typologyId,
    Mail: 'mail',
    IsActive: true,
    SsoUserName: '',
    RequiredHours: 8,
    ResponsibleId: ZERO,
    UserTypeId: ZERO,
    TimesheetRequired: false,
    AdUserName: '',
    TaxpayerNumber: '',
  });
  const users = await f.send('POST', '/api/v3/users', { Type: 2, CreateModel: item(0), CreateManyModel: [item(1), item(2)] });
  assert.equal(users.length, 2);
  for (const u of users) {
    const [row] = await f.rowsOf('DE-Users', [['UserId', '=', u.Id]]);
    assert.equal(row.DepartmentId, f.tenant.departmentId);
    assert.equal(row.TypeId, null, 'the zero GUID is no user type');
  }
  // A required reference still refuses the zero GUID, naming the field.
  const res = await f.server.request('POST', '/api/v3/commercial-client-users', {
    headers: f.h,
    json: { OperationType: 'Create', CreateModel: { CommercialClientId: ZERO, UserId: users[0].Id, Active: true }, CreateManyModel: null },
  });
  assert.ok(res.status >= 400 && res.status < 500, res.text);
  assert.ok(JSON.stringify(res.body).includes('CommercialClientId'), res.text);
});

test('Client API "User": PATCH {"TimesheetRequired": {"value": true}} writes it (nothing ignored) and GET /api/users/{id} shows it', async () => {
  const [user] = await f.send('POST', '/api/v3/users', { Type: 2, CreateManyModel: [{ UserName: 'timesheets', TimesheetRequired: false }] });
  assert.equal((await f.send('GET', `/api/users/${user.Id}`)).TimesheetRequired, false);
  const [before] = await f.rowsOf('DE-Users', [['UserId', '=', user.Id]]);
  const res = await f.server.request('PATCH', `/api/users/${user.Id}`, { headers: f.h, json: { TimesheetRequired: { value: true } } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-ignored-properties'), null);
  assert.equal(res.body.TimesheetRequired, true);
  assert.equal((await f.send('GET', `/api/users/${user.Id}`)).TimesheetRequired, true);
  const [row] = await f.rowsOf('DE-Users', [['UserId', '=', user.Id]]);
  assert.ok(new Date(row.ModifiedOn) > new Date(before.ModifiedOn), 'the change shows in DE-Users');
  assert.equal((await f.sql('select timesheet_required from users where id = $1', [user.Id]))[0].timesheet_required, true);
});

test('Client API "User Description": DocumentTypeName "user" adds a brief to the user, shown in DE-Descriptions; any case, short or full name', async () => {
  const [user] = await f.send('POST', '/api/v3/users', { Type: 2, CreateManyModel: [{ UserName: 'described' }] });
  const brief = await f.send('POST', '/api/documentBriefs', {
    DocumentId: user.Id,
    DocumentTypeName: 'user',
    Text: '<p>teste e</p>',
    Actions: {},
    PlainText: 'teste e',
  });
  assert.equal(brief.Version, 1);
  const again = await f.send('POST', '/api/documentBriefs', {
    DocumentId: user.Id,
    DocumentTypeName: 'Skill.Module.BusinessObjects.User',
    Text: '<p>second</p>',
  });
  assert.equal(again.Version, 2);
  const rows = await f.rowsOf('DE-Descriptions', [['DocumentId', '=', user.Id]]);
  assert.deepEqual(rows.map((r) => r.Description).sort(), ['second', 'teste e']);
  // Another spec type Atrium keeps, by its display name in another case.
  const client = await f.send('POST', '/api/documentBriefs', { DocumentId: f.clientId, DocumentTypeName: 'COMMERCIAL CLIENT', Text: '<p>Key account</p>' });
  assert.equal(client.DocumentId, f.clientId);
  assert.equal((await f.rowsOf('DE-Descriptions', [['DocumentId', '=', f.clientId]])).length, 1);
  // A user without Administrator may not describe users; an unknown type is a 422 naming the property.
  const plain = await f.userWith(['ProjectWrite']);
  const denied = await f.server.request('POST', '/api/documentBriefs', {
    headers: plain.headers,
    json: { DocumentId: user.Id, DocumentTypeName: 'User', Text: 'x' },
  });
  assert.equal(denied.status, 403, denied.text);
  const unknown = await f.server.request('POST', '/api/documentBriefs', { headers: f.h, json: { DocumentId: user.Id, DocumentTypeName: 'Tender', Text: 'x' } });
  assert.equal(unknown.status, 422, unknown.text);
  assert.equal(unknown.body.errors[0].path, '/body/DocumentTypeName');
});

test('Client API "Commercial Client" (Type 2, only Name filled, the rest "" and the zero GUID): created without billing clients, shown in DE-Clients', async () => {
  const model = {
    Name: 'ClientName_',
    ExternalId: '',
    Code: '',
    Number: '',
    Street: '',
    Street2: '',
    StateProvince: '',
    TaxpayerNumber: '',
    ZipPostal: '',
    Website: '',
    Email: '',
    Phone: '',
    HeadOffice: '',
    FullTimeEmployeeTime: 0,
    LinkCompaniesDisabled: false,
    Overheads: 0,
    Margin: 0,
    SupplierMargin: 0,
    CommercialClientCountryId: ZERO,
    CommercialClientCityId: ZERO,
    CommercialPaymentConditionId: ZERO,
    ClientGroupId: ZERO,
    ProjectOwnerId: ZERO,
    ProjectManagerId: ZERO,
    TimesheetLevelId: ZERO,
    RateCardSuggestionId: ZERO,
    RateCardColumnSuggestionId: ZERO,
    RateCardColumnSellSuggestionId: ZERO,
    PriceTableSuggestionId: ZERO,
    PriceTableColumnSuggestionId: ZERO,
    SectorId: ZERO,
    ClientClassificationId: ZERO,
  };
  const first = await f.send('POST', '/api/v3/commercial-clients', { Type: 2, CreateManyModel: [model] });
  const second = await f.send('POST', '/api/v3/commercial-clients', { Type: 2, CreateManyModel: [model] });
  assert.notEqual(first[0].Id, second[0].Id, 'an empty ExternalId matches nothing: each post is a new client');
  const rows = await f.rowsOf('DE-Clients', [['Client', '=', 'ClientName_']]);
  assert.equal(rows.length, 2);
  assert.equal(rows[0].OwnerId, null);
  // The Integration API keeps its ordering rule.
  const integration = await f.server.request('POST', '/api/commercialclients', { headers: f.h, json: { externalId: 'NO-BILLING', name: 'Nope' } });
  assert.equal(integration.status, 409, integration.text);
});

test('Client API "Create Expense Sheet": EmployeeId is an employee id (DE-Employees), a user id still works, and the employee wins', async () => {
  const employee = await f.send('POST', '/api/employees', { Name: 'Ana Expenses', ExternalId: 'EMP-1', CompanyId: f.tenant.companyId, IsActive: true });
  const refs = () => ({
    CompanyCode: f.tenant.companyCode,
    DepartmentExternalId: f.tenant.departmentExternalId,
    TypologyExternalId: f.tenant.typologyExternalId,
  });
  const login = await f.send('POST', '/api/users', { ...refs(), UserName: 'ana.expenses', ExternalId: 'U-ANA', IsActive: true, EmployeeId: employee.Id });
  const [shown] = await f.rowsOf('DE-Employees', [['EmployeeId', '=', employee.Id]]);
  assert.equal(shown.UserId, login.Id);
  const body = (employeeId: string) => ({
    CompanyId: f.tenant.companyId,
    DepartmentId: '',
    CurrencyId: '',
    PaymentConditionId: '',
    SupplierId: '',
    EmployeeId: employeeId,
    TypeId: '',
    Emission: '2026-03-02',
    Due: '2026-03-31',
    EntryDate: '',
    Exchange: 1,
    ExternalDocumentType: '',
    DocumentNumber: '',
  });
  const byEmployee = await f.send('POST', '/api/expenses', body(shown.EmployeeId));
  assert.equal(byEmployee.EmployeeId, login.Id, 'the sheet holds the expenses of the login the employee backs');
  const byUser = await f.send('POST', '/api/expenses', body(login.Id));
  assert.equal(byUser.EmployeeId, login.Id);
  const sheets = await f.rowsOf('DE-ExpenseSheets', [['ExpenseSheetId', '=', byEmployee.Id], 'or', ['ExpenseSheetId', '=', byUser.Id]]);
  assert.equal(sheets.length, 2);
  // An id that is both an employee's and a user's: the employee's reading wins.
  const backer = await f.send('POST', '/api/employees', { Name: 'Rui Backer', ExternalId: 'EMP-3', CompanyId: f.tenant.companyId, IsActive: true });
  const backed = await f.send('POST', '/api/users', { ...refs(), UserName: 'rui', ExternalId: 'U-RUI', IsActive: true, EmployeeId: backer.Id });
  await f.send('POST', '/api/users', { ...refs(), Id: backer.Id, UserName: 'twin', ExternalId: 'U-TWIN', IsActive: true });
  assert.equal((await f.send('POST', '/api/expenses', body(backer.Id))).EmployeeId, backed.Id);
  const lonely = await f.send('POST', '/api/employees', { Name: 'No Login', ExternalId: 'EMP-2', CompanyId: f.tenant.companyId, IsActive: true });
  const refused = await f.server.request('POST', '/api/expenses', { headers: f.h, json: body(lonely.Id) });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.errors[0].path, '/body/EmployeeId');
});

test('"Workflows By Document": the lookup answers ids, and the workflows route takes one', async () => {
  const types = await f.send('GET', '/api/v3/document-types/lookup');
  const project = types.find((t: { className: string }) => t.className === 'Project');
  assert.match(project.id, /^[0-9a-f-]{36}$/);
  const byId = await f.send('GET', `/api/v3/document-types/${project.id.toUpperCase()}/workflows?expandTransitions=true`);
  const byName = await f.send('GET', '/api/v3/document-types/Project/workflows?expandTransitions=true');
  assert.deepEqual(byId, byName);
  assert.ok(byId.length > 0 && byId[0].Transitions.length > 0);
});
