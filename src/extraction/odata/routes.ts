// OData v4 read-only feed of every named query for Excel / Power BI "From OData feed": service
// document, $metadata (CSDL) and entity sets with server-driven paging. Authenticates with HTTP Basic
// (user `<tenantId>:<appId>` — or `<slug>:<appId>`, or `<appId>` alone under a tenant's base path or host —,
// password the app secret) or a bearer token.
import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import { HttpProblem, notFound, unauthorized } from '../../platform/errors.ts';
import type { App } from '../../platform/http/app.ts';
import { sendWithEtag } from '../../platform/http/etag.ts';
import { addressedTenant, requestBaseUrl } from '../../platform/http/tenant-address.ts';
import { TIMEOUT_ADVICE } from '../service.ts';
import { csdl, isHelperQuery } from './model.ts';
import { entityModels, keyPredicate, ODATA_PAGE_SIZE, type ODataOptions, readEntitySet } from './service.ts';

const tags = ['OData feed'];
const CHALLENGE = { 'www-authenticate': 'Basic realm="Atrium", charset="UTF-8"' };
const odataConfig = { auth: 'none' as const, timeoutAdvice: TIMEOUT_ADVICE, roles: ['DataExtractionRead'] as const };

// How /openapi.json describes the feed; the answers themselves are written as they are, not through these schemas.
const documented = (operationId: string, summary: string, mediaType: string, schema: TSchema) => ({
  schema: { tags, operationId, summary },
  config: { ...odataConfig, documentedResponses: { 200: { description: summary, content: { [mediaType]: { schema } } } } },
});
const ODATA_JSON = 'application/json; odata.metadata=minimal';
const serviceDocumentRoute = documented(
  'odata_serviceDocument',
  'OData service document',
  ODATA_JSON,
  Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object({ name: Type.String(), kind: Type.String(), url: Type.String() })) }),
);
const metadataRoute = documented('odata_metadata', 'OData CSDL of every entity set', 'application/xml', Type.String());
const EntitySetPage = Type.Object({
  '@odata.context': Type.String(),
  '@odata.count': Type.Optional(Type.Integer()),
  value: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  '@odata.nextLink': Type.Optional(Type.String()),
});

const challenge = (detail: string) => new HttpProblem(401, detail, { headers: CHALLENGE });

async function authenticate(ctx: AppContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization ?? '';
  const [scheme, credentials = ''] = header.split(/\s+/, 2);
  try {
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      const colon = decoded.lastIndexOf(':');
      const user = decoded.slice(0, Math.max(0, colon));
      const secret = decoded.slice(colon + 1);
      const sep = user.indexOf(':');
      const addressed = request.addressedTenantId;
      const named =
        sep < 0 ? addressed : await addressedTenant({ header: user.slice(0, sep), pathSlug: undefined, hostSlug: null }, (s) => ctx.auth.tenantIdForSlug(s));
      if (colon < 0 || !named) throw challenge('HTTP Basic user must be <tenantId>:<appId> and the password the app secret.');
      if (addressed && named !== addressed) throw unauthorized();
      return await ctx.auth.authenticateApp(named, user.slice(sep + 1), secret, request.headers['x-appuser']);
    }
    if (/^bearer$/i.test(scheme) && credentials) {
      const principal = await ctx.auth.verifyAccessToken(credentials);
      if (request.addressedTenantId && principal.tenantId !== request.addressedTenantId) throw unauthorized();
      return principal;
    }
  } catch (err) {
    if (err instanceof HttpProblem && err.status === 401) throw challenge(err.message);
    throw err;
  }
  throw challenge('Authenticate with HTTP Basic (user <tenantId>:<appId>, password the app secret) or a bearer token.');
}

/** Query options this feed reads; any other system query option answers 501 naming these. */
const SUPPORTED_OPTIONS = ['$filter', '$select', '$orderby', '$top', '$skip', '$count', '$format'];
/** `DE_TimeSheets(42)`, `CT_Rates('R01')`, `DE_X(A=1,B='x')`: a key lookup. */
const KEYED = /^([A-Za-z_][A-Za-z0-9_]*)\((.*)\)$/s;

function refuseUnsupported(q: Record<string, string | undefined>): void {
  for (const option of Object.keys(q)) {
    if (option.startsWith('$') && !SUPPORTED_OPTIONS.includes(option.toLowerCase())) {
      throw new HttpProblem(501, `The query option ${option} is not supported by this feed; supported: ${SUPPORTED_OPTIONS.join(', ')}.`, {
        extra: { supportedOptions: SUPPORTED_OPTIONS },
      });
    }
  }
  const format = q.$format?.toLowerCase();
  if (format !== undefined && format !== 'json' && !format.startsWith('application/json')) {
    throw new HttpProblem(501, `$format=${q.$format} is not supported by this feed; it answers JSON ($format=json).`);
  }
}

/** Links keep the caller's scheme, host and base path (`/t/{slug}`). */
const serviceRoot = (request: FastifyRequest) => `${requestBaseUrl(request)}/odata/v4`;

export async function odataRoutes(app: App, ctx: AppContext): Promise<void> {
  const onRequest = async (request: FastifyRequest) => {
    request.principal = await authenticate(ctx, request);
  };
  const headers = { 'odata-version': '4.0' };

  app.get('/odata/v4', { ...serviceDocumentRoute, onRequest }, async (request, reply) => {
    const models = await request.readTenant((trx, p) => entityModels(trx, p));
    reply.headers(headers).type('application/json; odata.metadata=minimal');
    return {
      '@odata.context': `${serviceRoot(request)}/$metadata`,
      value: models.filter((m) => !isHelperQuery(m)).map((m) => ({ name: m.entitySet, kind: 'EntitySet', url: m.entitySet })),
    };
  });

  app.get('/odata/v4/$metadata', { ...metadataRoute, onRequest }, async (request, reply) => {
    const models = await request.readTenant((trx, p) => entityModels(trx, p));
    reply.headers(headers).type('application/xml');
    return sendWithEtag(request, reply, csdl(models));
  });

  const Query = Type.Object(
    {
      $filter: Type.Optional(Type.String()),
      $select: Type.Optional(Type.String()),
      $orderby: Type.Optional(Type.String()),
      $top: Type.Optional(Type.String()),
      $skip: Type.Optional(Type.String()),
      $count: Type.Optional(Type.String()),
      $format: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  );

  app.get(
    '/odata/v4/:entitySet',
    {
      schema: {
        tags,
        operationId: 'odata_readEntitySet',
        summary: 'Rows of a named query ($filter, $select, $orderby, $top, $skip, $count; @odata.nextLink pages)',
        params: Type.Object({ entitySet: Type.String({ maxLength: 200 }) }),
        querystring: Query,
      },
      config: { ...odataConfig, documentedResponses: { 200: { description: 'A page of rows', content: { [ODATA_JSON]: { schema: EntitySetPage } } } } },
      onRequest,
    },
    async (request, reply) => {
      const q = request.query as ODataOptions & Record<string, string | undefined>;
      refuseUnsupported(q);
      const keyed = KEYED.exec(request.params.entitySet);
      if (keyed) {
        const [, entitySet, key] = keyed;
        const page = await request.readTenant((trx, p, db) => readEntitySet(trx, p, entitySet, { $select: q.$select }, 1, keyPredicate(key), db), {
          replica: true,
        });
        if (page.value.length === 0) throw notFound(`${page.model.entitySet} has no entity with the key (${key}).`);
        reply.headers(headers).type('application/json; odata.metadata=minimal');
        return { '@odata.context': `${serviceRoot(request)}/$metadata#${page.model.entitySet}/$entity`, ...page.value[0] };
      }
      const preferred = /odata\.maxpagesize=(\d+)/i.exec(String(request.headers.prefer ?? ''));
      const pageSize = preferred ? Math.max(1, Math.min(ODATA_PAGE_SIZE, Number(preferred[1]))) : ODATA_PAGE_SIZE;
      const page = await request.readTenant((trx, p, db) => readEntitySet(trx, p, request.params.entitySet, q, pageSize, undefined, db), { replica: true });
      const root = serviceRoot(request);
      const body: Record<string, unknown> = { '@odata.context': `${root}/$metadata#${page.model.entitySet}` };
      if (String(q.$count).toLowerCase() === 'true') body['@odata.count'] = page.count;
      body.value = page.value;
      if (page.next) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(q)) if (typeof v === 'string' && k !== '$skip' && k !== '$top') params.set(k, v);
        params.set('$skip', String(page.next.skip));
        if (page.next.top !== null) params.set('$top', String(page.next.top));
        body['@odata.nextLink'] = `${root}/${page.model.entitySet}?${params.toString().replace(/\+/g, '%20')}`;
      }
      reply.headers(headers).type('application/json; odata.metadata=minimal');
      if (preferred) reply.header('preference-applied', `odata.maxpagesize=${pageSize}`);
      return body;
    },
  );

  app.get(
    '/odata/v4/:entitySet/$count',
    {
      schema: {
        tags,
        operationId: 'odata_countEntitySet',
        summary: 'Number of rows matching $filter',
        params: Type.Object({ entitySet: Type.String({ maxLength: 200 }) }),
        querystring: Query,
      },
      config: {
        ...odataConfig,
        documentedResponses: { 200: { description: 'The count', content: { 'text/plain': { schema: Type.String({ pattern: '^[0-9]+$' }) } } } },
      },
      onRequest,
    },
    async (request, reply) => {
      const q = request.query as ODataOptions & Record<string, string | undefined>;
      refuseUnsupported(q);
      const page = await request.readTenant(
        (trx, p, db) => readEntitySet(trx, p, request.params.entitySet, { $filter: q.$filter, $top: '0' }, 1, undefined, db),
        {
          replica: true,
        },
      );
      reply.headers(headers).type('text/plain');
      return String(page.count);
    },
  );
}
