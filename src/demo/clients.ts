// Demo data: client groups, commercial and billing clients, brands, products and client-portal users.
import type { DemoContext } from './context.ts';
import { ds, mkDay, NOW } from './dates.ts';
import type { Agency, ClientE, Company } from './model.ts';
import { BRAND_WORDS, CLIENT_ADJ, CLIENT_NOUN, COUNTRIES, FIRST, LAST, PRODUCT_WORDS, type StageType } from './vocabulary.ts';

export function addClients(
  ctx: DemoContext,
  a: Pick<
    Agency,
    | 'mainCompany'
    | 'countryId'
    | 'cityIds'
    | 'imageFile'
    | 'companies'
    | 'wf'
    | 'uniqueUserName'
    | 'extraCompanies'
    | 'ceo'
    | 'staffOf'
    | 'staffOfDept'
    | 'accountsDept'
  >,
): Pick<Agency, 'internalClient' | 'realClients'> {
  const { defaults, n, rngFor, add, audit } = ctx;
  const { mainCompany, countryId, cityIds, imageFile, companies, wf, uniqueUserName, extraCompanies, ceo, staffOf, staffOfDept, accountsDept } = a;
  const rCli = rngFor('clients');
  const groupNames = ['Retail', 'FMCG', 'Automotive', 'Financial Services', 'Telecom', 'Public Sector'];
  const clientGroups = groupNames.map((name, i) => {
    const id = rCli.uuid();
    add('client_groups', { id, name, external_id: `CG-${String(i + 1).padStart(2, '0')}`, ...audit(mkDay(2024, 1, 9), 600, ceo.id) });
    return id;
  });
  const clients: ClientE[] = [];
  const clientCount = n(8, 4);
  const makeClient = (i: number, internal: boolean, home: Company, name: string, ext: string): ClientE => {
    const companiesOf = [home];
    if (!internal && extraCompanies.length > 0 && rCli.chance(0.3)) {
      const other = rCli.pick(companies.filter((c) => c !== home));
      companiesOf.push(other);
    }
    const acc = accountsDept(home);
    const managerId = rCli.pick(staffOfDept(acc)).id;
    const cl: ClientE = {
      id: rCli.uuid(),
      name,
      home,
      companies: companiesOf,
      brands: [],
      products: [],
      billing: new Map(),
      managerId,
      internal,
      contracts: [],
      users: [],
    };
    const country = COUNTRIES.find((x) => x.iso === home.countryIso)!;
    const cityIdx = rCli.int(0, country.cities.length - 1);
    const drawn: StageType = internal ? 'In Progress' : rCli.chance(0.85) ? 'In Progress' : rCli.chance(0.66) ? 'Draft' : 'Completed';
    // The last client is always a prospect still in Draft, which DE-Clients leaves out (at every scale).
    const stageType: StageType = !internal && i === clientCount - 1 ? 'Draft' : drawn;
    const created = mkDay(2024, rCli.int(1, 12), rCli.int(1, 28));
    add('commercial_clients', {
      id: cl.id,
      name,
      external_id: ext,
      code: internal ? `INT${home.code}`.slice(0, 12) : `C${String(i + 1).padStart(4, '0')}`,
      number: String(1000 + i),
      email: `contact@${name.toLowerCase().replace(/[^a-z]/g, '')}.example.org`,
      phone: `+351 22 ${rCli.int(100, 999)} ${rCli.int(1000, 9999)}`,
      head_office: internal ? home.name : `${name} HQ`,
      street: `${rCli.int(1, 300)} ${rCli.pick(['Main Street', 'Avenue of Liberty', 'Harbour Road', 'Market Square'])}`,
      street2: rCli.chance(0.3) ? `Floor ${rCli.int(1, 9)}` : null,
      zip_postal: String(rCli.int(1000, 9999)),
      state_province: null,
      city: country.cities[cityIdx],
      country: country.name,
      city_id: cityIds.get(country.iso)![cityIdx],
      country_id: countryId.get(country.iso),
      tax_payer_number: String(rCli.int(500000000, 599999999)),
      company_id: home.id,
      client_group_id: internal ? null : rCli.pick(clientGroups),
      commercial_payment_condition_id: home.pay.d30,
      manager_id: managerId,
      owner_id: rCli.pick(staffOf(home)).id,
      timesheet_level_id: null,
      classification: internal ? 'Internal' : rCli.pick(['Key Account', 'Standard', 'Occasional']),
      allows_timesheet: true,
      blocked: !internal && rCli.chance(0.03),
      margin: internal ? 0 : rCli.int(20, 45),
      supplier_margin: internal ? 0 : rCli.int(5, 20),
      full_time_employee_time: internal ? null : rCli.int(0, 4) * 0.5,
      workflow_id: wf('CommercialClient').id,
      stage_id: wf('CommercialClient').stage[stageType],
      image_file_id: rCli.chance(0.5) ? imageFile(`client-${ext.toLowerCase()}.png`) : null,
      ...audit(created, 600, ceo.id, Math.min(NOW - 1, created + rCli.int(10, 500)), 700, managerId),
    });
    for (const c of companiesOf) {
      const billingId = rCli.uuid();
      cl.billing.set(c.id, billingId);
      add('billing_clients', {
        id: billingId,
        company_id: c.id,
        name: `${name} ${country.suffix}`,
        external_id: ext,
        code: `B${String(i + 1).padStart(4, '0')}`,
        number: String(2000 + i),
        street: `${rCli.int(1, 300)} Finance Street`,
        street2: null,
        zip_postal: String(rCli.int(1000, 9999)),
        state_province: null,
        city: country.cities[cityIdx],
        country: country.name,
        city_id: cityIds.get(country.iso)![cityIdx],
        country_id: countryId.get(country.iso),
        tax_payer_number: String(rCli.int(500000000, 599999999)),
        payment_condition_id: c.pay.d30,
        currency_id: c.currencyId,
        is_active: true,
        other_debtor: false,
        ...audit(created, 610, ceo.id),
      });
      add('commercial_client_companies', {
        id: rCli.uuid(),
        company_id: c.id,
        commercial_client_id: cl.id,
        billing_client_id: billingId,
        external_id: ext,
        vat_external_id: 'VAT23',
        ...audit(created, 620, ceo.id),
      });
      add('client_companies', { id: rCli.uuid(), commercial_client_id: cl.id, company_id: c.id });
    }
    if (!internal) {
      for (let b = 0; b < 2; b++) {
        const brandId = rCli.uuid();
        cl.brands.push(brandId);
        add('brands', {
          id: brandId,
          commercial_client_id: cl.id,
          name: `${BRAND_WORDS[(i + b * 5) % BRAND_WORDS.length]}${i >= BRAND_WORDS.length ? ` ${i}` : ''}`,
          external_id: `BR-${i + 1}-${b + 1}`,
          is_active: true,
          ...audit(created, 630, managerId),
        });
        for (let p = 0; p < 2; p++) {
          const productId = rCli.uuid();
          cl.products.push({ id: productId, brandId });
          add('products', {
            id: productId,
            commercial_client_id: cl.id,
            brand_id: brandId,
            name: `${BRAND_WORDS[(i + b * 5) % BRAND_WORDS.length]} ${PRODUCT_WORDS[(b * 2 + p + i) % PRODUCT_WORDS.length]}`,
            code: `P${i + 1}${b + 1}${p + 1}`,
            external_id: `PRD-${i + 1}-${b + 1}-${p + 1}`,
            is_active: true,
            ...audit(created, 640, managerId),
          });
        }
      }
      const productId = rCli.uuid();
      cl.products.push({ id: productId, brandId: null });
      add('products', {
        id: productId,
        commercial_client_id: cl.id,
        brand_id: null,
        name: `${name} Corporate`,
        code: `P${i + 1}00`,
        external_id: `PRD-${i + 1}-0`,
        is_active: true,
        ...audit(created, 641, managerId),
      });
    }
    clients.push(cl);
    return cl;
  };
  for (let i = 0; i < clientCount; i++) {
    const home = i < companies.length ? companies[i] : rCli.chance(0.6) || extraCompanies.length === 0 ? mainCompany : rCli.pick(extraCompanies);
    const round = Math.floor(i / (CLIENT_ADJ.length * CLIENT_NOUN.length));
    const name = `${CLIENT_ADJ[i % CLIENT_ADJ.length]} ${CLIENT_NOUN[Math.floor(i / CLIENT_ADJ.length) % CLIENT_NOUN.length]}${round > 0 ? ` ${round + 1}` : ''}`;
    makeClient(i, false, home, name, `CLI-${String(i + 1).padStart(5, '0')}`);
  }
  const internalClient = new Map<string, ClientE>();
  companies.forEach((c, k) => {
    internalClient.set(c.id, makeClient(clientCount + k, true, c, `${c.name} (Internal)`, `INT-${c.code}`));
  });
  const realClients = clients.filter((c) => !c.internal);

  // Client-portal users: one for every fourth client.
  const rCU = rngFor('client-users');
  for (let i = 0; i < realClients.length; i += 4) {
    const cl = realClients[i];
    const first = rCU.pick(FIRST);
    const last = rCU.pick(LAST);
    const userName = uniqueUserName(first, last);
    const id = rCU.uuid();
    cl.users.push(id);
    const email = `${userName}@${cl.name.toLowerCase().replace(/[^a-z]/g, '')}.example.org`;
    add('users', {
      id,
      user_name: userName,
      name: `${first} ${last}`,
      email,
      password_hash: null,
      is_active: true,
      inactivated_on_utc: null,
      external_id: `CU${String(i + 1).padStart(5, '0')}`,
      external_number: null,
      company_id: cl.home.id,
      department_id: accountsDept(cl.home).id,
      typology_id: accountsDept(cl.home).typologies[0].id,
      user_type_id: defaults.userTypeIds.temporary,
      employee_id: null,
      responsible_id: cl.managerId,
      city_id: null,
      image_file_id: null,
      timesheet_required: false,
      hire_date: null,
      start_date: ds(mkDay(2025, 1, 10)),
      expiration_date: null,
      sso_user_name: null,
      sso_only: false,
      ad_user_name: null,
      phone: null,
      tax_payer_number: null,
      change_password_on_first_logon: true,
      required_weekly_hours: 0,
      required_hours: 0,
      leave_day_hours: 0,
      weekly_overtime_threshold_hours: null,
      tolerance: null,
      entry_time_total_minutes: null,
      exit_time_total_minutes: null,
      entry_time_tolerance_total_minutes: null,
      exit_time_tolerance_total_minutes: null,
      offset_total_minutes: null,
      paid_undertime: false,
      paid_overtime: false,
      tags: ['Client'],
      ...audit(mkDay(2025, 1, 10), 600, cl.managerId),
    });
    add('commercial_client_users', { id: rCU.uuid(), commercial_client_id: cl.id, user_id: id });
  }
  return { internalClient, realClients };
}
