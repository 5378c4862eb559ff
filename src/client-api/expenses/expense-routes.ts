// Client API routes for expense sheets and their items: HTTP only, over expenses.ts. Writes take Idempotency-Key.
import { Type } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { App } from '../../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../../platform/http/idempotency.ts';
import { Guid } from '../../platform/http/schemas.ts';
import { patchHandler } from '../documents/patch.ts';
import type { Row } from '../documents/registry.ts';
import { DOCUMENT_READ_ONLY, documentPatch } from '../documents/schemas.ts';
import { Item, ItemModel, Sheet, SheetModel } from './expense-schemas.ts';
import { expense } from './expense-type.ts';
import { addExpenseItem, createExpenseSheet, expenseView } from './expenses.ts';

const tags = ['Client API'];
const answer = (view: unknown): never => view as never;

export async function expenseRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/expenses',
    {
      config: { roles: ['ExpenseWrite'] },
      schema: {
        tags,
        operationId: 'expenses_create',
        summary: 'Create an expense sheet',
        description:
          'Its department’s expense workflow (else the default Expense workflow) is its workflow; it starts in the initial stage. Needs ExpenseWrite. Event: Created on Expense.',
        headers: IdempotencyHeaders,
        body: SheetModel,
        response: { 201: Sheet },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const sheet = await request.writeTenant((trx: Trx, actor: Principal) => createExpenseSheet(trx, actor, expense, request.body as Row));
      reply.code(201);
      return answer(sheet);
    }),
  );
  app.post(
    '/api/expenses/:ExpenseSheetId/items',
    {
      config: { roles: ['ExpenseWrite'] },
      schema: {
        tags,
        operationId: 'expenses_addItem',
        summary: 'Add an item to an expense sheet',
        description:
          'The item type’s level makes ClientId, ProjectId, DeliverableId, EstimateId or ProductId required (400 naming it); a mileage type values the item at Kilometers × KilometersValue (default the type’s rate). Needs ExpenseWrite. Event: Created on ExpenseItem.',
        headers: IdempotencyHeaders,
        params: Type.Object({ ExpenseSheetId: Guid }),
        body: ItemModel,
        response: { 201: Item },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const item = await request.writeTenant((trx: Trx, actor: Principal) => addExpenseItem(trx, actor, request.params.ExpenseSheetId, request.body as Row));
      reply.code(201);
      return answer(item);
    }),
  );
  app.patch(
    '/api/expenses/:id',
    {
      config: {
        readOnly: {
          ...DOCUMENT_READ_ONLY,
          Number: 'given from a sequence when the sheet is created',
          Items: 'added by POST /api/expenses/{ExpenseSheetId}/items',
          ValueWithoutVat: 'the sum of the items',
          VatValue: 'the sum of the items',
          ValueWithVat: 'the sum of the items',
        },
      },
      schema: {
        tags,
        operationId: 'expenses_patch',
        summary: 'Change some properties of an expense sheet',
        description:
          'Each property is sent as {"value": …}; only those sent change. EmployeeId takes an employee’s id (or a user’s). Needs ExpenseWrite and, in a stage with write teams, membership of one. Event: Updated on Expense.',
        headers: IdempotencyHeaders,
        params: Type.Object({ id: Guid }),
        body: documentPatch(expense),
        response: { 200: Sheet },
      },
    },
    patchHandler(ctx, expense, (trx, actor, id) => expenseView(trx, actor, id)),
  );
  app.get(
    '/api/v3/expenses/:id',
    {
      config: { roles: ['ExpenseRead', 'ExpenseWrite'] },
      schema: {
        tags,
        operationId: 'expenses_get',
        summary: 'Read an expense sheet with its items and totals',
        description: 'Needs ExpenseRead or ExpenseWrite.',
        params: Type.Object({ id: Guid }),
        response: { 200: Sheet },
      },
    },
    async (request) => answer(await request.readTenant((trx, actor) => expenseView(trx, actor, request.params.id))),
  );
}
