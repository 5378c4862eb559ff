// Document teams (assignments): POST /api/assignments/batch adds members by team name and removes them by
// team id, all in one transaction; adding someone already on the team changes nothing and is no error.
// Each real change raises TeamAdded / TeamRemoved on the document's type; DE-Assignments reads the rows.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { requireStageWrite, requireWrite } from '../documents/access.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import { loadDocument } from '../documents/documents.ts';
import type { DocumentDef, DocumentTypes, Row } from '../documents/registry.ts';

export interface AssignmentPost {
  User: string;
  DocumentType: string;
  DocumentOid: string;
  AssignmentType: string;
  Workload?: number | null;
  Priority?: number | null;
}

export interface AssignmentDelete {
  User: string;
  DocumentId: string;
  AssignmentTypeId: string;
}

const detail = (userId: string, teamId: string, team: string, documentId: string): Row => ({
  UserId: userId,
  TeamId: teamId,
  Team: team,
  DocumentId: documentId,
  PropertyTypes: { UserId: 'Guid', TeamId: 'Guid', Team: 'String', DocumentId: 'Guid' },
});

/** Puts a user on a document's team; false when already there. */
export async function addMember(
  trx: Trx,
  actor: Principal,
  def: DocumentDef,
  documentId: string,
  team: { id: string; name: string },
  userId: string,
  path: string,
): Promise<{ id: string; added: boolean }> {
  const dt = await documentTypeId(trx, actor.tenantId, def.className);
  let rows: { id: string; added: boolean }[];
  try {
    ({ rows } = await sql<{ id: string; added: boolean }>`
      with ins as (
        insert into assignments (tenant_id, document_type_id, document_id, team_id, user_id, created_by_id, modified_by_id)
        values (${actor.tenantId}, ${dt}, ${documentId}, ${team.id}, ${userId}, ${actor.userId}, ${actor.userId})
        on conflict (tenant_id, document_id, team_id, user_id) do nothing
        returning id)
      select id, true as added from ins
      union all
      select id, false from assignments where document_id = ${documentId} and team_id = ${team.id} and user_id = ${userId} and not exists (select 1 from ins)`.execute(
      trx,
    ));
  } catch (err) {
    if ((err as { code?: string }).code === '23503') {
      throw Object.assign(new HttpProblem(422, `User ${userId} is not a user of this tenant.`, { errors: [{ path, message: 'no such user' }] }), {
        cause: err,
      });
    }
    throw err;
  }
  const row = rows[0];
  if (row.added) {
    await appendEvent(trx, {
      tenantId: actor.tenantId,
      actionType: 'TeamAdded',
      documentType: def.className,
      documentId,
      detail: detail(userId, team.id, team.name, documentId),
      userId: actor.userId,
    });
  }
  return row;
}

/** Takes a user off a document's team; false when not on it. */
export async function removeMember(trx: Trx, actor: Principal, def: DocumentDef, documentId: string, teamId: string, userId: string): Promise<boolean> {
  const { rows } = await sql<{ team: string }>`
    delete from assignments a using teams t
     where a.document_id = ${documentId} and a.team_id = ${teamId} and a.user_id = ${userId} and t.tenant_id = a.tenant_id and t.id = a.team_id
    returning t.name as team`.execute(trx);
  if (rows.length === 0) return false;
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'TeamRemoved',
    documentType: def.className,
    documentId,
    detail: detail(userId, teamId, rows[0].team, documentId),
    userId: actor.userId,
  });
  return true;
}

/** The registered type a document id belongs to (deletes name only the document). */
async function defOfDocument(trx: Trx, types: DocumentTypes, documentId: string, path: string): Promise<DocumentDef> {
  for (const def of types.all()) {
    const { rows } = await sql`select 1 from ${sql.table(def.table)} where id = ${documentId}`.execute(trx);
    if (rows.length) return def;
  }
  throw new HttpProblem(422, `There is no document with id ${documentId}.`, { errors: [{ path, message: 'no such document' }] });
}

export async function assignmentBatch(trx: Trx, actor: Principal, types: DocumentTypes, posts: AssignmentPost[], deletes: AssignmentDelete[]): Promise<Row> {
  const checked = new Set<string>();
  const mayChange = async (def: DocumentDef, documentId: string): Promise<void> => {
    if (checked.has(documentId)) return;
    requireWrite(actor, def);
    const doc = await loadDocument(trx, def, documentId);
    await requireStageWrite(trx, actor, doc.id, doc.stage);
    checked.add(documentId);
  };
  const added: Row[] = [];
  for (const [i, p] of posts.entries()) {
    const path = `/body/AssignmentPostModels/${i}`;
    const def = types.get(p.DocumentType, `${path}/DocumentType`);
    const documentId = p.DocumentOid.toLowerCase();
    try {
      await mayChange(def, documentId);
    } catch (err) {
      if (err instanceof HttpProblem && err.status === 404) {
        throw new HttpProblem(422, err.message, { errors: [{ path: `${path}/DocumentOid`, message: 'no such document' }] });
      }
      throw err;
    }
    const team = await trx
      .selectFrom('teams')
      .select(['id', 'name'])
      .where(sql<boolean>`lower(name) = lower(${p.AssignmentType})`)
      .orderBy(sql`name = ${p.AssignmentType}`, 'desc')
      .executeTakeFirst();
    if (!team)
      throw new HttpProblem(422, `There is no team named "${p.AssignmentType}".`, { errors: [{ path: `${path}/AssignmentType`, message: 'no such team' }] });
    const { id, added: isNew } = await addMember(trx, actor, def, documentId, team, p.User.toLowerCase(), `${path}/User`);
    added.push({
      Id: id,
      User: p.User.toLowerCase(),
      DocumentType: def.type,
      DocumentOid: documentId,
      AssignmentTypeId: team.id,
      AssignmentType: team.name,
      Added: isNew,
    });
  }
  const removed: Row[] = [];
  for (const [i, d] of deletes.entries()) {
    const path = `/body/AssignmentDeleteModels/${i}`;
    const documentId = d.DocumentId.toLowerCase();
    const def = await defOfDocument(trx, types, documentId, `${path}/DocumentId`);
    await mayChange(def, documentId);
    const gone = await removeMember(trx, actor, def, documentId, d.AssignmentTypeId.toLowerCase(), d.User.toLowerCase());
    removed.push({ User: d.User.toLowerCase(), DocumentId: documentId, AssignmentTypeId: d.AssignmentTypeId.toLowerCase(), Removed: gone });
  }
  return { AssignmentPostModels: added, AssignmentDeleteModels: removed };
}
