// Demo data: expense sheets and their items.
import type { DemoContext } from './context.ts';
import { addMonths, ds, mkDay, NOW, round2 } from './dates.ts';
import type { Agency } from './model.ts';
import type { StageType } from './vocabulary.ts';

export function addExpenses(ctx: DemoContext, a: Pick<Agency, 'wf' | 'users' | 'ceo'>): void {
  const { rngFor, add, audit } = ctx;
  const { wf, users, ceo } = a;
  const rExp = rngFor('expenses');
  const expSeq = new Map<string, number>();
  for (const u of users) {
    for (let quarter = 0; quarter < 4; quarter++) {
      if (!rExp.chance(0.5)) continue;
      const qStart = mkDay(2025, quarter * 3 + 1, 1);
      const qEnd = addMonths(qStart, 3) - 1;
      if (qStart > u.lastDay || qEnd < u.firstDay) continue;
      const c = u.company;
      const seq = (expSeq.get(c.id) ?? 0) + 1;
      expSeq.set(c.id, seq);
      const emission = qEnd + 5;
      const paid = emission < NOW - 40 && rExp.chance(0.9);
      const stage: StageType = paid ? 'Completed' : emission > NOW ? 'Draft' : rExp.chance(0.9) ? 'In Progress' : 'Canceled';
      const id = rExp.uuid();
      const itemCount = rExp.int(1, 4);
      let total = 0;
      const itemRows: Array<Record<string, unknown>> = [];
      for (let k = 0; k < itemCount; k++) {
        const et = rExp.pick(c.expenseTypes);
        const qty = et.unit !== null ? rExp.int(20, 300) : 1;
        const value = et.unit !== null ? round2(qty * et.unit) : rExp.int(10, 400);
        const job = rExp.chance(0.4) ? u.pool.find((j) => !j.internal && j.start <= qEnd && j.end >= qStart) : undefined;
        total += value;
        itemRows.push({
          id: rExp.uuid(),
          expense_sheet_id: id,
          expense_type_id: et.id,
          vat_id: et.vatId,
          project_id: job?.project.id ?? null,
          job_id: job?.id ?? null,
          date: ds(qStart + rExp.int(0, qEnd - qStart)),
          billable: job !== undefined,
          motive: job ? `Client work ${job.project.number}` : rExp.pick(['Team lunch', 'Conference', 'Office supplies', 'Client visit']),
          quantity: qty,
          value_without_vat: value,
          ...audit(emission - 1, 600, u.id),
        });
      }
      add('expense_sheets', {
        id,
        company_id: c.id,
        user_id: u.id,
        currency_id: c.currencyId,
        workflow_id: wf('Expense').id,
        stage_id: wf('Expense').stage[stage],
        number: `EXP-${c.code}-${String(seq).padStart(5, '0')}`,
        external_name: paid ? `ERP-EXP-${c.code}-${seq}` : null,
        external_error: !paid && stage === 'In Progress' && rExp.chance(0.1) ? 'Employee has no ERP account' : null,
        emission_date: ds(emission),
        due_date: ds(emission + 30),
        exchange: 1,
        blocked: rExp.chance(0.05),
        paid,
        paid_value: paid ? round2(total) : 0,
        ...audit(emission - 1, 600, u.id, Math.min(NOW - 1, emission + (paid ? rExp.int(10, 40) : 1)), 700, paid ? ceo.id : u.id),
      });
      for (const row of itemRows) add('expense_items', row);
    }
  }
}
