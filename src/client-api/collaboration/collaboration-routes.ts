// Client API routes around documents: posts (comments that may act), briefs, teams, custom fields and
// file links. HTTP only; the services check roles and team membership against the document.
import { Type } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { App } from '../../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../../platform/http/idempotency.ts';
import { Guid } from '../../platform/http/schemas.ts';
import { requireRead, requireStageWrite, requireWrite } from '../documents/access.ts';
import { type Lookup, loadDocument } from '../documents/documents.ts';
import { DOCUMENT_ROLES, DOCUMENT_WRITE_ROLES, type DocumentTypes } from '../documents/registry.ts';
import {
  AssignmentBatch,
  AssignmentBatchBody,
  Brief,
  BriefBody,
  FileLink,
  LinkBody,
  Post,
  postBody,
  UserFieldValues,
  UserFieldValuesBody,
} from '../documents/schemas.ts';
import { assignmentBatch } from './assignments.ts';
import { briefsOf, briefTarget } from './briefs.ts';
import { addLink } from './files.ts';
import { postBrief } from './post-brief.ts';
import { createPost, postsOf } from './posts.ts';
import { putUserFieldValues, userFieldValuesView } from './user-fields.ts';

const tags = ['Client API'];
const answer = (view: unknown): never => view as never;
const Paging = {
  skip: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  take: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
};

export async function collaborationRoutes(app: App, ctx: AppContext, types: DocumentTypes): Promise<void> {
  app.post(
    '/api/posts',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'posts_create',
        summary: 'Post on a document: a comment, and actions on the document (create/update, files, stage change)',
        description:
          'All in one transaction. Actions.Document with DocumentActionType Post creates a document (the post’s DocumentId is then the new one; send the empty GUID), Put updates it. ' +
          'Actions.Files links files (Link: a new link in the document’s root folder; Id: an existing file). Actions.Transition moves the document: only from the transition’s ' +
          'from-stage and for users who may write in that stage (409 naming the current stage); a transition requiring a comment needs Text (422). ' +
          'A comment alone needs the type’s Read role, actions its Write role.',
        headers: IdempotencyHeaders,
        body: postBody(types.all()),
        response: { 201: Post },
      },
    },
    idempotent(ctx, async (request, reply) => {
      // The workflow lookup of a document the post creates goes to the read lane: prepared there, and written with other requests' lookups.
      const lookup: Lookup = (fn) => request.readTenant((db: Trx) => fn(db), { lane: true });
      const view = await request.writeTenant((trx: Trx, actor: Principal) => createPost(trx, actor, types, request.body, lookup, { last: true }));
      reply.code(201);
      return answer(view);
    }),
  );

  app.get(
    '/api/posts',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'posts_list',
        summary: 'A document’s posts, newest first',
        querystring: Type.Object({ documentId: Guid, ...Paging }),
        response: { 200: Type.Array(Post) },
      },
    },
    async (request) =>
      answer(
        await request.readTenant((trx, actor) => postsOf(trx, actor, types, request.query.documentId, request.query.skip ?? 0, request.query.take ?? 100)),
      ),
  );

  app.post(
    '/api/documentBriefs',
    {
      config: { roles: DOCUMENT_WRITE_ROLES },
      schema: {
        tags,
        operationId: 'documentBriefs_create',
        summary: 'Add a version of a document’s brief',
        description:
          'Each post is a new version (1, 2, …). PlainText is derived from the HTML when not sent. Event: Created on DocumentBrief. ' +
          'DocumentTypeName (any case; short, class or full name): a Client API document type (needs its Write role) or another spec type Atrium keeps ' +
          '(User, Bill, Brand, Client, CommercialClient, CommercialClientProduct, PurchaseOrder, Timesheet, FileSystemObject, JobType, Company, Supplier, Leave: needs Administrator).',
        headers: IdempotencyHeaders,
        body: BriefBody,
        response: { 201: Brief },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const b = request.body;
      const view = await request.writeTenant(async (trx: Trx, actor: Principal) => {
        const target = briefTarget(types, b.DocumentTypeName, '/body/DocumentTypeName');
        return postBrief(trx, actor, target, b.DocumentId, { text: b.Text, plainText: b.PlainText, actions: b.Actions ?? null });
      });
      reply.code(201);
      return answer(view);
    }),
  );

  app.get(
    '/api/documentBriefs',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'documentBriefs_list',
        summary: 'The versions of a document’s brief, newest first',
        querystring: Type.Object({ documentId: Guid }),
        response: { 200: Type.Array(Brief) },
      },
    },
    async (request) => answer(await request.readTenant((trx, actor) => briefsOf(trx, actor, types, request.query.documentId.toLowerCase()))),
  );

  app.post(
    '/api/assignments/batch',
    {
      config: { roles: DOCUMENT_WRITE_ROLES },
      schema: {
        tags,
        operationId: 'assignments_batch',
        summary: 'Add and remove members of document teams, in one transaction',
        description:
          'AssignmentPostModels add a user to a document’s team by team name (already a member: no change, no error); AssignmentDeleteModels remove one by team id. ' +
          'Events: TeamAdded / TeamRemoved on the document’s type. Needs the type’s Write role and, in a stage with write teams, membership of one.',
        headers: IdempotencyHeaders,
        body: AssignmentBatchBody,
        response: { 200: AssignmentBatch },
      },
    },
    idempotent(ctx, async (request) => {
      const b = request.body;
      return answer(
        await request.writeTenant((trx: Trx, actor: Principal) =>
          assignmentBatch(trx, actor, types, b.AssignmentPostModels ?? [], b.AssignmentDeleteModels ?? []),
        ),
      );
    }),
  );

  app.put(
    '/api/v3/documentUserFieldValues',
    {
      config: { roles: DOCUMENT_WRITE_ROLES },
      schema: {
        tags,
        operationId: 'documentUserFieldValues_put',
        summary: 'Set custom-field values of a document',
        description:
          'Each Value is checked against its field’s type (Boolean 0, Date 1, Float 2, Integer 3, Money 4, Varchar50 5, Varchar100 6, VarcharMax 7, Text 8, UniqueIdentifier 9); ' +
          'null clears it. Fields not sent keep their values. Event: UserFieldValueUpdated (ColumnName, Value) per changed field. Answers every field of the type.',
        headers: IdempotencyHeaders,
        body: UserFieldValuesBody,
        response: { 200: UserFieldValues },
      },
    },
    idempotent(ctx, async (request) => {
      const b = request.body;
      return answer(
        await request.writeTenant(async (trx: Trx, actor: Principal) => {
          const def = types.get(b.DocumentTypeName, '/body/DocumentTypeName');
          requireWrite(actor, def);
          const doc = await loadDocument(trx, def, b.DocumentId);
          await requireStageWrite(trx, actor, doc.id, doc.stage);
          const entries = b.DocumentUserFieldValues.map((v: { ColumnName: string; Value?: unknown }, i: number) => ({
            column: v.ColumnName,
            value: v.Value ?? null,
            path: `/body/DocumentUserFieldValues/${i}/Value`,
          }));
          await putUserFieldValues(trx, actor, def, doc.id, entries, '/body/DocumentUserFieldValues');
          return userFieldValuesView(trx, actor.tenantId, def, doc.id);
        }),
      );
    }),
  );

  app.get(
    '/api/v3/documentUserFieldValues',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'documentUserFieldValues_get',
        summary: 'The custom-field values of a document',
        querystring: Type.Object({ documentTypeName: Type.String({ minLength: 1, maxLength: 200 }), documentId: Guid }),
        response: { 200: UserFieldValues },
      },
    },
    async (request) =>
      answer(
        await request.readTenant(async (trx, actor) => {
          const def = types.get(request.query.documentTypeName, '/querystring/documentTypeName');
          requireRead(actor, def);
          const doc = await loadDocument(trx, def, request.query.documentId, false);
          return userFieldValuesView(trx, actor.tenantId, def, doc.id);
        }),
      ),
  );

  app.post(
    '/api/v3/file-system/folders/:folderId/links',
    {
      config: { roles: DOCUMENT_WRITE_ROLES },
      schema: {
        tags,
        operationId: 'folders_addLink',
        summary: 'Add a link to an external URL in a folder',
        description:
          'The folder is one of a document’s folder tree (a document’s root folder is its FileSystemRootId). Event: Created on FileSystemObject. ' +
          'Needs the document type’s Write role and, in a stage with write teams, membership of one.',
        headers: IdempotencyHeaders,
        params: Type.Object({ folderId: Guid }),
        body: LinkBody,
        response: { 201: FileLink },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const view = await request.writeTenant((trx: Trx, actor: Principal) => addLink(trx, actor, types, request.params.folderId, request.body));
      reply.code(201);
      return answer(view);
    }),
  );
}
