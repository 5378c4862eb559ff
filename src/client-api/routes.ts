// Client API routes for documents and workflow: HTTP only (schemas and thin handlers over the services).
// Authentication is the app headers with X-AppUser or an access token; the acting user's roles and team
// membership are checked by the services, which know the document. Every write takes Idempotency-Key.
import { type TSchema, Type } from 'typebox';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import type { App } from '../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../platform/http/idempotency.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid } from '../platform/http/schemas.ts';
import { collaborationRoutes } from './collaboration/collaboration-routes.ts';
import { CLIENT_DOCUMENT_TYPES } from './document-type-list.ts';
import { requireRead } from './documents/access.ts';
import { contractProjectTemplate } from './documents/contract-template.ts';
import { documentInput } from './documents/document-input.ts';
import { contract, job, project, request as requestDef } from './documents/document-types.ts';
import { createDocument, documentView, loadDocument } from './documents/documents.ts';
import { type Envelope, envelopeSchema, openEnvelope } from './documents/envelope.ts';
import { patchHandler } from './documents/patch.ts';
import type { DocumentDef, Row } from './documents/registry.ts';
import { DOCUMENT_ROLES } from './documents/registry.ts';
import {
  DOCUMENT_READ_ONLY,
  documentModel,
  documentPatch,
  ESTIMATE_READ_ONLY,
  ProjectExtraView,
  ProjectTemplate,
  Transitions,
  documentView as viewSchema,
  Workflows,
} from './documents/schemas.ts';
import { estimateRoutes } from './estimates/estimate-routes.ts';
import { EstimateExtraView } from './estimates/estimate-schemas.ts';
import { estimate } from './estimates/estimate-type.ts';
import { expenseRoutes } from './expenses/expense-routes.ts';
import { peopleRoutes } from './people/people-routes.ts';
import { timeRoutes } from './time/time-routes.ts';
import { availableTransitions, workflowsOf } from './workflow/workflow.ts';

export const tags = ['Client API'];

/** Service answers are plain records; the route's response schema serializes them. */
export const answer = (view: unknown): never => view as never;

interface DocumentRoutes {
  def: DocumentDef;
  /** The v3 collection path (POST create envelope, GET /{id}). */
  v3: string;
  /** The PATCH path, when the spec has one. */
  patch?: string;
  plural: string;
  /** Answer properties that are not fields (the def's view hook gives them). */
  extra?: Record<string, TSchema>;
}

const DOCUMENTS: DocumentRoutes[] = [
  { def: project, v3: '/api/v3/projects', patch: '/api/projects/:id', plural: 'projects' },
  { def: job, v3: '/api/v3/jobs', patch: '/api/jobs/:id', plural: 'jobs' },
  { def: contract, v3: '/api/v3/contracts', patch: '/api/contracts/:id', plural: 'contracts' },
  { def: requestDef, v3: '/api/v3/requests', patch: '/api/requests/:id', plural: 'requests' },
  { def: estimate, v3: '/api/v3/estimates', patch: '/api/estimates/:id', plural: 'estimates', extra: EstimateExtraView },
];

export async function clientApiRoutes(app: App, ctx: AppContext): Promise<void> {
  for (const { def, v3, patch, plural, extra } of DOCUMENTS) {
    const view = viewSchema(def, extra ?? (def === project ? ProjectExtraView : {}));
    const model = documentModel(def);
    app.post(
      v3,
      {
        config: { roles: [def.roles.write] },
        schema: {
          tags,
          operationId: `${plural}_create`,
          summary: `Create ${def.type === 'Job' ? 'jobs' : `${plural}`} (Create or CreateMany envelope)`,
          description:
            `{"OperationType": 0 | "Create", "CreateModel": {…}} answers the new ${def.type}; {"Type": 2 | "CreateMany", "CreateManyModel": [...]} answers them in order, ` +
            `all created or none (the failing item is named by its path). The ${def.type} starts in its workflow's initial stage; events: Created on ${def.className}. ` +
            `Needs the role ${def.roles.write}.`,
          headers: IdempotencyHeaders,
          body: named(`${def.type}CreateBody`, envelopeSchema(model)),
          response: { 201: Type.Union([view, Type.Array(view)]) },
        },
      },
      idempotent(ctx, async (request, reply) => {
        const opened = openEnvelope(request.body as Envelope, ['Create', 'CreateMany']);
        const views = await request.writeTenant(async (trx: Trx, actor: Principal) => {
          const out: Row[] = [];
          for (const item of opened.items) {
            const doc = await createDocument(trx, actor, def, documentInput(item.model, item.path));
            out.push(await documentView(trx, def, doc.id));
          }
          return out;
        });
        reply.code(201);
        return answer(opened.operation === 'CreateMany' ? views : views[0]);
      }),
    );

    app.get(
      `${v3}/:id`,
      {
        config: { roles: [def.roles.read, def.roles.write] },
        schema: {
          tags,
          operationId: `${plural}_get`,
          summary: `Read a ${def.type}`,
          description: `Needs the role ${def.roles.read} or ${def.roles.write}.`,
          params: Type.Object({ id: Guid }),
          response: { 200: view },
        },
      },
      async (request) =>
        answer(
          await request.readTenant((trx, actor) => {
            requireRead(actor, def);
            return documentView(trx, def, request.params.id);
          }),
        ),
    );

    if (patch) {
      app.patch(
        patch,
        {
          config: { roles: [def.roles.write], readOnly: def === estimate ? ESTIMATE_READ_ONLY : DOCUMENT_READ_ONLY },
          schema: {
            tags,
            operationId: `${plural}_patch`,
            summary: `Change some properties of a ${def.type}`,
            description:
              'Each property is sent as {"value": …}; only those sent change. Custom fields: {"DocumentUserFieldValues": {"value": {"Column": value}}}. ' +
              `Needs the role ${def.roles.write} and, in a stage with write teams, membership of one. Events: Updated with the changed properties and their types, UserFieldValueUpdated per custom field.`,
            headers: IdempotencyHeaders,
            params: Type.Object({ id: Guid }),
            body: documentPatch(def),
            response: { 200: view },
          },
        },
        patchHandler(ctx, def, (trx, _actor, id) => documentView(trx, def, id)),
      );
    }
  }

  app.get(
    '/api/contracts/:id/projects/new',
    {
      config: { roles: ['ContractRead', 'ContractWrite'] },
      schema: {
        tags,
        operationId: 'contracts_newProject',
        summary: 'A new-project template filled from a contract',
        description:
          'Nothing is written: the answer is a project model to send (changed as needed) in POST /api/v3/projects or a post’s Actions.Document. Needs ContractRead or ContractWrite.',
        params: Type.Object({ id: Guid }),
        response: { 200: ProjectTemplate },
      },
    },
    async (request) => answer(await request.readTenant((trx, actor) => contractProjectTemplate(trx, actor, request.params.id))),
  );

  app.get(
    '/api/v3/document-types/:id/workflows',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'documentTypes_workflows',
        summary: 'The workflows of a document type, with stages and (when asked) transitions',
        description: '{id} is the document type’s id (GET /api/v3/document-types/lookup) or a name (Deliverable, Project…).',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: Type.Object({
          expandTransitions: Type.Optional(
            Type.String({ pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$', description: 'true to list each workflow’s transitions' }),
          ),
        }),
        response: { 200: Workflows },
      },
    },
    async (request) =>
      answer(await request.readTenant((trx) => workflowsOf(trx, request.params.id, request.query.expandTransitions?.toLowerCase() === 'true'))),
  );

  app.get(
    '/api/workflowStateTransitions',
    {
      config: { roles: DOCUMENT_ROLES },
      schema: {
        tags,
        operationId: 'workflowStateTransitions_list',
        summary: 'The transitions the acting user may run from a document’s current stage',
        description: 'Left out: transitions limited to other types or to roles the user lacks, and all of them when the user may not write in the stage.',
        querystring: Type.Object({ documentTypeName: Type.String({ minLength: 1, maxLength: 200 }), documentId: Guid }),
        response: { 200: Transitions },
      },
    },
    async (request) =>
      answer(
        await request.readTenant(async (trx, actor) => {
          const def = CLIENT_DOCUMENT_TYPES.get(request.query.documentTypeName, '/querystring/documentTypeName');
          requireRead(actor, def);
          return availableTransitions(trx, actor, await loadDocument(trx, def, request.query.documentId, false));
        }),
      ),
  );

  await estimateRoutes(app, ctx);
  await peopleRoutes(app, ctx);
  await timeRoutes(app, ctx);
  await expenseRoutes(app, ctx);
  await collaborationRoutes(app, ctx, CLIENT_DOCUMENT_TYPES);
}
