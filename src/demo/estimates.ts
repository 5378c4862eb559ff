// Demo data: estimates (items, quote lines, monthly split, billing conditions) and planned time.
import type { DemoContext } from './context.ts';
import { addMonths, ds, monthStart, NOW, round2, YEAR_START } from './dates.ts';
import type { Agency, ClientE, Company, Project } from './model.ts';
import { type StageType, THINGS, TO_EUR } from './vocabulary.ts';

export function addEstimates(
  ctx: DemoContext,
  a: Pick<Agency, 'currencyId' | 'wf' | 'deptManager' | 'ceo' | 'staffOfDept' | 'accountsDept' | 'contracts' | 'projects' | 'assign'>,
): Pick<Agency, 'estimateRows'> {
  const { rngFor, add, audit, T } = ctx;
  const { currencyId, wf, deptManager, ceo, staffOfDept, accountsDept, contracts, projects, assign } = a;
  const rEst = rngFor('estimates');
  let estimateSeq = 0;
  const estimateRows: Array<{ id: string; stage: StageType; created: number; by: string; approverId: string }> = [];
  const makeEstimate = (
    company: Company,
    cl: ClientE,
    p: Project | null,
    contractId: string | null,
    start: number,
    end: number,
    stage: StageType,
    by: string,
  ): void => {
    estimateSeq++;
    const id = rEst.uuid();
    const dept = accountsDept(company);
    const foreign = rEst.chance(0.1);
    const currency = foreign ? (company.currency === 'USD' ? 'EUR' : 'USD') : company.currency;
    const exchange = round2((TO_EUR[currency] / TO_EUR[company.currency]) * 10000) / 10000;
    const product = p ? (p.productId ? { id: p.productId, brandId: p.brandId } : null) : rEst.pick(cl.products);
    const date = start - rEst.int(10, 30);
    estimateRows.push({ id, stage, created: date, by, approverId: deptManager.get(dept.id)?.id ?? ceo.id });
    add('estimates', {
      id,
      department_id: dept.id,
      commercial_client_id: cl.id,
      brand_id: product?.brandId ?? p?.brandId ?? null,
      product_id: product?.id ?? null,
      contract_id: contractId,
      project_id: p?.id ?? null,
      type_id: rEst.pick(company.estimateTypes),
      currency_id: currencyId.get(currency),
      exchange,
      rate_card_id: company.rateCardId,
      rate_card_column_id: company.rateColumns.y2025,
      workflow_id: wf('Estimate').id,
      stage_id: wf('Estimate').stage[stage],
      number: `EST-${String(estimateSeq).padStart(5, '0')}`,
      name: p ? `Estimate ${p.name}` : `Estimate ${cl.name} retainer`,
      date: ds(date),
      expiration_date: ds(date + 30),
      tags: rEst.chance(0.3) ? [{ label: rEst.pick(['Priority', 'Revised', 'Framework']) }] : null,
      ...audit(date, 600, by, Math.min(NOW - 1, date + rEst.int(1, 25)), 700),
    });
    assign(T.estimate, id, 'Account Manager', by, date, by);
    const est = { id, deptId: dept.id, items: [] as string[] };
    p?.estimates.push(est);
    const months: number[] = [];
    for (let m = monthStart(start); m <= end && months.length < 6; m = addMonths(m, 1)) months.push(m);
    const itemCount = rEst.int(2, 4);
    let billingTotal = 0;
    for (let it = 0; it < itemCount; it++) {
      const itemId = rEst.uuid();
      est.items.push(itemId);
      const serviceName = rEst.pick(['Creative Hours', 'Copywriting', 'Web Development', 'Project Management', 'Video Production']);
      add('estimate_items', {
        id: itemId,
        estimate_id: id,
        sort_order: it,
        name: `${serviceName} - ${rEst.pick(THINGS)}`,
        description: rEst.chance(0.5) ? 'As per brief and agreed scope.' : null,
        service_id: company.services[serviceName],
        vat_id: company.vat.standard,
        is_retainer: contractId !== null && it === 0,
        quantity: 1,
        client_direct_value: rEst.chance(0.1) ? rEst.int(5, 50) * 100 : 0,
        ...audit(date, 610, by),
      });
      const detailCount = rEst.int(1, 3);
      for (let k = 0; k < detailCount; k++) {
        const detailId = rEst.uuid();
        const kind = rEst.next();
        const type = kind < 0.7 ? 0 : kind < 0.9 ? 1 : 2;
        let qtyCost: number;
        let unitCost: number;
        let qtyIncome: number;
        let unitIncome: number;
        let tableRate: number | null = null;
        let commission = 0;
        let deptId: string | null = null;
        let groupIdOf: string | null = null;
        let userId: string | null = null;
        let supplierId: string | null = null;
        let service: string;
        if (type === 0) {
          const d = rEst.pick(company.depts.filter((x) => x.kind !== 'General'));
          const t = rEst.pick(d.typologies);
          const u = rEst.chance(0.5) ? rEst.pick(staffOfDept(d)) : null;
          deptId = d.id;
          groupIdOf = t.groupId;
          userId = u?.id ?? null;
          qtyCost = rEst.int(8, 120);
          qtyIncome = qtyCost;
          unitCost = u ? u.hourly2025H1 : round2(t.sell * 0.4);
          tableRate = company.rates.get(`${d.id}:${t.groupId}`) ?? t.sell;
          unitIncome = rEst.chance(0.8) ? tableRate : round2(tableRate * 0.9);
          service = serviceName;
        } else if (type === 1) {
          supplierId = rEst.pick(company.suppliers);
          qtyCost = rEst.int(1, 5);
          qtyIncome = qtyCost;
          unitCost = rEst.int(5, 50) * 100;
          unitIncome = round2(unitCost * 1.2);
          commission = round2(qtyCost * unitCost * 0.05);
          service = rEst.pick(['Printing', 'Photography', 'Video Production']);
        } else {
          qtyCost = rEst.int(1, 5);
          qtyIncome = qtyCost;
          unitCost = rEst.int(50, 300);
          unitIncome = unitCost;
          service = 'Travel Expenses';
        }
        const discountIncome = rEst.chance(0.1) ? round2(qtyIncome * unitIncome * 0.05) : 0;
        add('estimate_item_details', {
          id: detailId,
          estimate_item_id: itemId,
          detail_type: type,
          description: type === 0 ? 'Team hours' : type === 1 ? 'Third-party production' : 'Travel and logistics',
          supplier_id: supplierId,
          service_id: company.services[service],
          department_id: deptId,
          typology_group_id: groupIdOf,
          user_id: userId,
          vat_id: type === 0 ? null : company.vat.standard,
          quantity_cost: qtyCost,
          unit_price_cost: unitCost,
          discount_cost: 0,
          quantity_income: qtyIncome,
          unit_price_income: unitIncome,
          discount_income: discountIncome,
          agency_commission_value: commission,
          table_rate: tableRate,
          ...audit(date, 620, by),
        });
        const cost = round2(qtyCost * unitCost);
        const income = round2(qtyIncome * unitIncome - discountIncome + commission);
        billingTotal += income;
        // Split over up to 4 consecutive months of the project; the last month takes the rounding rest.
        const k0 = rEst.int(0, Math.max(0, months.length - 1));
        const span = months.slice(k0, k0 + rEst.int(1, 4));
        let hoursLeft = type === 0 ? qtyCost : 0;
        let costLeft = cost;
        let incomeLeft = income;
        span.forEach((m, idx) => {
          const last = idx === span.length - 1;
          const share = 1 / span.length;
          const h = last ? hoursLeft : Math.round((type === 0 ? qtyCost : 0) * share * 4) / 4;
          const cst = last ? round2(costLeft) : round2(cost * share);
          const inc = last ? round2(incomeLeft) : round2(income * share);
          hoursLeft -= h;
          costLeft -= cst;
          incomeLeft -= inc;
          add('estimate_item_detail_months', {
            id: rEst.uuid(),
            estimate_item_detail_id: detailId,
            month: ds(m),
            hours: round2(h),
            cost: cst,
            income: inc,
            ...audit(date, 630, by),
          });
          if (p && type === 0 && deptId) {
            const d = company.depts.find((x) => x.id === deptId)!;
            add('project_planned_times', {
              id: rEst.uuid(),
              project_id: p.id,
              department_id: deptId,
              typology_group_id: groupIdOf,
              user_id: userId ?? rEst.pick(staffOfDept(d)).id,
              estimate_item_detail_id: detailId,
              month: ds(m),
              planned_hours: Math.round(h * (0.8 + rEst.next() * 0.4) * 4) / 4,
              actual_sell_rate: unitIncome,
              contracted_sell_rate: unitIncome,
              rate_card_sell_rate: tableRate,
              comments: rEst.chance(0.1) ? 'Adjusted after kick-off' : null,
              description: 'Team hours',
              ...audit(m, 600, p.managerId),
            });
          }
        });
      }
    }
    const billingId = cl.billing.get(company.id) ?? cl.billing.values().next().value!;
    const fixed = rEst.chance(0.6);
    const parts = fixed ? [50, 50] : [100];
    parts.forEach((pct, k) => {
      add('estimate_billing_conditions', {
        id: rEst.uuid(),
        estimate_id: id,
        billing_client_id: billingId,
        payment_condition_id: company.pay.d30,
        condition_type: fixed ? 0 : 1,
        frequency: fixed ? 0 : 2,
        amount_type: fixed ? 0 : 1,
        percentage: fixed ? pct : null,
        value: fixed ? round2((billingTotal * pct) / 100) : round2(billingTotal / Math.max(1, months.length)),
        your_reference: rEst.chance(0.5) ? `PO-${cl.name.slice(0, 3).toUpperCase()}-${rEst.int(1000, 9999)}` : null,
        date: ds(k === 0 ? start : end),
        day_of_month: fixed ? null : 25,
        day_of_week: null,
        ...audit(date, 640, by),
      });
    });
  };
  for (const p of projects) {
    const stage: StageType = p.stage === 'Draft' ? 'Draft' : p.stage === 'Canceled' ? 'Canceled' : rEst.chance(0.8) ? 'Completed' : 'In Progress';
    makeEstimate(p.company, p.client, p, p.contractId, p.start, p.end, stage, p.managerId);
    if (rEst.chance(0.15)) makeEstimate(p.company, p.client, p, p.contractId, p.start, p.end, rEst.chance(0.5) ? 'Draft' : 'In Progress', p.managerId);
  }
  for (const ct of contracts) {
    if (rEst.chance(0.5))
      makeEstimate(ct.company, ct.client, null, ct.id, YEAR_START + rEst.int(0, 90), YEAR_START + rEst.int(180, 360), 'Completed', ct.client.managerId);
  }
  return { estimateRows };
}
