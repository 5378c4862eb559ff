// MCP resources: the named-query catalogue the caller may read, each query's metadata, and documents
// (atrium://jobs/{id}, projects, contracts, estimates) read as GET /api/v3/{type}/{id} reads them:
// the type's Read role, through the Client API's service. Answers are JSON documents (data).
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { DocumentDef } from '../client-api/service.ts';
import { contract, documentView, estimate, job, project, requireRead } from '../client-api/service.ts';
import { describeNamedQuery, listNamedQueries } from '../extraction/service.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import { isUuid } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';

const DOCUMENTS: Record<string, DocumentDef> = { jobs: job, projects: project, contracts: contract, estimates: estimate };
const CATALOGUE_URI = 'atrium://named-queries';
const JSON_TYPE = 'application/json';

export const listResources = (): Resource[] => [
  {
    uri: CATALOGUE_URI,
    name: 'named-queries',
    title: 'Named queries',
    description: 'The named queries you may read (each one is also a de_* tool): name, purpose, field count and parameters.',
    mimeType: JSON_TYPE,
  },
];

export const listResourceTemplates = (): ResourceTemplate[] => [
  {
    uriTemplate: 'atrium://named-queries/{name}',
    name: 'named-query',
    title: 'A named query’s metadata',
    description: 'Fields with data types and filter operations, key and parameters of one named query (DE-TimeSheets…).',
    mimeType: JSON_TYPE,
  },
  ...Object.entries(DOCUMENTS).map(([plural, def]) => ({
    uriTemplate: `atrium://${plural}/{id}`,
    name: def.type.toLowerCase(),
    title: `A ${def.type}`,
    description: `One ${def.type} by id, as GET /api/v3/${plural}/{id} answers it (needs ${def.roles.read} or ${def.roles.write}).`,
    mimeType: JSON_TYPE,
  })),
];

function asJson(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
}

export async function readResource(ctx: AppContext, principal: Principal, uri: string, deadline: number): Promise<ReadResourceResult> {
  const m = /^atrium:\/\/([a-z-]+)(?:\/([^/?#]{1,200}))?$/.exec(uri);
  const [, kind, rawId] = m ?? [];
  const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  try {
    return await ctx.db.withTenant(
      principal.tenantId,
      async (trx) => {
        if (kind === 'named-queries' && id === undefined) return asJson(uri, await listNamedQueries(trx, principal));
        if (kind === 'named-queries' && id) return asJson(uri, await describeNamedQuery(trx, principal, id));
        const def = kind ? DOCUMENTS[kind] : undefined;
        if (def && isUuid(id)) {
          requireRead(principal, def);
          return asJson(uri, await documentView(trx, def, id));
        }
        throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${uri}.`);
      },
      { deadline },
    );
  } catch (err) {
    // Resource not found (and not readable) is -32002 in the specification.
    if (err instanceof HttpProblem) throw new McpError(err.status === 404 || err.status === 403 ? -32002 : ErrorCode.InvalidParams, err.message, { uri });
    throw err;
  }
}
