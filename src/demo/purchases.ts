// Demo data: purchase orders and bills.
import type { DemoContext } from './context.ts';
import { ds, NOW, round2 } from './dates.ts';
import type { Agency } from './model.ts';
import { STAGE_TYPE_NAMES, type StageType } from './vocabulary.ts';

export function addPurchases(
  ctx: DemoContext,
  a: Pick<Agency, 'wf' | 'deptManager' | 'ceo' | 'accountsDept' | 'projects'>,
): Pick<Agency, 'poRows' | 'billRows'> {
  const { n, rngFor, add, audit } = ctx;
  const { wf, deptManager, ceo, accountsDept, projects } = a;
  const rFin = rngFor('finance');
  const poSeq = new Map<string, number>();
  const poRows: Array<{ id: string; stage: StageType; created: number; approverId: string }> = [];
  const poCount = n(30);
  for (let i = 0; i < poCount; i++) {
    const p = rFin.pick(projects);
    const c = p.company;
    const seq = (poSeq.get(c.id) ?? 0) + 1;
    poSeq.set(c.id, seq);
    const date = Math.min(NOW - 2, p.start + rFin.int(0, Math.max(1, p.end - p.start)));
    const stage: StageType = date < NOW - 60 ? (rFin.chance(0.9) ? 'Completed' : 'Canceled') : rFin.chance(0.7) ? 'In Progress' : 'Draft';
    const id = rFin.uuid();
    const items: Array<{ qty: number; unit: number; vat: number }> = [];
    const itemCount = rFin.int(1, 3);
    for (let k = 0; k < itemCount; k++) items.push({ qty: rFin.int(1, 10), unit: rFin.int(5, 200) * 10, vat: 23 });
    const total = items.reduce((a, x) => a + x.qty * x.unit, 0);
    const invoiced = stage === 'Completed' && rFin.chance(0.7);
    const exported = stage !== 'Draft' && rFin.chance(0.7);
    poRows.push({ id, stage, created: date, approverId: deptManager.get(accountsDept(c).id)?.id ?? ceo.id });
    add('purchase_orders', {
      id,
      company_id: c.id,
      department_id: rFin.pick(c.depts).id,
      supplier_id: rFin.pick(c.suppliers),
      commercial_client_id: p.client.id,
      contract_id: p.contractId,
      project_id: p.id,
      estimate_id: p.estimates.length > 0 && rFin.chance(0.7) ? p.estimates[0].id : null,
      currency_id: c.currencyId,
      workflow_id: wf('PurchaseOrder').id,
      stage_id: wf('PurchaseOrder').stage[stage],
      number: `PO-${c.code}-${String(seq).padStart(5, '0')}`,
      date: ds(date),
      delivery_date: ds(date + rFin.int(7, 30)),
      status: STAGE_TYPE_NAMES.indexOf(stage),
      financial_status: invoiced ? 2 : stage === 'Completed' ? 1 : 0,
      invoiced,
      invoiced_value: invoiced ? total : 0,
      controlled_value: invoiced ? total : 0,
      external_id: exported ? `ERP-PO-${c.code}-${seq}` : null,
      external_error: !exported && stage !== 'Draft' && rFin.chance(0.2) ? 'Supplier not found in ERP' : null,
      remarks: rFin.chance(0.2) ? 'Deliver to the studio' : null,
      ...audit(date, 600, p.managerId, Math.min(NOW - 1, date + rFin.int(0, 40)), 700),
    });
    items.forEach((x, k) => {
      add('purchase_order_items', {
        id: rFin.uuid(),
        purchase_order_id: id,
        sort_order: k,
        service_id: c.services[rFin.pick(['Printing', 'Photography', 'Video Production'])],
        estimate_item_detail_id: null,
        description: rFin.pick(['Print run', 'Photo shoot', 'Editing', 'Equipment rental']),
        quantity: x.qty,
        unit_price: x.unit,
        vat_id: c.vat.standard,
        ...audit(date, 610, p.managerId),
      });
    });
  }

  const billSeq = new Map<string, number>();
  const billRows: Array<{ id: string; created: number; by: string }> = [];
  const billCount = n(40);
  const billable = projects.filter((p) => p.billable && p.stage !== 'Draft');
  for (let i = 0; i < billCount && billable.length > 0; i++) {
    const p = rFin.pick(billable);
    const c = p.company;
    const seq = (billSeq.get(c.id) ?? 0) + 1;
    billSeq.set(c.id, seq);
    const date = Math.min(NOW - 1, p.start + rFin.int(15, Math.max(16, p.end - p.start + 15)));
    const pay = rFin.chance(0.7) ? { id: c.pay.d30, days: 30 } : { id: c.pay.d60, days: 60 };
    const due = date + pay.days;
    const items: Array<{ qty: number; unit: number }> = [];
    const itemCount = rFin.int(1, 3);
    for (let k = 0; k < itemCount; k++) items.push({ qty: rFin.int(10, 100), unit: rFin.pick([90, 100, 110, 130, 140]) });
    const net = items.reduce((a, x) => a + x.qty * x.unit, 0);
    const gross = round2(net * 1.23);
    const paid = due < NOW - 5 && rFin.chance(0.85);
    const stage: StageType = paid ? 'Completed' : date > NOW - 5 ? 'Draft' : rFin.chance(0.95) ? 'In Progress' : 'Canceled';
    const id = rFin.uuid();
    const number = `FT ${c.code}/${String(seq).padStart(5, '0')}`;
    billRows.push({ id, created: date, by: p.managerId });
    add('bills', {
      id,
      company_id: c.id,
      department_id: accountsDept(c).id,
      commercial_client_id: p.client.id,
      billing_client_id: p.client.billing.get(c.id)!,
      project_id: p.id,
      contract_id: p.contractId,
      estimate_id: p.estimates[0]?.id ?? null,
      currency_id: c.currencyId,
      payment_condition_id: pay.id,
      workflow_id: wf('Bill').id,
      stage_id: wf('Bill').stage[stage],
      number,
      name: `${p.name} - ${ds(date).slice(0, 7)}`,
      date: ds(date),
      due_date: ds(due),
      management_date: ds(date),
      your_reference: rFin.chance(0.5) ? `CLIENT-PO-${rFin.int(10000, 99999)}` : null,
      paid,
      paid_value: paid ? gross : stage === 'In Progress' && rFin.chance(0.2) ? round2(gross / 2) : 0,
      remarks: rFin.chance(0.2) ? 'Payment by bank transfer' : null,
      external_id: stage === 'Draft' ? null : `ERP-INV-${c.code}-${seq}`,
      external_error: null,
      ...audit(date, 600, p.managerId, Math.min(NOW - 1, paid ? due - rFin.int(0, 10) : date + 1), 700),
    });
    items.forEach((x, k) => {
      add('bill_items', {
        id: rFin.uuid(),
        bill_id: id,
        sort_order: k,
        service_id: c.services[rFin.pick(['Creative Hours', 'Copywriting', 'Web Development', 'Project Management'])],
        estimate_item_id: p.estimates[0]?.items[k] ?? null,
        description: `Services ${ds(date).slice(0, 7)}`,
        quantity: x.qty,
        unit_price: x.unit,
        vat_id: c.vat.standard,
        ...audit(date, 610, p.managerId),
      });
    });
  }
  return { poRows, billRows };
}
