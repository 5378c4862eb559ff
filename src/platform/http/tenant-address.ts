// How a request names its tenant besides X-AppTenant: the base path `/t/{slug}/…` (taken off before
// routing, so every route answers under it exactly as at the root) or a Host on ATRIUM_TENANT_HOST_PATTERN;
// and the base address a response's links are written under, so that they keep the form the caller used.
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { isUuid } from '../db/database.ts';
import { unauthorized } from '../errors.ts';
import { requestOrigin } from './public-address.ts';

/** A slug is a DNS label: it goes into host names. */
export const SLUG_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';
export const SLUG_RE = new RegExp(SLUG_PATTERN);

const BASE_PATH_RE = /^\/t\/([^/?#]*)(?=[/?#]|$)/i;

type AddressedMessage = IncomingMessage & { atriumBasePath?: string; atriumPathSlug?: string };

/** Fastify's rewriteUrl: `/t/{slug}/rest` is routed as `/rest`; the prefix stays on the raw request. */
export function rewriteTenantPath(req: IncomingMessage): string {
  const url = collapseSlashes(req.url ?? '/');
  const m = BASE_PATH_RE.exec(url);
  if (!m) return url;
  const raw = req as AddressedMessage;
  raw.atriumBasePath = m[0];
  raw.atriumPathSlug = m[1].toLowerCase();
  const rest = url.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Repeated slashes of the path (not of the query) as one, so `//t//acme//api` is `/t/acme/api` (the router's
 * ignoreDuplicateSlashes does the same for the rest of the path; the base path is read before routing). */
function collapseSlashes(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.includes('//')) return url;
  return path.replace(/\/{2,}/g, '/') + (q < 0 ? '' : url.slice(q));
}

/** `/t/{slug}` as the caller wrote it, or '' at the root: what relative links are written under. */
export const basePathOf = (request: FastifyRequest): string => (request.raw as AddressedMessage).atriumBasePath ?? '';

/** The absolute address the caller reached this deployment's root for its tenant by (scheme, host, base path). */
export const requestBaseUrl = (request: FastifyRequest): string => `${requestOrigin(request)}${basePathOf(request)}`;

/** The slug a Host names under the pattern, or null (no pattern, or a host off the pattern). */
export function hostSlugMatcher(pattern: string | undefined): (host: string | undefined) => string | null {
  if (!pattern) return () => null;
  const [before, after] = pattern.split('{tenant}').map((part) => part.replace(/[.]/g, '\\.'));
  const re = new RegExp(`^${before}([a-z0-9-]{1,63})${after}$`);
  const withPort = /:\d+$/.test(pattern);
  return (host) => {
    if (!host) return null;
    const name = (withPort ? host : host.replace(/:\d+$/, '')).toLowerCase();
    return re.exec(name)?.[1] ?? null;
  };
}

/**
 * The tenant's own base URL, for links written outside a request (webhook payloads, e-mails) and for
 * its credentials: on its host when ATRIUM_TENANT_HOST_PATTERN is set (with ATRIUM_PUBLIC_URL's scheme
 * and port), else ATRIUM_PUBLIC_URL + `/t/{slug}`.
 */
export function tenantBaseUrl(config: { publicUrl: string; tenantHostPattern?: string }, slug: string): string {
  if (!config.tenantHostPattern) return `${config.publicUrl}/t/${slug}`;
  const publicUrl = new URL(config.publicUrl);
  const host = config.tenantHostPattern.replace('{tenant}', slug);
  const port = /:\d+$/.test(host) || !publicUrl.port ? '' : `:${publicUrl.port}`;
  return `${publicUrl.protocol}//${host}${port}`;
}

export interface TenantNames {
  /** X-AppTenant: a tenant id, or a slug. */
  header: unknown;
  pathSlug: string | undefined;
  hostSlug: string | null;
}

export const namesOf = (request: FastifyRequest, hostSlug: (host: string | undefined) => string | null): TenantNames => ({
  header: request.headers['x-apptenant'],
  pathSlug: (request.raw as AddressedMessage).atriumPathSlug,
  hostSlug: hostSlug(request.host),
});

/**
 * The tenant a request names, in order X-AppTenant, base path, Host; null when it names none. A name
 * that is no tenant, or two names for different tenants, is the 401 of an unknown tenant. Answered at once
 * (no promise, no microtask on every request) when no slug has to be looked up: no name, or an id alone.
 */
export function addressedTenant(names: TenantNames, idForSlug: (slug: string) => Promise<string | null>): string | null | Promise<string | null> {
  if (names.pathSlug === undefined && names.hostSlug === null) {
    const header = names.header;
    if (header === undefined || header === '') return null;
    if (isUuid(header)) return header.toLowerCase();
  }
  return addressedTenantBySlugs(names, idForSlug);
}

async function addressedTenantBySlugs(names: TenantNames, idForSlug: (slug: string) => Promise<string | null>): Promise<string | null> {
  const ids: string[] = [];
  const header = names.header;
  if (header !== undefined && header !== '') {
    if (isUuid(header)) ids.push(header.toLowerCase());
    else if (typeof header === 'string' && SLUG_RE.test(header.toLowerCase())) ids.push(await known(header.toLowerCase(), idForSlug));
    else throw unauthorized();
  }
  if (names.pathSlug !== undefined) ids.push(await known(names.pathSlug, idForSlug));
  if (names.hostSlug !== null) ids.push(await known(names.hostSlug, idForSlug));
  if (ids.some((id) => id !== ids[0])) throw unauthorized();
  return ids[0] ?? null;
}

async function known(slug: string, idForSlug: (slug: string) => Promise<string | null>): Promise<string> {
  const id = SLUG_RE.test(slug) ? await idForSlug(slug) : null;
  if (!id) throw unauthorized();
  return id;
}
