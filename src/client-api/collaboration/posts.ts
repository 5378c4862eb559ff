// POST /api/posts: a post on a document's feed that may also act on it, all in one transaction: create
// or update a document (Actions.Document, through the registry, so the post's DocumentId becomes the new
// document's), link files (Actions.Files), move it along its workflow (Actions.Transition), name a motive
// and whom to notify. The post itself is a comments row, which DE-Comments reads.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { requireRead, requireStageWrite, requireWrite } from '../documents/access.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import { type AlsoWrite, createDocument, type LoadedDocument, type Lookup, loadDocument, updateDocument } from '../documents/documents.ts';
import type { DocumentDef, DocumentTypes, Row } from '../documents/registry.ts';
import type { PostBody } from '../documents/schemas.ts';

export type { PostBody };

import { changeStage, type StageChange } from '../workflow/workflow.ts';
import type { BriefInput } from './briefs.ts';
import { addLink, rootFolderOf } from './files.ts';

export const EMPTY_GUID = '00000000-0000-0000-0000-000000000000';

export interface PostFile {
  Id?: string | null;
  Name?: string | null;
  Link?: string | null;
  IsTemp?: boolean | null;
  IsFlagged?: boolean | null;
  ExternalId?: string | null;
}

const briefOf = (b: { Text?: string | null; PlainText?: string | null } | null | undefined): BriefInput | null =>
  b && (b.Text ?? '') !== '' ? { text: b.Text ?? '', plainText: b.PlainText ?? null } : null;

interface CommentRow {
  id: string;
  created_by_id: string | null;
  created_by_name: string | null;
  /** A Date, or its JSON text when the row came back inside the statement that created its document. */
  created_on_utc: Date | string;
  modified_on_utc: Date | string;
  text: string;
  is_visible_to_client: boolean;
  document_id: string;
  class_name: string | null;
  actions: unknown;
}

const postView = (r: CommentRow, typeName: string | null): Row => ({
  Id: r.id,
  CreatedById: r.created_by_id,
  CreatedByName: r.created_by_name,
  CreatedOnUtc: new Date(r.created_on_utc).toISOString(),
  ModifiedOnUtc: new Date(r.modified_on_utc).toISOString(),
  Text: r.text,
  IsVisibleToClient: r.is_visible_to_client,
  DocumentId: r.document_id,
  DocumentTypeName: typeName,
  Actions: r.actions ?? {},
});

/** The post's row: its document, text and actions; RETURNING what the answer shows. */
const commentInsert = (actor: Principal, dt: string, documentId: string, body: PostBody, actions: Row) => sql<CommentRow>`
  insert into comments (tenant_id, document_type_id, document_id, text, is_visible_to_client, actions, created_by_id, modified_by_id)
  values (${actor.tenantId}, ${dt}, ${documentId}, ${body.Text ?? ''}, ${body.IsVisibleToClient ?? false}, ${JSON.stringify(actions)}::jsonb, ${actor.userId}, ${actor.userId})
  returning id, created_by_id,
            (select coalesce(u.name, u.user_name) from users u where u.tenant_id = comments.tenant_id and u.id = comments.created_by_id) as created_by_name,
            created_on_utc, modified_on_utc, text, is_visible_to_client, document_id, actions`;

/** Motive and Notifications of the post's actions, after the others (the order the answer has always had). */
async function finishActions(trx: Trx, actions: NonNullable<PostBody['Actions']>, out: Row): Promise<Row> {
  if (actions.Motive) out.Motive = actions.Motive;
  if (actions.Notifications?.length) out.Notifications = await notified(trx, actions.Notifications);
  return out;
}

/**
 * The document action: Post creates, Put updates the post's document (or the model's Id). A Post that links
 * no files writes the post's own row in the statement that creates the document (`comment` is then that row).
 */
async function documentAction(
  trx: Trx,
  actor: Principal,
  types: DocumentTypes,
  body: PostBody,
  postDef: DocumentDef,
  change: StageChange | undefined,
  lookup: Lookup | undefined,
  last: boolean,
): Promise<{ doc: LoadedDocument; action: Row; created: boolean; moved?: Row; comment?: CommentRow } | null> {
  const d = body.Actions?.Document;
  if (!d) return null;
  const path = '/body/Actions/Document';
  const def = d.DocumentType ? types.get(d.DocumentType, `${path}/DocumentType`) : postDef;
  const actionType = (d.DocumentActionType ?? 'Post').toLowerCase();
  if (actionType !== 'post' && actionType !== 'put') {
    throw new HttpProblem(400, `DocumentActionType must be Post or Put, not ${d.DocumentActionType}.`, {
      errors: [{ path: `${path}/DocumentActionType`, message: 'must be Post or Put' }],
    });
  }
  // The model sits under the type's name (Project, Job…); case was folded by the schema, aliases are tried.
  const models: Row = d;
  const modelKey = [def.type, def.className, ...def.aliases].find((k) => models[k] !== undefined && models[k] !== null);
  const model = (modelKey ? models[modelKey] : {}) as Row & {
    DocumentBrief?: { Text?: string | null; PlainText?: string | null } | null;
    DocumentUserFieldValues?: Record<string, unknown> | null;
    Id?: string | null;
  };
  const modelPath = `${path}/${modelKey ?? def.type}`;
  if (change) noWorkflow(def);
  if (actionType === 'put' && def.create) {
    throw new HttpProblem(422, `A post does not change an existing ${def.type}; Post creates one.`, {
      errors: [{ path: `${path}/DocumentActionType`, message: `Put is not offered for ${def.type}` }],
    });
  }
  const input = {
    model,
    path: modelPath,
    userFields: model.DocumentUserFieldValues ?? null,
    brief: briefOf(model.DocumentBrief ?? d.DocumentBrief),
  };
  if (actionType === 'post') {
    const actions = body.Actions ?? {};
    // A type with a `finish` hook is moved after it is created, so the move is not known when its row is written.
    const foldable = !actions.Files?.length && !(change && def.finish);
    const also: AlsoWrite | undefined = foldable
      ? async (id, moved) => {
          const out: Row = { Document: { DocumentType: def.type, DocumentActionType: 'Post', Id: id } };
          if (moved) out.Transition = moved;
          const dt = await documentTypeId(trx, actor.tenantId, def.className);
          return commentInsert(actor, dt, id, body, await finishActions(trx, actions, out));
        }
      : undefined;
    // Folded, the statement writes the post too, and is the post's last write when the transaction's is.
    const { moved, also: comment, ...doc } = await createDocument(trx, actor, def, input, change, also, lookup, { last: last && also !== undefined });
    return {
      doc,
      created: true,
      moved,
      comment: comment as CommentRow | undefined,
      action: { DocumentType: def.type, DocumentActionType: 'Post', Id: doc.id },
    };
  }
  const target = model.Id ?? body.DocumentId;
  if (!target || target === EMPTY_GUID) {
    throw new HttpProblem(400, 'A Put names the document to change in DocumentId (or the model’s Id).', {
      errors: [{ path: '/body/DocumentId', message: 'is required for Put' }],
    });
  }
  const doc = await updateDocument(trx, actor, def, target, input);
  return { doc, created: false, action: { DocumentType: def.type, DocumentActionType: 'Put', Id: doc.id } };
}

/** 422 for a Transition on a type without workflow (an expense item: its sheet has the workflow). */
function noWorkflow(def: DocumentDef): void {
  if (!def.stageless) return;
  throw new HttpProblem(422, `An ${def.type} has no workflow to move along.`, {
    errors: [{ path: '/body/Actions/Transition', message: `${def.type} has no workflow` }],
  });
}

/**
 * `lookup`: where a new document's workflow lookup may run outside the transaction (see documents.ts Lookup).
 * `last`: the caller's transaction writes nothing after the post (executePrepared's `last`, decision 0085).
 */
export async function createPost(
  trx: Trx,
  actor: Principal,
  types: DocumentTypes,
  body: PostBody,
  lookup?: Lookup,
  opts: { last?: boolean } = {},
): Promise<Row> {
  const postDef = types.get(body.DocumentTypeName, '/body/DocumentTypeName');
  const actions = body.Actions ?? {};
  const text = body.Text ?? '';
  const actionsOut: Row = {};
  const files = actions.Files ?? [];
  const change: StageChange | undefined = actions.Transition
    ? {
        transitionId: actions.Transition.TransitionId,
        statusId: actions.Transition.StatusId,
        comment: text,
        hasFiles: files.length > 0,
        path: '/body/Actions/Transition',
      }
    : undefined;
  const acted = await documentAction(trx, actor, types, body, postDef, change, lookup, opts.last === true);
  const def = acted?.doc.def ?? postDef;
  if (acted?.comment) return postView(acted.comment, def.type);
  if (acted) actionsOut.Document = acted.action;
  else if (!body.DocumentId || body.DocumentId === EMPTY_GUID) {
    throw new HttpProblem(400, 'DocumentId is required unless Actions.Document creates the document.', {
      errors: [{ path: '/body/DocumentId', message: 'is required' }],
    });
  }
  if (change) noWorkflow(def);
  const changes = Boolean(actions.Transition || actions.Files?.length);
  if (changes) requireWrite(actor, def);
  else requireRead(actor, def);
  let doc: LoadedDocument;
  if (acted) doc = acted.doc;
  else {
    try {
      doc = await loadDocument(trx, def, String(body.DocumentId), changes);
    } catch (err) {
      if (err instanceof HttpProblem && err.status === 404)
        throw new HttpProblem(422, err.message, { errors: [{ path: '/body/DocumentId', message: 'no such document' }] });
      throw err;
    }
  }
  if (files.length) {
    if (!acted?.created) await requireStageWrite(trx, actor, doc.id, doc.stage);
    actionsOut.Files = await linkFiles(trx, actor, types, doc, files);
  }
  if (change) actionsOut.Transition = acted?.moved ?? (await changeStage(trx, actor, doc, change));
  await finishActions(trx, actions, actionsOut);
  const dt = await documentTypeId(trx, actor.tenantId, def.className);
  const { rows } = await commentInsert(actor, dt, doc.id, body, actionsOut).execute(trx);
  return postView(rows[0], def.type);
}

async function linkFiles(trx: Trx, actor: Principal, types: DocumentTypes, doc: LoadedDocument, files: PostFile[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const [i, f] of files.entries()) {
    const path = `/body/Actions/Files/${i}`;
    if (f.Link) {
      const folderId = await rootFolderOf(trx, actor, doc.def.className, doc.id, String(doc.row.number ?? doc.id));
      const link = await addLink(trx, actor, types, folderId, { Name: f.Name, SourceUri: f.Link, IsFlagged: f.IsFlagged, ExternalId: f.ExternalId }, path);
      out.push({ Id: link.Id, Name: link.Name, Link: link.SourceUri, IsTemp: f.IsTemp ?? false, IsFlagged: link.IsFlagged, ExternalId: link.ExternalId });
    } else if (f.Id) {
      const file = await trx
        .selectFrom('files')
        .select(['id', 'name', 'link_url', 'is_flagged', 'external_id'])
        .where('id', '=', f.Id.toLowerCase())
        .executeTakeFirst();
      if (!file) throw new HttpProblem(422, `There is no file with id ${f.Id}.`, { errors: [{ path: `${path}/Id`, message: 'no such file' }] });
      out.push({ Id: file.id, Name: file.name, Link: file.link_url, IsTemp: f.IsTemp ?? false, IsFlagged: file.is_flagged, ExternalId: file.external_id });
    } else {
      throw new HttpProblem(400, 'A file of a post needs its Id or a Link.', { errors: [{ path, message: 'needs Id or Link' }] });
    }
  }
  return out;
}

async function notified(trx: Trx, list: { UserId: string }[]): Promise<Row[]> {
  const ids = [...new Set(list.map((n) => n.UserId.toLowerCase()))];
  const found = await trx.selectFrom('users').select(['id', 'name', 'user_name']).where('id', 'in', ids).execute();
  const index = list.findIndex((n) => !found.some((u) => u.id === n.UserId.toLowerCase()));
  if (index >= 0) {
    throw new HttpProblem(422, `Notifications[${index}].UserId ${list[index].UserId} is not a user of this tenant.`, {
      errors: [{ path: `/body/Actions/Notifications/${index}/UserId`, message: 'no such user' }],
    });
  }
  return ids.map((id) => {
    const u = found.find((x) => x.id === id);
    return { UserId: id, UserName: u ? (u.name ?? u.user_name) : null };
  });
}

/** GET /api/posts?documentId=: the document's posts, newest first. */
export async function postsOf(trx: Trx, actor: Principal, types: DocumentTypes, documentId: string, skip: number, take: number): Promise<Row[]> {
  const { rows } = await sql<CommentRow>`
    select c.id, c.created_by_id, coalesce(u.name, u.user_name) as created_by_name, c.created_on_utc, c.modified_on_utc, c.text,
           c.is_visible_to_client, c.document_id, dt.class_name, c.actions
      from comments c
      left join users u on u.tenant_id = c.tenant_id and u.id = c.created_by_id
      left join document_types dt on dt.tenant_id = c.tenant_id and dt.id = c.document_type_id
     where c.document_id = ${documentId.toLowerCase()}
     order by c.created_on_utc desc, c.id
     offset ${skip} limit ${take}`.execute(trx);
  // A document's posts are read with its type's Read role; a type outside the registry has none to check.
  const def = rows[0]?.class_name ? types.find(rows[0].class_name) : undefined;
  if (def) requireRead(actor, def);
  return rows.map((r) => postView(r, def?.type ?? r.class_name));
}
