// File links: a file row pointing at an external URL, in a folder of a document's folder tree (folders
// with document_type_id/document_id, as the data model keeps them). A link raises Created on
// FileSystemObject; adding one to a document's folder needs the right to change that document.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { requireStageWrite, requireWrite } from '../documents/access.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import { loadDocument } from '../documents/documents.ts';
import type { DocumentTypes, Row } from '../documents/registry.ts';
import type { LinkInput } from '../documents/schemas.ts';

interface FileRow {
  id: string;
  folder_id: string;
  name: string;
  link_url: string | null;
  is_flagged: boolean;
  is_protected: boolean;
  external_id: string | null;
  description: string | null;
  created_on_utc: Date;
  created_by_id: string | null;
}

const view = (f: FileRow, document: { id: string | null; type: string | null }): Row => ({
  Id: f.id,
  FolderId: f.folder_id,
  Name: f.name,
  SourceUri: f.link_url,
  IsFlagged: f.is_flagged,
  IsProtected: f.is_protected,
  ExternalId: f.external_id,
  Description: f.description,
  DocumentId: document.id,
  DocumentTypeName: document.type,
  CreatedOnUtc: f.created_on_utc.toISOString(),
  CreatedById: f.created_by_id,
});

/** The name a link gets when none is sent: the last segment of its URL's path, else its host. */
export function linkName(uri: string): string {
  try {
    const u = new URL(uri);
    const last = decodeURIComponent(u.pathname.split('/').filter(Boolean).pop() ?? '');
    return last || u.host;
  } catch {
    return uri.slice(0, 200);
  }
}

/** Adds a link to a folder; checks the right to change the folder's document. */
export async function addLink(trx: Trx, actor: Principal, types: DocumentTypes, folderId: string, input: LinkInput, path = '/body'): Promise<Row> {
  const { rows: found } = await sql<{ id: string; document_id: string | null; class_name: string | null }>`
    select f.id, f.document_id, dt.class_name
      from folders f left join document_types dt on dt.tenant_id = f.tenant_id and dt.id = f.document_type_id
     where f.id = ${folderId.toLowerCase()}`.execute(trx);
  const folder = found[0];
  if (!folder) throw notFound(`There is no folder with id ${folderId}.`);
  const def = folder.class_name ? types.find(folder.class_name) : undefined;
  if (def && folder.document_id) {
    requireWrite(actor, def);
    const doc = await loadDocument(trx, def, folder.document_id);
    await requireStageWrite(trx, actor, doc.id, doc.stage);
  }
  let uri: URL;
  try {
    uri = new URL(input.SourceUri);
  } catch {
    throw new HttpProblem(400, `SourceUri is not an absolute URL: ${input.SourceUri}.`, {
      errors: [{ path: `${path}/SourceUri`, message: 'is not an absolute URL' }],
    });
  }
  if (uri.protocol !== 'http:' && uri.protocol !== 'https:') {
    throw new HttpProblem(400, 'SourceUri must be an http or https URL.', { errors: [{ path: `${path}/SourceUri`, message: 'must be http or https' }] });
  }
  const { rows } = await sql<FileRow>`
    insert into files (tenant_id, folder_id, name, link_url, is_flagged, is_protected, external_id, description, created_by_id, modified_by_id)
    values (${actor.tenantId}, ${folder.id}, ${input.Name || linkName(input.SourceUri)}, ${input.SourceUri}, ${input.IsFlagged ?? false}, ${input.IsProtected ?? false},
            ${input.ExternalId ?? null}, ${input.Description ?? null}, ${actor.userId}, ${actor.userId})
    returning id, folder_id, name, link_url, is_flagged, is_protected, external_id, description, created_on_utc, created_by_id`.execute(trx);
  const file = rows[0];
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Created',
    documentType: 'FileSystemObject',
    documentId: file.id,
    detail: {
      Name: file.name,
      Link: file.link_url,
      FolderId: file.folder_id,
      DocumentId: folder.document_id,
      PropertyTypes: { Name: 'String', Link: 'String', FolderId: 'Guid', DocumentId: 'Guid' },
    },
    userId: actor.userId,
  });
  return view(file, { id: folder.document_id, type: def?.type ?? folder.class_name ?? null });
}

/** The document's root folder, made when a document created before the Client API has none. */
export async function rootFolderOf(trx: Trx, actor: Principal, className: string, documentId: string, name: string): Promise<string> {
  const found = await trx
    .selectFrom('folders')
    .select('id')
    .where('document_id', '=', documentId)
    .where('parent_id', 'is', null)
    .orderBy('created_on_utc')
    .orderBy('id')
    .executeTakeFirst();
  if (found) return found.id;
  const dt = await documentTypeId(trx, actor.tenantId, className);
  const made = await trx
    .insertInto('folders')
    .values({ tenant_id: actor.tenantId, name, document_type_id: dt, document_id: documentId, created_by_id: actor.userId, modified_by_id: actor.userId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return made.id;
}
