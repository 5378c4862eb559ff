// Expense sheets and their items through the Client API. A sheet's department sets its workflow (the
// department's expense workflow, else the default Expense workflow; its initial stage). An item's type
// decides by its level which document the item is charged to (client, project, job, estimate or product:
// required), and a mileage type makes the value kilometres × rate. Totals come from documentTotals, the
// fragment DE-ExpenseSheets uses.
import { sql } from 'kysely';
import { documentTotals, lineVat } from '../../domain/money.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { requireRead, requireWrite } from '../documents/access.ts';
import { changeDetail, createDocument } from '../documents/documents.ts';
import { columnValues, type Field, viewOf } from '../documents/fields.ts';
import type { DocumentDef, Row } from '../documents/registry.ts';
import { EXPENSE_ROLES, ITEM_FIELDS, LEVELS, SHEET_FIELDS } from './expense-fields.ts';

const GROUPS = ['Advanced', 'Order', 'Refund'];

function refError(err: unknown, fields: readonly Field[], path: string): never {
  const e = err as { code?: string; constraint?: string; table?: string };
  if (e?.code === '23503') {
    const rest = (e.constraint ?? '')
      .replace(`${e.table}_`, '')
      .replace(/_fkey$/, '')
      .replace(/^tenant_id_/, '');
    const f = fields.find((x) => rest.endsWith(x.column));
    const name = f?.name ?? rest;
    throw new HttpProblem(422, `${name} does not match any record.`, { errors: [{ path: `${path}/${name}`, message: 'no such record' }] });
  }
  throw err;
}

/**
 * A new sheet through createDocument (number, its department's workflow and initial stage, folder, history,
 * Created). `sheet` is the Expense document type (expense-type.ts), passed in: that module writes items here.
 */
export async function createExpenseSheet(trx: Trx, actor: Principal, sheet: DocumentDef, model: Row): Promise<Row> {
  const doc = await createDocument(trx, actor, sheet, { model, path: '/body', userFields: null, brief: null });
  return expenseView(trx, actor, doc.id, false);
}

export async function addExpenseItem(trx: Trx, actor: Principal, sheetId: string, model: Row, path = '/body'): Promise<Row> {
  requireWrite(actor, { roles: EXPENSE_ROLES });
  const sheet = await trx.selectFrom('expense_sheets').select(['id', 'user_id']).where('id', '=', sheetId.toLowerCase()).forUpdate().executeTakeFirst();
  if (!sheet) throw notFound(`There is no expense sheet with id ${sheetId}.`);
  if (typeof model.ExpenseSheetId === 'string' && model.ExpenseSheetId.toLowerCase() !== sheet.id) {
    throw new HttpProblem(422, 'ExpenseSheetId differs from the sheet of the path.', {
      errors: [{ path: `${path}/ExpenseSheetId`, message: 'differs from the path' }],
    });
  }
  const group = model.ExpenseItemGroup;
  const groupIndex = typeof group === 'string' ? GROUPS.findIndex((x) => x.toLowerCase() === group.trim().toLowerCase()) : group;
  if (groupIndex === undefined || groupIndex === null || typeof groupIndex !== 'number' || groupIndex < 0 || groupIndex > 2) {
    throw new HttpProblem(400, 'ExpenseItemGroup is required: 0 Advanced, 1 Order or 2 Refund (number or name).', {
      errors: [{ path: `${path}/ExpenseItemGroup`, message: group == null ? 'is required' : 'must be 0, 1, 2 or Advanced, Order, Refund' }],
    });
  }
  const values = columnValues(ITEM_FIELDS, { ...model, ExpenseItemGroup: groupIndex }, path);
  if (values.expense_type_id == null)
    throw new HttpProblem(400, 'ExpenseItemTypeId is required.', { errors: [{ path: `${path}/ExpenseItemTypeId`, message: 'is required' }] });
  const type = await trx
    .selectFrom('expense_types')
    .select(['level', 'is_mileage', 'value', 'vat_id'])
    .where('id', '=', String(values.expense_type_id))
    .executeTakeFirst();
  if (!type)
    throw new HttpProblem(422, 'ExpenseItemTypeId does not match any record.', { errors: [{ path: `${path}/ExpenseItemTypeId`, message: 'no such record' }] });
  const needed = LEVELS[type.level];
  if (needed && values[needed.column] == null) {
    throw new HttpProblem(400, `${needed.name} is required: the item type is charged at ${needed.name.replace(/Id$/, '').toLowerCase()} level.`, {
      errors: [{ path: `${path}/${needed.name}`, message: 'is required by the item type’s level' }],
      extra: { level: type.level },
    });
  }
  if (type.is_mileage) {
    const rate = values.kilometers_value ?? (type.value === null ? null : Number(type.value));
    if (values.kilometers == null || rate == null) {
      throw new HttpProblem(400, 'A mileage item needs Kilometers (and KilometersValue when its type has no rate).', {
        errors: [{ path: `${path}/${values.kilometers == null ? 'Kilometers' : 'KilometersValue'}`, message: 'is required for mileage' }],
      });
    }
    values.kilometers_value = rate;
    values.value_without_vat = Math.round(Number(values.kilometers) * Number(rate) * 100) / 100;
  } else if (values.value_without_vat == null) {
    throw new HttpProblem(400, 'ValueWithoutVat is required.', { errors: [{ path: `${path}/ValueWithoutVat`, message: 'is required' }] });
  }
  values.vat_id ??= type.vat_id;
  values.date ??= typeof values.start_on === 'string' ? values.start_on.slice(0, 10) : new Date().toISOString().slice(0, 10);
  const columns = Object.keys(values);
  const { rows } = await sql<{ id: string }>`
    insert into expense_items (tenant_id, expense_sheet_id, created_by_id, modified_by_id, ${sql.join(columns.map((c) => sql.id(c)))})
    values (${actor.tenantId}, ${sheet.id}, ${actor.userId}, ${actor.userId}, ${sql.join(columns.map((c) => sql`${values[c]}`))}) returning id`
    .execute(trx)
    .catch((err: unknown) => refError(err, ITEM_FIELDS, path));
  const id = rows[0].id;
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Created',
    documentType: 'ExpenseItem',
    documentId: id,
    detail: { Id: id, ExpenseSheetId: sheet.id, ...changeDetail(ITEM_FIELDS, values) },
    userId: actor.userId,
  });
  return {
    Id: id,
    ExpenseSheetId: sheet.id,
    ...viewOf(ITEM_FIELDS, (await sql<{ r: Row }>`select to_jsonb(i) as r from expense_items i where id = ${id}`.execute(trx)).rows[0].r),
  };
}

/** The sheet with its items and totals (net, VAT, with VAT) by the rule of DE-ExpenseSheets. */
export async function expenseView(trx: Trx, actor: Principal, id: string, check = true): Promise<Row> {
  if (check) requireRead(actor, { roles: EXPENSE_ROLES });
  const { rows } = await sql<{ row: Row; net: string | null; vat: string | null; stage: string | null; items: Row[] }>`
    select to_jsonb(es) as row, t.net, t.vat, s.name as stage,
           coalesce((select jsonb_agg(to_jsonb(i) || jsonb_build_object('vat', ${lineVat(sql`i.value_without_vat`, sql`v.percentage`)}) order by i.created_on_utc, i.id)
                       from expense_items i left join vats v on v.tenant_id = i.tenant_id and v.id = i.vat_id where i.expense_sheet_id = es.id), '[]') as items
      from expense_sheets es
      left join workflow_stages s on s.tenant_id = es.tenant_id and s.id = es.stage_id
      ${documentTotals('expense_items', 'expense_sheet_id', 'es.id', sql`li.value_without_vat`)}
     where es.id = ${id.toLowerCase()}`.execute(trx);
  const found = rows[0];
  if (!found) throw notFound(`There is no expense sheet with id ${id}.`);
  const net = Number(found.net ?? 0);
  const vat = Number(found.vat ?? 0);
  return {
    Id: found.row.id,
    Number: found.row.number,
    ...viewOf(SHEET_FIELDS, found.row),
    WorkflowId: found.row.workflow_id ?? null,
    StageId: found.row.stage_id ?? null,
    Stage: found.stage,
    Items: found.items.map((i) => ({ Id: i.id, ...viewOf(ITEM_FIELDS, i), VatValue: Number(i.vat ?? 0) })),
    ValueWithoutVat: net,
    VatValue: vat,
    ValueWithVat: Math.round((net + vat) * 100) / 100,
  };
}
