// Demo data: companies of the group, divisions, departments, VAT rates, payment conditions and holidays.
import { companyCodeFromName } from '../domain/bootstrap.ts';
import type { DemoContext } from './context.ts';
import { ds, mkDay } from './dates.ts';
import type { Agency, Company } from './model.ts';
import { COUNTRIES, type DeptKind, EXTRA_COMPANIES, HOLIDAYS_2025 } from './vocabulary.ts';

export function addOrganisation(
  ctx: DemoContext,
  a: Pick<Agency, 'countryId' | 'currencyId' | 'mainCountryIso' | 'mainCurrencyIso' | 'imageFile'>,
): Pick<Agency, 'companies' | 'companyImages' | 'mainCompany' | 'divisionIds'> {
  const { defaults, scale, rngFor, add, audit, mainRow } = ctx;
  const { countryId, currencyId, mainCountryIso, mainCurrencyIso, imageFile } = a;
  const rOrg = rngFor('org');
  const companies: Company[] = [];
  const newCompany = (id: string, code: string, name: string, countryIso: string, currency: string): Company => ({
    id,
    code,
    name,
    currency,
    currencyId: currencyId.get(currency)!,
    countryIso,
    depts: [],
    vat: { standard: '', intermediate: '', reduced: '', exempt: '' },
    pay: { immediate: '', d30: '', d60: '' },
    services: {},
    workTypes: {},
    suppliers: [],
    projectTypes: {},
    classifications: {},
    natures: {},
    jobTypes: [],
    requestTypes: [],
    estimateTypes: [],
    contractTypes: [],
    rateCardId: '',
    rateColumns: { y2024: '', y2025: '' },
    rates: new Map(),
    leaveTypes: { vac2024: '', vac2025: '', sick: '', medical: '' },
    expenseTypes: [],
    holidays: new Set(),
    staff: [],
    internalJobs: [],
    domain: `${code.toLowerCase()}.example.com`,
  });
  companies.push(newCompany(defaults.companyId, defaults.companyCode, mainRow.name, mainCountryIso, mainCurrencyIso));
  const extraCount = Math.min(EXTRA_COMPANIES.length, 1 + Math.floor(scale / 10));
  const usedCodes = new Set([defaults.companyCode]);
  const companyImages = new Map<string, string>();
  companyImages.set(defaults.companyId, imageFile(`logo-${defaults.companyCode.toLowerCase()}.png`));
  for (let i = 0; i < extraCount; i++) {
    const name = EXTRA_COMPANIES[i];
    let code = companyCodeFromName(name);
    for (let k = 2; usedCodes.has(code); k++) code = `${companyCodeFromName(name).slice(0, 8)}${k}`;
    usedCodes.add(code);
    const country = COUNTRIES[(i + 1) % COUNTRIES.length];
    const c = newCompany(rOrg.uuid(), code, name, country.iso, country.currency);
    companies.push(c);
    const img = imageFile(`logo-${code.toLowerCase()}.png`);
    companyImages.set(c.id, img);
    add('companies', {
      id: c.id,
      code,
      name,
      currency_id: c.currencyId,
      country_id: countryId.get(country.iso),
      image_file_id: img,
      timesheet_start: ds(mkDay(2024, 1, 1)),
      resource_type: 0,
      hours_type: 0,
      margin_type: 1,
      required_hours: 8,
      ...audit(mkDay(2024, 1, 5), 600 + i, null),
    });
  }
  const mainCompany = companies[0];

  const divisionIds = new Map<string, string>();
  for (const c of companies) {
    const isMain = c === mainCompany;
    const divNames = isMain ? ['Creative', 'Business'] : ['Creative', 'Business'];
    divNames.forEach((dn, i) => {
      const id = rOrg.uuid();
      divisionIds.set(`${c.id}:${dn}`, id);
      add('divisions', { id, company_id: c.id, name: dn, external_id: `DIV-00${i + (isMain ? 2 : 1)}`, ...audit(mkDay(2024, 1, 5), 620, null) });
    });
    if (isMain) divisionIds.set(`${c.id}:General`, defaults.divisionId);
    const kinds: DeptKind[] = isMain ? ['General', 'Creative', 'Digital', 'Accounts'] : ['Creative', 'Digital', 'Accounts'];
    kinds.forEach((kind, i) => {
      const id = isMain && kind === 'General' ? defaults.departmentId : rOrg.uuid();
      c.depts.push({ id, kind, company: c, typologies: [], staff: [] });
      if (isMain && kind === 'General') return;
      const div = kind === 'Accounts' ? 'Business' : 'Creative';
      add('departments', {
        id,
        company_id: c.id,
        division_id: divisionIds.get(`${c.id}:${div}`),
        name: kind,
        external_id: `DEP-${String(i + 1).padStart(3, '0')}`,
        ...audit(mkDay(2024, 1, 5), 630 + i, null),
      });
    });
    const vat = (name: string, pct: number, ext: string, isDefault: boolean): string => {
      const id = rOrg.uuid();
      add('vats', {
        id,
        company_id: c.id,
        name,
        percentage: pct,
        is_active: true,
        is_default: isDefault,
        external_id: ext,
        ...audit(mkDay(2024, 1, 5), 640, null),
      });
      return id;
    };
    c.vat = {
      standard: vat('Standard', 23, 'VAT23', true),
      intermediate: vat('Intermediate', 13, 'VAT13', false),
      reduced: vat('Reduced', 6, 'VAT06', false),
      exempt: vat('Exempt', 0, 'VAT00', false),
    };
    const pc = (name: string, days: number, ext: string, isDefault: boolean): string => {
      const id = rOrg.uuid();
      add('payment_conditions', { id, company_id: c.id, name, days, is_default: isDefault, external_id: ext, ...audit(mkDay(2024, 1, 5), 650, null) });
      return id;
    };
    c.pay = { immediate: pc('Immediate', 0, 'PC00', false), d30: pc('30 days', 30, 'PC30', true), d60: pc('60 days', 60, 'PC60', false) };
    for (const [m, d, name] of HOLIDAYS_2025) {
      const day = mkDay(2025, m, d);
      c.holidays.add(day);
      add('holidays', { id: rOrg.uuid(), company_id: c.id, date: ds(day), name, ...audit(mkDay(2024, 11, 15), 600, null) });
    }
    add('holidays', { id: rOrg.uuid(), company_id: c.id, date: ds(mkDay(2026, 1, 1)), name: "New Year's Day", ...audit(mkDay(2025, 11, 15), 600, null) });
  }
  return { companies, companyImages, mainCompany, divisionIds };
}
