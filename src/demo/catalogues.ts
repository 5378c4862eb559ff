// Demo data: per company, services, work types, suppliers, project and job types, rate cards, leave and expense types.
import type { DemoContext } from './context.ts';
import { ds, mkDay, round2 } from './dates.ts';
import type { Agency } from './model.ts';
import { hex32 } from './random.ts';
import { COUNTRIES, type DeptKind, SUPPLIERS } from './vocabulary.ts';

export function addCatalogues(
  ctx: DemoContext,
  a: Pick<
    Agency,
    'countryId' | 'cityIds' | 'companies' | 'mainCompany' | 'wf' | 'bot' | 'briefing' | 'deptManager' | 'extraCompanies' | 'ceo' | 'accountsDept'
  >,
): void {
  const { scale, rngFor, add, audit, T, docType } = ctx;
  const { countryId, cityIds, companies, mainCompany, wf, bot, briefing, deptManager, extraCompanies, ceo, accountsDept } = a;
  const rCat = rngFor('catalogues');
  const serviceDefs: ReadonlyArray<[string, string, boolean, string, boolean]> = [
    // name, group, unit_hour, unit, internal
    ['Project Management', 'Creative Services', true, 'h', false],
    ['Creative Hours', 'Creative Services', true, 'h', false],
    ['Copywriting', 'Creative Services', true, 'h', false],
    ['Web Development', 'Digital', true, 'h', false],
    ['Video Production', 'Production', false, 'day', false],
    ['Printing', 'Third Party', false, 'un', false],
    ['Photography', 'Third Party', false, 'un', false],
    ['Travel Expenses', 'Third Party', false, 'un', false],
    ['Internal Time', 'Creative Services', true, 'h', true],
  ];
  for (const c of companies) {
    const groups = new Map<string, string>();
    for (const g of ['Creative Services', 'Digital', 'Production', 'Third Party']) {
      const id = rCat.uuid();
      groups.set(g, id);
      add('service_groups', { id, company_id: c.id, name: g, external_id: `SG-${g.slice(0, 3).toUpperCase()}`, ...audit(mkDay(2024, 1, 7), 600, ceo.id) });
    }
    serviceDefs.forEach(([name, g, unitHour, unit, internal], i) => {
      const id = rCat.uuid();
      c.services[name] = id;
      add('services', {
        id,
        company_id: c.id,
        service_group_id: groups.get(g),
        vat_id: c.vat.standard,
        name,
        external_id: `SRV-${String(i + 1).padStart(3, '0')}`,
        is_active: true,
        internal_service: internal,
        department_required: unitHour && !internal,
        unit_hour: unitHour,
        unit,
        default_margin: g === 'Third Party' ? 15 : 35,
        vat_deductible_percentage: name === 'Travel Expenses' ? 50 : 100,
        ...audit(mkDay(2024, 1, 7), 610, ceo.id),
      });
    });
    for (const wt of ['Billable Work', 'Meeting', 'Pitch', 'Training', 'Administrative']) {
      const id = rCat.uuid();
      c.workTypes[wt] = id;
      add('work_types', {
        id,
        company_id: c.id,
        name: wt,
        external_id: `WT-${wt.slice(0, 4).toUpperCase()}`,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 620, ceo.id),
      });
    }
    const supplierCount = 4 + Math.round(scale);
    for (let i = 0; i < supplierCount; i++) {
      const [sname, category] = SUPPLIERS[i % SUPPLIERS.length];
      const id = rCat.uuid();
      c.suppliers.push(id);
      const country = COUNTRIES.find((x) => x.iso === c.countryIso)!;
      add('suppliers', {
        id,
        company_id: c.id,
        department_id: rCat.pick(c.depts).id,
        related_company_id: null,
        related_department_id: null,
        name: i < SUPPLIERS.length ? `${sname} ${country.suffix}` : `${sname} ${Math.floor(i / SUPPLIERS.length) + 1} ${country.suffix}`,
        external_id: `SUP-${String(i + 1).padStart(3, '0')}`,
        category,
        currency_id: c.currencyId,
        vat_id: c.vat.standard,
        payment_condition_id: rCat.pick([c.pay.d30, c.pay.d60]),
        email: `billing@${sname.toLowerCase().replace(/[^a-z]/g, '')}${i}.example.net`,
        remarks: rCat.chance(0.2) ? 'Preferred supplier' : null,
        discount_percentage: rCat.int(0, 10),
        volume_discount_percentage: rCat.int(0, 5),
        other_creditor: false,
        street: `${rCat.int(1, 200)} Industrial Road`,
        street2: null,
        zip_postal: String(rCat.int(1000, 9999)),
        state_province: null,
        city: null,
        city_id: rCat.pick(cityIds.get(c.countryIso)!),
        country_id: countryId.get(c.countryIso),
        tax_payer_number: String(rCat.int(500000000, 599999999)),
        is_active: rCat.chance(0.95),
        ...audit(mkDay(2024, 2, 1), 600 + i, ceo.id),
      });
    }
    for (const [name, template, deliverable] of [
      ['Campaign', 'campaign.docx', false],
      ['Retainer', 'retainer.docx', false],
      ['Internal', null, false],
    ] as const) {
      const id = rCat.uuid();
      c.projectTypes[name] = id;
      add('project_types', {
        id,
        company_id: c.id,
        document_type_id: T.project,
        name,
        template_file_name: template,
        allows_timesheet: true,
        is_deliverable: deliverable,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 630, ceo.id),
      });
    }
    for (const [name, code, billable, isDefault] of [
      ['Billable', 'BIL', true, true],
      ['Non-billable', 'NB', false, false],
      ['Pitch', 'PIT', false, false],
    ] as const) {
      const id = rCat.uuid();
      c.classifications[name] = id;
      add('project_classifications', {
        id,
        company_id: c.id,
        name,
        code,
        is_active: true,
        billable,
        is_default: isDefault,
        ...audit(mkDay(2024, 1, 7), 640, ceo.id),
      });
    }
    for (const [name, code] of [
      ['New Business', 'NEW'],
      ['Recurring', 'REC'],
      ['Internal', 'INT'],
    ] as const) {
      const id = rCat.uuid();
      c.natures[name] = id;
      add('project_natures', { id, company_id: c.id, name, code, is_active: true, ...audit(mkDay(2024, 1, 7), 650, ceo.id) });
    }
    const jobTypeDefs: ReadonlyArray<[string, string, DeptKind | null, string, string, string]> = [
      // name, code, department kind, service, work type, document class
      ['Design', 'DES', 'Creative', 'Creative Hours', 'Billable Work', 'Deliverable'],
      ['Copywriting', 'CPY', 'Creative', 'Copywriting', 'Billable Work', 'Deliverable'],
      ['Video Production', 'VID', 'Digital', 'Video Production', 'Billable Work', 'Deliverable'],
      ['Web Development', 'WEB', 'Digital', 'Web Development', 'Billable Work', 'Deliverable'],
      ['Account Management', 'ACC', 'Accounts', 'Project Management', 'Billable Work', 'Deliverable'],
      ['Internal', 'INT', null, 'Internal Time', 'Administrative', 'Deliverable'],
      ['Creative Request', 'REQ', null, 'Creative Hours', 'Billable Work', 'Request'],
      ['Change Request', 'CHG', null, 'Creative Hours', 'Billable Work', 'Request'],
      ['Fixed Price', 'FP', null, 'Project Management', 'Billable Work', 'Estimate'],
      ['Time & Materials', 'TM', null, 'Project Management', 'Billable Work', 'Estimate'],
      ['Retainer Contract', 'RET', null, 'Project Management', 'Billable Work', 'Contract'],
      ['Framework Agreement', 'FWA', null, 'Project Management', 'Billable Work', 'Contract'],
      // Budget estimates are planning figures: the platform leaves them out of contracted amounts.
      ['Budget', 'BUD', null, 'Project Management', 'Billable Work', 'Estimate'],
    ];
    for (const [name, code, kind, service, workType, cls] of jobTypeDefs) {
      const id = rCat.uuid();
      const dept = kind ? c.depts.find((d) => d.kind === kind)! : null;
      add('job_types', {
        id,
        company_id: c.id,
        department_id: dept?.id ?? null,
        document_type_id: docType(cls),
        business_object_type_id:
          cls === 'Deliverable'
            ? bot.get(code === 'ACC' ? 'Retainer Job' : 'Standard Job')
            : cls === 'Request'
              ? bot.get('Creative Request')
              : cls === 'Estimate'
                ? bot.get('Standard Estimate')
                : bot.get('Standard Contract'),
        workflow_id: wf(cls).id,
        briefing_template_id: cls === 'Deliverable' || cls === 'Request' ? briefing[kind === 'Digital' ? 1 : 0] : null,
        service_id: c.services[service],
        work_type_id: c.workTypes[workType],
        name,
        code,
        duration_days: cls === 'Deliverable' ? rCat.int(5, 30) : null,
        is_active: true,
        is_retainer: code === 'ACC' || code === 'RET',
        plannable: code !== 'INT',
        is_deliverable: cls === 'Deliverable' && code !== 'INT',
        allow_all_job_types: code === 'INT',
        accessible_to_all_departments: dept === null,
        allows_timesheet: cls === 'Deliverable',
        style: { color: `#${hex32(rCat.u32()).slice(0, 6)}`, icon: code.toLowerCase() },
        ...audit(mkDay(2024, 1, 7), 660, ceo.id),
      });
      if (cls === 'Deliverable') c.jobTypes.push({ id, name, kind, serviceId: c.services[service], workTypeId: c.workTypes[workType] });
      else if (cls === 'Request') c.requestTypes.push(id);
      else if (cls === 'Estimate') c.estimateTypes.push(id);
      else c.contractTypes.push(id);
    }
    // Completing a job is restricted to the creative types in the job workflow.
    const complete = wf('Deliverable').transitions.find((t) => t.name === 'Complete');
    if (complete)
      for (const jt of c.jobTypes.filter((j) => j.kind === 'Creative'))
        add('workflow_transition_types', { id: rCat.uuid(), transition_id: complete.id, job_type_id: jt.id });

    // Rate card: one per company, a 2024 and a 2025 column, one row per department x typology group.
    c.rateCardId = rCat.uuid();
    add('rate_cards', {
      id: c.rateCardId,
      company_id: c.id,
      currency_id: c.currencyId,
      name: `Standard Rates ${c.code}`,
      ...audit(mkDay(2024, 1, 7), 670, ceo.id),
    });
    c.rateColumns = { y2024: rCat.uuid(), y2025: rCat.uuid() };
    add('rate_card_columns', {
      id: c.rateColumns.y2024,
      rate_card_id: c.rateCardId,
      name: '2024 Rates',
      is_active: false,
      start_date: ds(mkDay(2024, 1, 1)),
      end_date: ds(mkDay(2024, 12, 31)),
      sort_order: 0,
      ...audit(mkDay(2024, 1, 7), 671, ceo.id),
    });
    add('rate_card_columns', {
      id: c.rateColumns.y2025,
      rate_card_id: c.rateCardId,
      name: '2025 Rates',
      is_active: true,
      start_date: ds(mkDay(2025, 1, 1)),
      end_date: ds(mkDay(2025, 12, 31)),
      sort_order: 1,
      ...audit(mkDay(2024, 12, 1), 671, ceo.id),
    });
    const rateItem = (deptId: string | null, typologyGroupId: string | null, userId: string | null, rate: number): void => {
      const id = rCat.uuid();
      add('rate_card_items', {
        id,
        rate_card_id: c.rateCardId,
        department_id: deptId,
        typology_group_id: typologyGroupId,
        user_id: userId,
        ...audit(mkDay(2024, 1, 7), 672, ceo.id),
      });
      add('rate_card_item_values', {
        id: rCat.uuid(),
        rate_card_item_id: id,
        rate_card_column_id: c.rateColumns.y2024,
        value: round2(rate * 0.95),
        ...audit(mkDay(2024, 1, 7), 673, ceo.id),
      });
      add('rate_card_item_values', {
        id: rCat.uuid(),
        rate_card_item_id: id,
        rate_card_column_id: c.rateColumns.y2025,
        value: rate,
        ...audit(mkDay(2024, 12, 1), 673, ceo.id),
      });
    };
    for (const d of c.depts) {
      const byGroup = new Map<string, number[]>();
      for (const t of d.typologies) byGroup.set(t.groupId, [...(byGroup.get(t.groupId) ?? []), t.sell]);
      for (const [g, sells] of byGroup) {
        const rate = round2(sells.reduce((a, b) => a + b, 0) / sells.length);
        c.rates.set(`${d.id}:${g}`, rate);
        rateItem(d.id, g, null, rate);
      }
      const mgr = deptManager.get(d.id);
      if (mgr && mgr.company === c) rateItem(d.id, mgr.typology.groupId, mgr.id, mgr.typology.sell + 20);
    }
    const lt = (name: string, ext: string, year: number | null, expires: number | null, hourly: boolean): string => {
      const id = rCat.uuid();
      add('leave_types', {
        id,
        company_id: c.id,
        name,
        external_id: ext,
        year,
        expires_on: expires === null ? null : ds(expires),
        is_hourly: hourly,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 680, ceo.id),
      });
      return id;
    };
    c.leaveTypes = {
      vac2024: lt('Vacation 2024', 'VAC24', 2024, mkDay(2025, 3, 31), false),
      vac2025: lt('Vacation 2025', 'VAC25', 2025, mkDay(2026, 3, 31), false),
      sick: lt('Sick Leave', 'SICK', null, null, false),
      medical: lt('Medical Appointment', 'MED', null, null, true),
    };
    for (const [name, vatKey, unit, deductible] of [
      ['Meals', 'reduced', null, 0],
      ['Travel', 'standard', null, 100],
      ['Mileage', 'exempt', 0.36, 0],
      ['Accommodation', 'intermediate', null, 100],
      ['Office Supplies', 'standard', null, 100],
    ] as const) {
      const id = rCat.uuid();
      c.expenseTypes.push({ id, name, vatId: c.vat[vatKey], unit });
      add('expense_types', {
        id,
        company_id: c.id,
        vat_id: c.vat[vatKey],
        name,
        external_id: `EXP-${name.slice(0, 4).toUpperCase()}`,
        vat_deductible_percentage: deductible,
        value: unit,
        // Mileage is kilometres × its rate (the value): the Client API's mileage expenses need the flag.
        is_mileage: name === 'Mileage',
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 690, ceo.id),
      });
    }
  }
  // Intercompany suppliers: the main company buys from the other companies of the group.
  for (const c of extraCompanies) {
    const id = rCat.uuid();
    mainCompany.suppliers.push(id);
    add('suppliers', {
      id,
      company_id: mainCompany.id,
      department_id: accountsDept(mainCompany).id,
      related_company_id: c.id,
      related_department_id: c.depts[0].id,
      name: c.name,
      external_id: `IC-${c.code}`,
      category: 'Intercompany',
      currency_id: c.currencyId,
      vat_id: mainCompany.vat.exempt,
      payment_condition_id: mainCompany.pay.d60,
      email: `finance@${c.domain}`,
      remarks: 'Intercompany',
      discount_percentage: 0,
      volume_discount_percentage: 0,
      other_creditor: true,
      street: null,
      street2: null,
      zip_postal: null,
      state_province: null,
      city: COUNTRIES.find((x) => x.iso === c.countryIso)!.cities[0],
      city_id: null,
      country_id: countryId.get(c.countryIso),
      tax_payer_number: null,
      is_active: true,
      ...audit(mkDay(2024, 2, 1), 700, ceo.id),
    });
  }
}
