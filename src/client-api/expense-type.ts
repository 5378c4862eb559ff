// The Expense and ExpenseItem document types of the Client API, registered like the others so posts'
// Actions.Document create them (and a post's Transition moves a new sheet in the same statement). A sheet
// is written by createDocument: its department's expense workflow comes first, then the default one. An
// item has no workflow and is written by addExpenseItem, whose level and mileage rules apply unchanged.
import { sql } from 'kysely';
import { HttpProblem } from '../platform/errors.ts';
import { ITEM_FIELDS, SHEET_FIELDS } from './expense-fields.ts';
import { ItemModel, SheetModel } from './expense-schemas.ts';
import { addExpenseItem } from './expenses.ts';
import { type DocumentDef, registerDocument, type WriteHookArgs } from './registry.ts';

const roles = { read: 'ExpenseRead', write: 'ExpenseWrite' };

/** The employee defaults to the acting user and the currency to the company's (a new sheet only). */
async function sheetDefaults(a: WriteHookArgs): Promise<void> {
  if (a.before) return;
  const v = a.values;
  v.user_id ??= a.actor.userId;
  if (v.user_id == null) throw new HttpProblem(400, 'EmployeeId is required.', { errors: [{ path: `${a.path}/EmployeeId`, message: 'is required' }] });
  if (v.currency_id == null && typeof v.company_id === 'string') {
    const co = await a.trx.selectFrom('companies').select('currency_id').where('id', '=', v.company_id).executeTakeFirst();
    if (co) v.currency_id = co.currency_id;
  }
}

export const expense: DocumentDef = registerDocument({
  type: 'Expense',
  className: 'Expense',
  aliases: ['ExpenseSheet'],
  table: 'expense_sheets',
  roles,
  numberPrefix: 'EXP',
  departmentColumn: 'department_id',
  fields: SHEET_FIELDS,
  model: SheetModel,
  prepare: sheetDefaults,
  workflow: (values) => sql`(select d.expense_workflow_id from departments d where d.id = ${values.department_id ?? null}::uuid)`,
});

export const expenseItem: DocumentDef = registerDocument({
  type: 'ExpenseItem',
  className: 'ExpenseItem',
  aliases: [],
  table: 'expense_items',
  roles,
  numberPrefix: '',
  fields: ITEM_FIELDS,
  model: ItemModel,
  stageless: true,
  create: async (trx, actor, model, path) => {
    const sheetId = model.ExpenseSheetId;
    if (typeof sheetId !== 'string') {
      throw new HttpProblem(400, 'ExpenseSheetId is required: the sheet the item belongs to.', {
        errors: [{ path: `${path}/ExpenseSheetId`, message: 'is required' }],
      });
    }
    return String((await addExpenseItem(trx, actor, sheetId, model, path)).Id);
  },
});
