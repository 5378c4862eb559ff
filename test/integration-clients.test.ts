// Integration API: billing clients, commercial clients (ordering rule, options), their association,
// suppliers, master data set up entirely through the API, the user feed's lookups, configuration keys,
// and the OpenAPI document of every Integration API route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, inlineRefs, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
let db: pg.Client;
let h: Record<string, string>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Finance Agency');
  other = await server.createTenant('Other Finance');
  h = appHeaders(tenant);
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});
after(async () => {
  await db.end();
  await server.close();
});

const post = (path: string, json: unknown, headers: Record<string, string> = h) => server.request('POST', path, { headers, json });

async function events(documentId: string): Promise<{ action_type: string; document_type: string; detail: Record<string, unknown> }[]> {
  const res = await db.query('select action_type, document_type, detail from events where document_id = $1 order by seq', [documentId]);
  return res.rows;
}

describe('master data through the API', () => {
  test('a second company with its organisation, catalogue and finance settings', async () => {
    const currency = await post('/api/currencies', { externalId: 'USD', name: 'US Dollar', isoCode: 'USD', symbol: '$' });
    assert.equal(currency.status, 201, currency.text);
    const country = await post('/api/countries', { externalId: 'US', name: 'United States', isoCode: 'US' });
    assert.equal(country.status, 201);
    const company = await post('/api/companies', { code: 'USCO', name: 'US Company', currencyExternalId: 'USD', countryExternalId: 'US', requiredHours: 8 });
    assert.equal(company.status, 201, company.text);
    assert.equal(company.body.currencyId, currency.body.id);
    assert.equal(company.body.countryId, country.body.id);
    const renamed = await post('/api/companies', { code: 'USCO', name: 'US Company Inc.' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.id, company.body.id);
    assert.equal(renamed.body.currencyId, currency.body.id, 'a reference not sent is left unchanged');
    const ev = await events(company.body.id);
    assert.deepEqual(
      ev.map((e) => [e.action_type, e.document_type, e.detail.Name]),
      [
        ['Created', 'Skill.Module.BusinessObjects.Company', 'US Company'],
        ['Updated', 'Skill.Module.BusinessObjects.Company', 'US Company Inc.'],
      ],
    );

    const division = await post('/api/divisions', { companyCode: 'USCO', externalId: 'DIV-US', name: 'Americas' });
    assert.equal(division.status, 201, division.text);
    assert.equal(division.body.companyId, company.body.id);
    const department = await post('/api/departments', { companyId: company.body.id, externalId: 'DEP-US', name: 'Creative', divisionExternalId: 'DIV-US' });
    assert.equal(department.status, 201, department.text);
    assert.equal(department.body.divisionId, division.body.id);
    assert.equal(department.body.companyCode, 'USCO');
    // The same external id in another company is another department.
    const sameExt = await post('/api/departments', { companyCode: tenant.companyCode, externalId: 'DEP-US', name: 'Home creative' });
    assert.equal(sameExt.status, 201);
    assert.notEqual(sameExt.body.id, department.body.id);

    const city = await post('/api/cities', { externalId: 'NYC', name: 'New York', countryId: country.body.id });
    assert.equal(city.status, 201);
    const vat = await post('/api/vats', { companyCode: 'USCO', externalId: 'VAT0', name: 'Exempt', percentage: 0, isDefault: true });
    assert.equal(vat.status, 201, vat.text);
    assert.equal(vat.body.percentage, 0);
    assert.equal(vat.body.isActive, true);
    const pc = await post('/api/paymentconditions', { companyCode: 'USCO', externalId: 'N30', name: 'Net 30', days: 30, isDefault: true });
    assert.equal(pc.status, 201);
    const group = await post('/api/clientgroups', { externalId: 'CG1', name: 'Retail' });
    assert.equal(group.status, 201);

    const tg = await post('/api/usertypologygroups', { name: 'Designers', companyCode: 'USCO' });
    assert.equal(tg.status, 201, tg.text);
    const tgAgain = await post('/api/usertypologygroups', { name: 'DESIGNERS' });
    assert.equal(tgAgain.status, 200, 'a group without external id is matched by name');
    assert.equal(tgAgain.body.id, tg.body.id);
    const typology = await post('/api/usertypologies', {
      externalId: 'Senior Designer',
      name: 'Senior Designer',
      departmentExternalId: 'DEP-US',
      companyCode: 'USCO',
      typologyGroupId: tg.body.id,
      hourlyValue: 95.5,
    });
    assert.equal(typology.status, 201, typology.text);
    assert.equal(typology.body.departmentId, department.body.id);
    assert.equal(typology.body.companyId, company.body.id);
    assert.equal(typology.body.hourlyValue, 95.5);
    const link = await db.query('select count(*)::int as n from typology_group_departments where typology_group_id = $1 and department_id = $2', [
      tg.body.id,
      department.body.id,
    ]);
    assert.equal(link.rows[0].n, 1);

    // The lookups the user feed calls.
    const dep = await server.request('GET', `/api/companies/${company.body.id}/departments/external?externalId=DEP-US`, { headers: h });
    assert.equal(dep.status, 200);
    assert.equal(dep.body.id, department.body.id);
    assert.equal(dep.body.divisionId, division.body.id);
    const typ = await server.request(
      'GET',
      `/api/departments/${department.body.id}/usertypologies/external?externalId=${encodeURIComponent('Senior Designer')}`,
      {
        headers: h,
      },
    );
    assert.equal(typ.status, 200);
    assert.equal(typ.body.id, typology.body.id);
    assert.equal(typ.body.typologyGroupId, tg.body.id);
    assert.equal((await server.request('GET', `/api/companies/${company.body.id}/departments/external?externalId=NOPE`, { headers: h })).status, 404);
    assert.equal((await server.request('GET', `/api/departments/${department.body.id}/usertypologies/external?externalId=NOPE`, { headers: h })).status, 404);
    assert.equal(
      (await server.request('GET', `/api/companies/${company.body.id}/departments/external?externalId=DEP-US`, { headers: appHeaders(other) })).status,
      404,
    );

    // A user in the new company, by codes only.
    const user = await post('/api/users', {
      UserName: 'us.designer',
      ExternalId: 'US-1',
      CompanyCode: 'USCO',
      DepartmentExternalId: 'DEP-US',
      TypologyExternalId: 'Senior Designer',
      IsActive: true,
    });
    assert.equal(user.status, 201, user.text);
    assert.equal(user.body.TypologyId, typology.body.id);
  });

  test('422 for references that do not resolve, 400 when the company is missing', async () => {
    let res = await post('/api/divisions', { externalId: 'D', name: 'D' });
    assert.equal(res.status, 400);
    res = await post('/api/divisions', { companyCode: 'NOPE', externalId: 'D', name: 'D' });
    assert.equal(res.status, 422);
    assert.equal(res.body.field, 'companyCode');
    res = await post('/api/cities', { externalId: 'X', name: 'X', countryExternalId: 'NOPE' });
    assert.equal(res.status, 422);
    assert.equal(res.body.field, 'countryExternalId');
    res = await post('/api/cities', { externalId: 'X', name: 'X' });
    assert.equal(res.status, 400);
    res = await post('/api/departments', { companyCode: tenant.companyCode, companyId: other.companyId, externalId: 'D', name: 'D' });
    assert.equal(res.status, 422);
    res = await post('/api/currencies', { externalId: 'EUR2', name: 'Euro again', isoCode: 'EUR' });
    assert.equal(res.status, 409, 'isoCode is unique');
  });
});

describe('billing clients', () => {
  test('upsert by externalId plus companyCode; PascalCase accepted; response carries id and companyId; events on Client', async () => {
    const body = {
      externalId: 'CLI-1',
      companyCode: tenant.companyCode,
      name: 'Acme',
      code: 'ACM',
      street: 'Main St 1',
      taxpayerNumber: 'PT123',
      active: true,
    };
    const created = await post('/api/billingclients', body);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.action, 'Created');
    assert.equal(created.body.companyId, tenant.companyId);
    assert.equal(created.body.companyCode, tenant.companyCode);
    assert.equal(created.body.taxpayerNumber, 'PT123');
    const updated = await post('/api/billingclients', { ExternalId: 'CLI-1', CompanyCode: tenant.companyCode, Name: 'Acme Ltd', OtherDebtor: true });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.id, created.body.id);
    assert.equal(updated.body.name, 'Acme Ltd');
    assert.equal(updated.body.code, 'ACM');
    assert.equal(updated.body.otherDebtor, true);
    const ev = await events(created.body.id);
    assert.equal(ev[0].document_type, 'Skill.Module.BusinessObjects.Client');
    assert.deepEqual(ev[1].detail, { Name: 'Acme Ltd', OtherDebtor: true });
    const row = (await db.query('select company_id, tax_payer_number, is_active from billing_clients where id = $1', [created.body.id])).rows[0];
    assert.deepEqual({ ...row }, { company_id: tenant.companyId, tax_payer_number: 'PT123', is_active: true });
  });

  test('payment condition and currency: by external id, applyDefaultPaymentCondition, setFirstPaymentConditionIfExternalIdIsNull, applyDefaultCurrency', async () => {
    const first = await post('/api/paymentconditions', { companyCode: tenant.companyCode, externalId: 'PC-FIRST', name: 'Zero days', days: 0 });
    const dflt = await post('/api/paymentconditions', { companyCode: tenant.companyCode, externalId: 'PC-DEF', name: 'Net 60', days: 60, isDefault: true });
    const currency = (await db.query('select currency_id from companies where id = $1', [tenant.companyId])).rows[0].currency_id;
    const base = { companyCode: tenant.companyCode, name: 'PC client' };
    let res = await post('/api/billingclients', { ...base, externalId: 'PC-1', paymentConditionExternalId: 'PC-FIRST' });
    assert.equal(res.body.paymentConditionId, first.body.id);
    res = await post('/api/billingclients', { ...base, externalId: 'PC-2', applyDefaultPaymentCondition: true, applyDefaultCurrency: true });
    assert.equal(res.body.paymentConditionId, dflt.body.id);
    assert.equal(res.body.currencyId, currency);
    res = await post('/api/billingclients', { ...base, externalId: 'PC-3', setFirstPaymentConditionIfExternalIdIsNull: true });
    assert.equal(res.body.paymentConditionId, first.body.id);
    res = await post('/api/billingclients', { ...base, externalId: 'PC-4', paymentConditionExternalId: 'PC-FIRST', applyDefaultPaymentCondition: true });
    assert.equal(res.body.paymentConditionId, first.body.id, 'a condition sent wins over the default');
    res = await post('/api/billingclients', { ...base, externalId: 'PC-5' });
    assert.equal(res.body.paymentConditionId, null);
    assert.equal(res.body.currencyId, null);
    res = await post('/api/billingclients', { ...base, externalId: 'PC-6', paymentConditionExternalId: 'NOPE' });
    assert.equal(res.status, 422);
    assert.equal(res.body.field, 'paymentConditionExternalId');
    res = await post('/api/billingclients', { ...base, externalId: 'PC-7', currencyExternalId: 'NOPE' });
    assert.equal(res.status, 422);
  });

  test('400 without companyCode and for a wrong type; an unknown field is ignored and reported; 422 for an unknown company', async () => {
    assert.equal((await post('/api/billingclients', { externalId: 'X', name: 'X' })).status, 400);
    assert.equal((await post('/api/billingclients', { externalId: 'X', name: 'X', companyCode: tenant.companyCode, active: 'yes' })).status, 400);
    const unknown = await post('/api/billingclients', { externalId: 'X-IGNORED', name: 'X', companyCode: tenant.companyCode, colour: 'red' });
    assert.equal(unknown.status, 201, unknown.text);
    assert.equal(unknown.headers.get('x-ignored-properties'), '$.colour');
    const res = await post('/api/billingclients', { externalId: 'X', name: 'X', companyCode: 'NOPE' });
    assert.equal(res.status, 422);
    assert.equal(res.body.field, 'companyCode');
    assert.equal(res.body.value, 'NOPE');
  });

  test('20 parallel POSTs with the same key end with one billing client', async () => {
    const body = { externalId: 'CLI-PAR', companyCode: tenant.companyCode, name: 'Parallel' };
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post('/api/billingclients', { ...body, number: String(i) })));
    assert.deepEqual(
      answers.filter((r) => r.status !== 200 && r.status !== 201).map((r) => r.text),
      [],
    );
    const n = await db.query('select count(*)::int as n from billing_clients where external_id = $1', ['CLI-PAR']);
    assert.equal(n.rows[0].n, 1);
  });
});

describe('commercial clients and the ordering rule', () => {
  test('409 naming the missing billing clients until they exist, then 201 with the billing clients to associate', async () => {
    const early = await post('/api/commercialclients', { externalId: 'CC-1', name: 'Globex' });
    assert.equal(early.status, 409, early.text);
    assert.deepEqual(early.body.missingBillingClients, [{ externalId: 'CC-1', companyId: null, companyCode: null }]);
    assert.match(early.body.detail, /billing client/);
    assert.equal((await db.query(`select count(*)::int as n from commercial_clients where external_id = 'CC-1'`)).rows[0].n, 0);

    const bc = await post('/api/billingclients', { externalId: 'CC-1', companyCode: tenant.companyCode, name: 'Globex PT' });
    assert.equal(bc.status, 201);
    // A company that has no billing client yet is still missing.
    const company2 = await post('/api/companies', { code: 'CO2', name: 'Second' });
    const forCompany2 = await post('/api/commercialclients', { externalId: 'CC-1', name: 'Globex', companyId: company2.body.id });
    assert.equal(forCompany2.status, 409);
    assert.deepEqual(forCompany2.body.missingBillingClients, [{ externalId: 'CC-1', companyId: company2.body.id, companyCode: 'CO2' }]);

    const cc = await post('/api/commercialclients', { externalId: 'CC-1', name: 'Globex', code: 'GLX', blocked: false, nameAndExternalId: 'Globex (CC-1)' });
    assert.equal(cc.status, 201, cc.text);
    assert.equal(cc.body.code, 'GLX');
    assert.deepEqual(cc.body.billingClients, [{ id: bc.body.id, companyId: tenant.companyId, companyCode: tenant.companyCode }]);
    const ev = await events(cc.body.id);
    assert.equal(ev[0].document_type, 'Skill.Module.BusinessObjects.CommercialClient');

    const again = await post('/api/commercialclients', { externalId: 'CC-1', name: 'Globex Corp', code: 'NEW', _options: { ignoreCode: true } });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, cc.body.id);
    assert.equal(again.body.code, 'GLX', 'ignoreCode leaves the code alone');
    assert.equal(again.body.name, 'Globex Corp');
  });

  test('references, linkDefaultCompany, insertUpdateCheckOnlyId and an id that does not match', async () => {
    await post('/api/billingclients', { externalId: 'CC-2', companyCode: tenant.companyCode, name: 'Initech PT' });
    await post('/api/clientgroups', { externalId: 'CG-2', name: 'Tech' });
    const owner = await post('/api/users', {
      UserName: 'owner',
      ExternalId: 'OWNER-1',
      CompanyCode: tenant.companyCode,
      DepartmentExternalId: tenant.departmentExternalId,
      TypologyExternalId: tenant.typologyExternalId,
      IsActive: true,
    });
    const pc = await post('/api/paymentconditions', { companyCode: tenant.companyCode, externalId: 'PC-CC', name: 'Net 15', days: 15 });
    const id = '5d1c6a2e-0c55-4a3f-8d0f-3f1b2a7c0002';
    const cc = await post('/api/commercialclients', {
      id,
      externalId: 'CC-2',
      name: 'Initech',
      companyId: tenant.companyId,
      clientGroupExternalId: 'CG-2',
      projectOwnerExternalId: 'OWNER-1',
      commercialPaymentConditionExternalId: 'PC-CC',
      timesheetLevelId: '5d1c6a2e-0c55-4a3f-8d0f-3f1b2a7c9999',
      _options: { linkDefaultCompany: true },
    });
    assert.equal(cc.status, 201, cc.text);
    assert.equal(cc.body.id, id);
    assert.equal(cc.body.projectOwnerId, owner.body.Id);
    assert.equal(cc.body.commercialPaymentConditionId, pc.body.id);
    assert.equal(cc.body.timesheetLevelId, '5d1c6a2e-0c55-4a3f-8d0f-3f1b2a7c9999');
    const linked = await db.query('select company_id from client_companies where commercial_client_id = $1', [id]);
    assert.deepEqual(
      linked.rows.map((r) => r.company_id),
      [tenant.companyId],
    );
    const mismatch = await post('/api/commercialclients', { id: '5d1c6a2e-0c55-4a3f-8d0f-3f1b2a7c0003', externalId: 'CC-2', name: 'Initech' });
    assert.equal(mismatch.status, 409);
    assert.equal((await db.query('select name from commercial_clients where id = $1', [id])).rows[0].name, 'Initech');
    // insertUpdateCheckOnlyId: matched by id alone, so the externalId may change (to one with billing clients).
    await post('/api/billingclients', { externalId: 'CC-2b', companyCode: tenant.companyCode, name: 'Initech PT 2' });
    const byId = await post('/api/commercialclients', { id, externalId: 'CC-2b', name: 'Initech', insertUpdateCheckOnlyId: true });
    assert.equal(byId.status, 200, byId.text);
    assert.equal(byId.body.externalId, 'CC-2b');
    const noId = await post('/api/commercialclients', { externalId: 'CC-2b', name: 'Initech', insertUpdateCheckOnlyId: true });
    assert.equal(noId.status, 400);
    const badGroup = await post('/api/commercialclients', { externalId: 'CC-2b', name: 'Initech', clientGroupExternalId: 'NOPE' });
    assert.equal(badGroup.status, 422);
    assert.equal(badGroup.body.field, 'clientGroupExternalId');
  });
});

describe('commercial-client-companies', () => {
  test('links one billing client per company; a second link is 409; ids must belong to the tenant and fit together', async () => {
    const bc = await post('/api/billingclients', { externalId: 'AS-1', companyCode: tenant.companyCode, name: 'Umbrella PT' });
    const cc = await post('/api/commercialclients', { externalId: 'AS-1', name: 'Umbrella' });
    assert.equal(cc.status, 201);
    await post('/api/vats', { companyCode: tenant.companyCode, externalId: 'VAT23', name: 'Normal', percentage: 23 });
    const body = { companyId: bc.body.companyId, commercialClientId: cc.body.id, billingClientId: bc.body.id, externalId: 'AS-1', vatExternalId: 'VAT23' };
    const link = await post('/api/commercial-client-companies', body);
    assert.equal(link.status, 201, link.text);
    assert.equal(link.body.billingClientId, bc.body.id);
    const ev = await events(link.body.id);
    assert.equal(ev[0].action_type, 'Created');
    const again = await post('/api/commercial-client-companies', body);
    assert.equal(again.status, 409, again.text);
    assert.equal((await db.query('select count(*)::int as n from commercial_client_companies where commercial_client_id = $1', [cc.body.id])).rows[0].n, 1);

    // A billing client of another company does not fit.
    const company2 = await post('/api/companies', { code: 'CO3', name: 'Third' });
    const bc2 = await post('/api/billingclients', { externalId: 'AS-1', companyCode: 'CO3', name: 'Umbrella 3' });
    const misfit = await post('/api/commercial-client-companies', { ...body, companyId: company2.body.id, vatExternalId: null });
    assert.equal(misfit.status, 422);
    assert.equal(misfit.body.field, 'billingClientId');
    const fit = await post('/api/commercial-client-companies', { ...body, companyId: company2.body.id, billingClientId: bc2.body.id, vatExternalId: null });
    assert.equal(fit.status, 201, fit.text);

    const foreign = await post('/api/commercial-client-companies', { ...body, companyId: other.companyId });
    assert.equal(foreign.status, 422);
    assert.equal(foreign.body.field, 'companyId');
    const unknownClient = await post('/api/commercial-client-companies', { ...body, commercialClientId: '00000000-0000-4000-8000-000000000001' });
    assert.equal(unknownClient.status, 422);
    assert.equal(unknownClient.body.field, 'commercialClientId');
    const badVat = await post('/api/commercial-client-companies', { ...body, vatExternalId: 'NOPE' });
    assert.equal(badVat.status, 422);
    assert.equal((await post('/api/commercial-client-companies', { ...body, companyId: 'x' })).status, 400);
  });
});

describe('suppliers', () => {
  test('upsert by externalId plus companyCode; applyDefaultVat; disableVatUpdate; events on Supplier', async () => {
    const v1 = await post('/api/vats', { companyCode: tenant.companyCode, externalId: 'V-DEF', name: 'Default', percentage: 23, isDefault: true });
    const v2 = await post('/api/vats', { companyCode: tenant.companyCode, externalId: 'V-RED', name: 'Reduced', percentage: 6 });
    const base = { externalId: 'SUP-1', companyCode: tenant.companyCode, name: 'Paper Co' };
    const created = await post('/api/suppliers', { ...base, applyDefaultVat: true, otherCreditor: true });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.vatId, v1.body.id);
    assert.equal(created.body.otherCreditor, true);
    const locked = await post('/api/suppliers', { ...base, vatExternalId: 'V-RED', name: 'Paper Company', _options: { disableVatUpdate: true } });
    assert.equal(locked.status, 200);
    assert.equal(locked.body.vatId, v1.body.id, 'disableVatUpdate keeps the VAT');
    assert.equal(locked.body.name, 'Paper Company');
    const changed = await post('/api/suppliers', { ...base, vatExternalId: 'V-RED' });
    assert.equal(changed.body.vatId, v2.body.id);
    const ev = await events(created.body.id);
    assert.equal(ev[0].document_type, 'Skill.Module.BusinessObjects.Supplier');
    assert.deepEqual(
      ev.map((e) => e.action_type),
      ['Created', 'Updated', 'Updated'],
    );
    const res = await post('/api/suppliers', { ...base, companyCode: 'NOPE' });
    assert.equal(res.status, 422);
    const parallel = await Promise.all(Array.from({ length: 20 }, () => post('/api/suppliers', { ...base, externalId: 'SUP-PAR' })));
    assert.ok(parallel.every((r) => r.status === 200 || r.status === 201));
    assert.equal((await db.query(`select count(*)::int as n from suppliers where external_id = 'SUP-PAR'`)).rows[0].n, 1);
  });
});

describe('configuration keys', () => {
  test('secrets are stored encrypted, answered in clear to the Administrator role and masked to others', async () => {
    const value = { ftpHostIp: 'sftp.agency.invalid', ftpUsername: 'feed', ftpPassword: 's3cret!', ftpPath: '/Data', nested: { apiToken: 'tok' } };
    const put = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', { headers: h, json: value });
    assert.equal(put.status, 201, put.text);
    assert.deepEqual(put.body.value, value);
    const stored = (await db.query(`select value from configuration_keys where key = 'SFTP-HRFEED'`)).rows[0].value;
    assert.match(stored.ftpPassword, /^enc:v1:/);
    assert.match(stored.nested.apiToken, /^enc:v1:/);
    assert.equal(stored.ftpUsername, 'feed');
    const asAdmin = await server.request('GET', '/api/configuration-keys/SFTP-HRFEED', { headers: h });
    assert.equal(asAdmin.status, 200);
    assert.deepEqual(asAdmin.body.value, value);

    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const app2 = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
      headers: admin,
      json: { name: 'Feed', roles: ['ConfigurationKeyRead', 'ConfigurationKeyWrite'] },
    });
    const h2 = appHeaders({ tenantId: tenant.tenantId, appId: app2.body.appId, appSecret: app2.body.appSecret });
    // An app without a configuration-key role can neither read nor (keeping the stored password) repoint the key.
    const app3 = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, { headers: admin, json: { name: 'Nobody', roles: [] } });
    const h3 = appHeaders({ tenantId: tenant.tenantId, appId: app3.body.appId, appSecret: app3.body.appSecret });
    assert.equal((await server.request('GET', '/api/configuration-keys/SFTP-HRFEED', { headers: h3 })).status, 403);
    const repoint = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', {
      headers: h3,
      json: { ...value, ftpHostIp: 'elsewhere.invalid', ftpPassword: '********' },
    });
    assert.equal(repoint.status, 403, repoint.text);
    assert.equal(repoint.body.requiredRole, 'ConfigurationKeyWrite');
    // Feed settings naming an address the outbound guard refuses are refused at save, naming the field.
    for (const host of ['10.0.0.1', '[::ffff:0:a9fe:a9fe]:22', '64:ff9b:1::a9fe:a9fe', 'localhost']) {
      const refused = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', { headers: h, json: { ...value, ftpHostIp: host } });
      assert.equal(refused.status, 400, `${host}: ${refused.text}`);
      assert.equal(refused.body.errors[0].path, '/body/ftpHostIp', host);
    }
    assert.equal(
      (await server.request('PUT', '/api/configuration-keys/OTHER', { headers: h, json: { nested: { url: 'http://169.254.169.254/latest' } } })).body.errors[0]
        .path,
      '/body/nested/url',
    );
    const masked = await server.request('GET', '/api/configuration-keys/SFTP-HRFEED', { headers: h2 });
    assert.equal(masked.status, 200);
    assert.equal(masked.body.value.ftpPassword, '********');
    assert.equal(masked.body.value.nested.apiToken, '********');
    assert.equal(masked.body.value.ftpHostIp, 'sftp.agency.invalid');

    // Writing the masked value back keeps the secret.
    const rewrite = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', { headers: h2, json: { ...masked.body.value, ftpPath: '/Data2' } });
    assert.equal(rewrite.status, 200, rewrite.text);
    const after = await server.request('GET', '/api/configuration-keys/SFTP-HRFEED', { headers: h });
    assert.equal(after.body.value.ftpPassword, 's3cret!');
    assert.equal(after.body.value.ftpPath, '/Data2');
    const ev = await db.query(`select action_type, detail from events where document_type like '%ConfigurationKey' order by seq`);
    assert.deepEqual(
      ev.rows.map((r) => r.action_type),
      ['Created', 'Updated'],
    );
    assert.ok(!JSON.stringify(ev.rows).includes('s3cret!'), 'events never carry a secret');

    assert.equal((await server.request('GET', '/api/configuration-keys/NOPE', { headers: h })).status, 404);
    assert.equal((await server.request('PUT', '/api/configuration-keys/X', { headers: h, json: [1, 2] })).status, 400);
    assert.equal((await server.request('GET', '/api/configuration-keys/SFTP-HRFEED', { headers: appHeaders(other) })).status, 404);
  });
});

describe('OpenAPI', () => {
  test('every Integration API route documents its body and each success response', async () => {
    const doc = inlineRefs((await server.request('GET', '/openapi.json')).body);
    const paths = [
      '/api/users',
      '/api/users/{id}',
      '/api/users/external',
      '/api/employees',
      '/api/billingclients',
      '/api/commercialclients',
      '/api/commercial-client-companies',
      '/api/suppliers',
      '/api/companies',
      '/api/divisions',
      '/api/departments',
      '/api/countries',
      '/api/cities',
      '/api/currencies',
      '/api/vats',
      '/api/paymentconditions',
      '/api/clientgroups',
      '/api/usertypologygroups',
      '/api/usertypologies',
      '/api/companies/{companyId}/departments/external',
      '/api/departments/{departmentId}/usertypologies/external',
      '/api/usertypes/name',
      '/api/configuration-keys/{key}',
    ];
    for (const path of paths) {
      const item = doc.paths[path];
      assert.ok(item, `${path} is documented`);
      for (const [method, op] of Object.entries(item) as [string, any][]) {
        if (['post', 'put', 'patch'].includes(method)) assert.ok(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
        const successes = Object.keys(op.responses).filter((s) => s.startsWith('2'));
        assert.ok(successes.length > 0, `${method} ${path} has a success response`);
        for (const s of successes) assert.ok(op.responses[s].content?.['application/json']?.schema?.properties, `${method} ${path} ${s} schema`);
      }
    }
    const users = doc.paths['/api/users'].post;
    assert.deepEqual(
      Object.keys(users.responses)
        .filter((s) => s.startsWith('2'))
        .sort(),
      ['200', '201'],
    );
    assert.ok(users.requestBody.content['application/json'].schema.properties.TypologyExternalId);
    assert.ok(users.parameters.some((p: { name: string; in: string }) => p.in === 'header' && p.name === 'idempotency-key'));
  });
});
