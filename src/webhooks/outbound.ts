// Outbound address safety: webhook deliveries never reach loopback, private, link-local, metadata,
// multicast or unspecified addresses. The check runs in the connector, on the addresses the name
// resolved to and again on the socket's peer, so a name that re-resolves (DNS rebinding) cannot slip by.
import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';

const BLOCKED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['168.63.129.16', 32, 'ipv4', 'cloud metadata'],
  ['169.254.0.0', 16, 'ipv4', 'link-local or cloud metadata'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'private (IETF protocol assignments)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'private (benchmarking)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved or broadcast'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['fc00::', 7, 'ipv6', 'private (unique local) or cloud metadata'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = BLOCKED.map(([address, prefix, family, reason]) => {
  const list = new net.BlockList();
  list.addSubnet(address, prefix, family);
  return { list, family, reason };
});

/** IPv4 carried inside IPv6 (mapped ::ffff:a.b.c.d, compatible, NAT64 64:ff9b::/96) as dotted text. */
function embeddedIpv4(address: string): string | null {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const hi = Number.parseInt(hex[1], 16);
  const lo = Number.parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why an address may not be called (e.g. "loopback"), or null for a public address. */
export function blockedReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) return blockedReason(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, family: f, reason } of lists) if (f === type && list.check(bare, type)) return reason;
  return null;
}

/** The refusal recorded on an invocation; not retried, since the address rule will not change its mind. */
export class OutboundRefused extends Error {
  readonly code = 'ATRIUM_OUTBOUND_REFUSED';
}

const refusal = (host: string, address: string, reason: string): OutboundRefused =>
  new OutboundRefused(
    `refused to connect to ${host}${host === address ? '' : ` (${address})`}: ${reason} address (set ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`,
  );

type LookupAll = (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;

/** dns.lookup that keeps only public addresses, and fails when a name resolves to none. */
function safeLookup(hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void): void {
  dns.lookup(hostname, { ...options, all: true }, ((err, addresses) => {
    if (err) return callback(err);
    const allowed = addresses.filter((a) => blockedReason(a.address) === null);
    if (allowed.length === 0) {
      const first = addresses[0];
      return callback(refusal(hostname, first?.address ?? hostname, first ? (blockedReason(first.address) ?? '') : 'no'));
    }
    if (options.all) return (callback as LookupAll)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  }) as LookupAll);
}

/** A refusal when the URL's host is an IP literal that may not be called; names are checked at connect. */
export function literalHostProblem(url: URL, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) === 0) return host.toLowerCase() === 'localhost' ? refusal(host, host, 'loopback').message : null;
  const reason = blockedReason(host);
  return reason ? refusal(host, host, reason).message : null;
}

/** The HTTP client of deliveries: keep-alive connections, no redirects, addresses checked on connect. */
export function createOutboundAgent(opts: { allowPrivate: boolean; connections: number; connectTimeoutMs: number }): Agent {
  if (opts.allowPrivate) return new Agent({ connections: opts.connections, connect: { timeout: opts.connectTimeoutMs } });
  const connector = buildConnector({ lookup: safeLookup, timeout: opts.connectTimeoutMs } as buildConnector.BuildOptions);
  return new Agent({
    connections: opts.connections,
    connect: (options, callback) => {
      const literal = options.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(literal) !== 0) {
        const reason = blockedReason(literal);
        if (reason) return callback(refusal(literal, literal, reason), null);
      }
      connector(options, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no socket'), null);
        // The peer the socket actually reached: the last word, whatever resolution said.
        const peer = socket.remoteAddress ?? '';
        const reason = blockedReason(peer);
        if (reason) {
          socket.destroy();
          return callback(refusal(options.hostname, peer, reason), null);
        }
        callback(null, socket);
      });
    },
  });
}
