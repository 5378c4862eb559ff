// Client API routes for estimates beyond the v3 create / read / PATCH (routes.ts): the items, the quote
// lines of an item on its three sides, and the billing conditions. HTTP only; every write takes Idempotency-Key.
import { Type } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { App } from '../../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../../platform/http/idempotency.ts';
import { Guid } from '../../platform/http/schemas.ts';
import { estimateTotals } from './estimate-contents.ts';
import { addDetail, DETAIL_SIDES, type DetailSide, putBillingConditions } from './estimate-details.ts';
import { putItems } from './estimate-items.ts';
import {
  BillingCondition,
  BillingConditionsBody,
  EstimateDetailAnswer,
  EstimateDetailBody,
  EstimateItemsAnswer,
  EstimateItemsBody,
} from './estimate-schemas.ts';

const tags = ['Client API'];
const answer = (view: unknown): never => view as never;

export async function estimateRoutes(app: App, ctx: AppContext): Promise<void> {
  app.put(
    '/api/estimates/:id/items',
    {
      config: { roles: ['EstimateWrite'] },
      schema: {
        tags,
        operationId: 'estimates_putItems',
        summary: 'Replace the items of an estimate',
        description:
          'The items sent become the estimate’s, in order: one with Id (an item of this estimate) is changed and keeps its details, one without is added, ' +
          'the others are removed. Each item’s quantities and unit prices are its own quote line. Answers the items’ ids in the order sent and the ' +
          'estimate’s new totals (GET /api/v3/estimates/{id} has each item’s details and amounts). Needs EstimateWrite. Event: Updated on Estimate (Items).',
        headers: IdempotencyHeaders,
        params: Type.Object({ id: Guid }),
        body: EstimateItemsBody,
        response: { 200: EstimateItemsAnswer },
      },
    },
    idempotent(ctx, async (request) =>
      answer(
        await request.writeTenant(async (trx: Trx, actor: Principal) => {
          const items = await putItems(trx, actor, request.params.id, request.body);
          return { Id: request.params.id.toLowerCase(), Items: items, Totals: await estimateTotals(trx, request.params.id.toLowerCase()) };
        }),
      ),
    ),
  );

  for (const side of Object.keys(DETAIL_SIDES) as DetailSide[]) {
    app.post(
      `/api/estimates/details/${side}`,
      {
        config: { roles: ['EstimateWrite'] },
        schema: {
          tags,
          operationId: `estimates_add${side}`,
          summary: `Add a ${side === 'resources' ? 'resource' : side === 'thirdparty' ? 'third-party' : 'expense'} quote line to an estimate item`,
          description:
            side === 'resources'
              ? 'A user, typology, typology group or department with Hours; without UnitPriceIncome the rate is the estimate rate card column’s (user, else typology group, else department). Needs EstimateWrite.'
              : 'Quantities and unit prices on the income and cost sides. Needs EstimateWrite.',
          headers: IdempotencyHeaders,
          body: EstimateDetailBody,
          response: { 201: EstimateDetailAnswer },
        },
      },
      idempotent(ctx, async (request, reply) => {
        const created = await request.writeTenant((trx: Trx, actor: Principal) => addDetail(trx, actor, side, request.body));
        reply.code(201);
        return answer(created);
      }),
    );
  }

  app.post(
    '/api/billing-conditions',
    {
      config: { roles: ['EstimateWrite'] },
      schema: {
        tags,
        operationId: 'billingConditions_put',
        summary: 'Set the billing conditions of an estimate',
        description:
          'One condition or a list, all of one estimate; they replace its conditions and must add up to its income without VAT, to the cent ' +
          '(AmountType 0: Percentage of it, 1: Value): 422 with expected and reached otherwise. Needs EstimateWrite.',
        headers: IdempotencyHeaders,
        body: BillingConditionsBody,
        response: { 201: Type.Array(BillingCondition) },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const body = request.body;
      const list = Array.isArray(body) ? body : [body];
      const created = await request.writeTenant((trx: Trx, actor: Principal) => putBillingConditions(trx, actor, list));
      reply.code(201);
      return answer(created);
    }),
  );
}
