// POST /api/documentBriefs: the actor's rights on the document (its type's Write role and stage, or the
// Administrator for a type outside the registry) before briefs.ts adds the version. Apart from briefs.ts
// because it loads the document, and documents.ts adds a brief when a document is created with one.
import { sql } from 'kysely';
import { hasRole, type Principal } from '../../platform/auth/principal.ts';
import { ADMINISTRATOR } from '../../platform/auth/roles.ts';
import type { Trx } from '../../platform/db/database.ts';
import { forbidden, notFound } from '../../platform/errors.ts';
import { requireStageWrite, requireWrite } from '../documents/access.ts';
import { loadDocument } from '../documents/documents.ts';
import type { Row } from '../documents/registry.ts';
import { addBrief, type BriefInput, type BriefTarget } from './briefs.ts';

/** POST /api/documentBriefs: checks the actor's rights on the document and adds the version. */
export async function postBrief(trx: Trx, actor: Principal, target: BriefTarget, documentId: string, brief: BriefInput): Promise<Row> {
  if ('def' in target) {
    requireWrite(actor, target.def);
    const doc = await loadDocument(trx, target.def, documentId);
    await requireStageWrite(trx, actor, doc.id, doc.stage);
    return addBrief(trx, actor, target.def, doc.id, brief);
  }
  if (!hasRole(actor, ADMINISTRATOR)) throw forbidden(ADMINISTRATOR);
  const id = documentId.toLowerCase();
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from ${sql.table(target.table)} where id = ${id}) as found`.execute(trx);
  if (!rows[0].found) throw notFound(`There is no ${target.className} with id ${documentId}.`);
  return addBrief(trx, actor, { type: target.className, className: target.className }, id, brief);
}
