// The scheme and host a caller reached us by, for absolute links (OData's nextLink and context, webhook
// test payloads): a trusted reverse proxy's Forwarded (RFC 7239) or X-Forwarded-Proto/-Host, else
// ATRIUM_PUBLIC_URL for requests on its host, else the request's own. docs/data-extraction.md states the order.
import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** ATRIUM_TRUST_PROXY: off, every peer, or the peers at these addresses / CIDRs / named ranges. */
export type TrustProxy = boolean | string[];

const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** The reason an ATRIUM_TRUST_PROXY entry is not an address, a CIDR or a named range; null when it is one. */
export function trustEntryProblem(entry: string): string | null {
  if (NAMED_RANGES[entry]) return null;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return `"${entry}" is not an IP address or CIDR`;
  if (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128))) return `"${entry}" has an invalid prefix length`;
  return null;
}

/** Whether a peer address is a trusted proxy. */
export function proxyTrust(trust: TrustProxy): (address: string | undefined) => boolean {
  if (trust === true) return () => true;
  if (trust === false || trust.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of trust.flatMap((e) => NAMED_RANGES[e] ?? [e])) {
    const [address, prefix] = entry.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    if (!address) return false;
    // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d.
    const plain = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
    const type = isIP(plain) === 4 ? 'ipv4' : 'ipv6';
    return isIP(plain) !== 0 && list.check(plain, type);
  };
}

export interface PublicAddress {
  trusted: (address: string | undefined) => boolean;
  /** ATRIUM_PUBLIC_URL when set explicitly (no trailing slash); null: links follow the request. */
  publicUrl: string | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    publicAddress: PublicAddress;
  }
}

const HOST = /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;
const PROTO = /^https?$/i;

/** proto and host of the last element of a Forwarded header (the one our proxy added), when well formed. */
export function parseForwarded(header: string | undefined): { proto?: string; host?: string } {
  if (!header) return {};
  const last = header.split(',').pop() ?? '';
  const out: { proto?: string; host?: string } = {};
  for (const pair of last.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim().toLowerCase();
    const value = pair
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (name === 'proto' && PROTO.test(value)) out.proto = value.toLowerCase();
    if (name === 'host' && HOST.test(value)) out.host = value;
  }
  return out;
}

const hostname = (host: string) => host.replace(/:\d+$/, '').toLowerCase();

/** `https://host[:port]` (with ATRIUM_PUBLIC_URL's path, if any) that links are written under. */
export function requestOrigin(request: FastifyRequest): string {
  const settings = request.server.publicAddress;
  const own = () => {
    const proto = PROTO.test(request.protocol) ? request.protocol.toLowerCase() : 'http';
    return `${proto}://${HOST.test(request.host) ? request.host : (request.headers.host ?? 'localhost')}`;
  };
  if (settings?.trusted(request.raw.socket?.remoteAddress)) {
    const forwarded = parseForwarded(typeof request.headers.forwarded === 'string' ? request.headers.forwarded : undefined);
    // Forwarded, the standard, wins over the X-Forwarded-* it replaces; Fastify reads the latter.
    if (forwarded.proto || forwarded.host) return `${forwarded.proto ?? own().split(':')[0]}://${forwarded.host ?? request.host}`;
    if (request.headers['x-forwarded-proto'] || request.headers['x-forwarded-host']) return own();
  }
  // A request on the public URL's host came the public way (say through a TLS proxy that keeps Host); one on
  // another address (a tenant host, an internal address) keeps the form that evidently works for its caller.
  if (settings?.publicUrl && hostname(request.host) === hostname(new URL(settings.publicUrl).host)) return settings.publicUrl;
  return own();
}
