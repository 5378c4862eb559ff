// The Expense and ExpenseItem document types of the Client API, listed with the others (../document-type-list.ts) so posts'
// Actions.Document create them (and a post's Transition moves a new sheet in the same statement). A sheet
// is written by createDocument: its department's expense workflow comes first, then the default one. An
// item has no workflow and is written by addExpenseItem, whose level and mileage rules apply unchanged.
import { sql } from 'kysely';
import { HttpProblem } from '../../platform/errors.ts';
import { defineDocument, type WriteHookArgs } from '../documents/registry.ts';
import { EXPENSE_ROLES, ITEM_FIELDS, SHEET_FIELDS } from './expense-fields.ts';
import { ItemModel, SheetModel } from './expense-schemas.ts';
import { addExpenseItem } from './expenses.ts';

/**
 * EmployeeId names an employee (DE-Employees' EmployeeId, the platform's Employee entity): the sheet is
 * the expenses of the login that employee backs (active first, then by name, as DE-Employees shows it).
 * A user's id is accepted too, as Atrium read it before; an id that is both an employee's and a user's is
 * taken as the employee's (docs/client-api.md).
 */
async function employeeUser(a: WriteHookArgs, id: string): Promise<string> {
  const { rows } = await sql<{ employee: boolean; user_id: string | null }>`
    select true as employee,
           (select u.id from users u where u.tenant_id = e.tenant_id and u.employee_id = e.id order by u.is_active desc, u.name, u.id limit 1) as user_id
      from employees e where e.id = ${id}
    union all
    select false, u.id from users u where u.id = ${id}`.execute(a.trx);
  const employee = rows.find((r) => r.employee);
  const path = `${a.path}/EmployeeId`;
  if (employee) {
    if (employee.user_id) return employee.user_id;
    throw new HttpProblem(422, `Employee ${id} has no user: a sheet is a user's expenses.`, { errors: [{ path, message: 'the employee has no user' }] });
  }
  const user = rows.find((r) => !r.employee);
  if (user?.user_id) return user.user_id;
  throw new HttpProblem(422, `EmployeeId "${id}" does not match any employee or user.`, { errors: [{ path, message: 'does not match any record' }] });
}

/** The employee defaults to the acting user and the currency to the company's (a new sheet only). */
async function sheetDefaults(a: WriteHookArgs): Promise<void> {
  const v = a.values;
  if (typeof v.user_id === 'string') v.user_id = await employeeUser(a, v.user_id.toLowerCase());
  if (a.before) return;
  v.user_id ??= a.actor.userId;
  if (v.user_id == null) throw new HttpProblem(400, 'EmployeeId is required.', { errors: [{ path: `${a.path}/EmployeeId`, message: 'is required' }] });
  if (v.currency_id == null && typeof v.company_id === 'string') {
    const co = await a.trx.selectFrom('companies').select('currency_id').where('id', '=', v.company_id).executeTakeFirst();
    if (co) v.currency_id = co.currency_id;
  }
}

export const expense = defineDocument({
  type: 'Expense',
  className: 'Expense',
  aliases: ['ExpenseSheet'],
  table: 'expense_sheets',
  roles: EXPENSE_ROLES,
  numberPrefix: 'EXP',
  departmentColumn: 'department_id',
  fields: SHEET_FIELDS,
  model: SheetModel,
  prepare: sheetDefaults,
  workflow: (values) => sql`(select d.expense_workflow_id from departments d where d.id = ${values.department_id ?? null}::uuid)`,
});

export const expenseItem = defineDocument({
  type: 'ExpenseItem',
  className: 'ExpenseItem',
  aliases: [],
  table: 'expense_items',
  roles: EXPENSE_ROLES,
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
