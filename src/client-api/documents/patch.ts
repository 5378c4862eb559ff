// The value-wrapped PATCH of a document (each property sent as {"value": …}; only those sent change), one
// handler for every type that has one: the v3 documents and expense sheets differ only in their answer.
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { FastifyRequest } from '../../platform/http/app.ts';
import { idempotent } from '../../platform/http/idempotency.ts';
import { unwrap } from '../../platform/http/schemas.ts';
import { documentInput } from './document-input.ts';
import { updateDocument } from './documents.ts';
import type { DocumentDef } from './registry.ts';

type PatchRequest = FastifyRequest<{ Params: { id: string }; Body: Record<string, { value: unknown } | undefined> }>;

/** Updates the document `def` of the request's id through updateDocument, and answers `view` of it. */
export function patchHandler(ctx: AppContext, def: DocumentDef, view: (trx: Trx, actor: Principal, id: string) => Promise<unknown>) {
  return idempotent(ctx, async (request: PatchRequest): Promise<never> => {
    const values = unwrap(request.body);
    return (await request.writeTenant(async (trx: Trx, actor: Principal) => {
      const doc = await updateDocument(trx, actor, def, request.params.id, documentInput(values, '/body'));
      return view(trx, actor, doc.id);
    })) as never;
  });
}
