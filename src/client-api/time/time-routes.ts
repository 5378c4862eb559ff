// Client API routes for time: timesheet entries and leaves (v3 create envelope, value-wrapped PATCH,
// DELETE). HTTP only, over time.ts; every write takes Idempotency-Key.
import { Type } from 'typebox';
import { nullable } from '../../domain/fields.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { App } from '../../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../../platform/http/idempotency.ts';
import { named } from '../../platform/http/openapi.ts';
import { Guid, unwrap } from '../../platform/http/schemas.ts';
import { type Envelope, envelopeSchema, openEnvelope, wrapped } from '../documents/envelope.ts';
import { fieldSchema, modelProperties, viewProperties } from '../documents/fields.ts';
import type { Row } from '../documents/registry.ts';
import { createTime, deleteTime, leave, patchTime, type TimeDef, timesheet } from './time.ts';

const tags = ['Client API'];
const answer = (view: unknown): never => view as never;

export async function timeRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const [def, plural, model] of [
    [timesheet, 'timesheets', 'Timesheet'],
    [leave, 'leaves', 'Leave'],
  ] as [TimeDef, string, string][]) {
    const view = named(
      model,
      Type.Object({ Id: Type.String({ format: 'uuid' }), ...viewProperties(def.fields), DeletedOn: nullable(Type.String({ format: 'date-time' })) }),
    );
    const body = named(`${model}Model`, Type.Object(modelProperties(def.fields), { additionalProperties: false }));
    const events = `Events: Created / Updated / Deleted and TimeUpdated on ${def.documentType}, with the changed properties and PropertyTypes.`;
    app.post(
      `/api/v3/${plural}`,
      {
        config: { roles: ['TimeWrite'] },
        schema: {
          tags,
          operationId: `${plural}_create`,
          summary: `Create ${plural} (Create or CreateMany envelope)`,
          description: `Another user’s time needs Administrator. CreateMany: all or none, the failing item named by its path. ${events}`,
          headers: IdempotencyHeaders,
          body: named(`${model}CreateBody`, envelopeSchema(body)),
          response: { 201: Type.Union([view, Type.Array(view)]) },
        },
      },
      idempotent(ctx, async (request, reply) => {
        const opened = openEnvelope(request.body as Envelope, ['Create', 'CreateMany']);
        const out = await request.writeTenant(async (trx: Trx, actor: Principal) => {
          const rows: Row[] = [];
          for (const item of opened.items) rows.push(await createTime(trx, actor, def, item.model, item.path));
          return rows;
        });
        reply.code(201);
        return answer(opened.operation === 'CreateMany' ? out : out[0]);
      }),
    );
    app.patch(
      `/api/${plural}/:id`,
      {
        config: { roles: ['TimeWrite'] },
        schema: {
          tags,
          operationId: `${plural}_patch`,
          summary: `Change a ${def.label}`,
          description: `Value-wrapped properties; only those sent change. ${events}`,
          headers: IdempotencyHeaders,
          params: Type.Object({ id: Guid }),
          body: named(
            `${model}PatchBody`,
            Type.Object(Object.fromEntries(def.fields.map((f) => [f.name, Type.Optional(wrapped(fieldSchema(f)))])), { additionalProperties: false }),
          ),
          response: { 200: view },
        },
      },
      idempotent(ctx, async (request) =>
        answer(
          await request.writeTenant((trx: Trx, actor: Principal) =>
            patchTime(trx, actor, def, request.params.id, unwrap(request.body as Record<string, { value: unknown }>)),
          ),
        ),
      ),
    );
    app.delete(
      `/api/${plural}/:id`,
      {
        config: { roles: ['TimeWrite'] },
        schema: {
          tags,
          operationId: `${plural}_delete`,
          summary: `Delete a ${def.label}`,
          description: `It then shows in DE-${plural === 'timesheets' ? 'TimeSheets' : 'Leaves'}Deleted. ${events}`,
          params: Type.Object({ id: Guid }),
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await request.writeTenant((trx: Trx, actor: Principal) => deleteTime(trx, actor, def, request.params.id));
        reply.code(204);
        return answer(null);
      },
    );
  }
}
