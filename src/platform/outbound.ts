// Outbound address safety: webhook deliveries never reach loopback, private, link-local, metadata,
// multicast, reserved or unspecified addresses, nor any address of this host's own interfaces, nor an
// IPv6 address that carries a refused IPv4 inside it (mapped, translated, compatible, NAT64, 6to4, Teredo),
// nor the local-use NAT64 prefix 64:ff9b:1::/48 whatever it carries (RFC 8215: never global). The check
// runs in the connector, on the addresses the name resolved to and again on the socket's peer, so a name
// that re-resolves (DNS rebinding) cannot slip by.
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import { Agent, buildConnector } from 'undici';
import { FieldErrorList } from './errors.ts';

const BLOCKED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['168.63.129.16', 32, 'ipv4', 'cloud metadata'],
  ['169.254.0.0', 16, 'ipv4', 'link-local or cloud metadata'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'private (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'ipv4', 'reserved (documentation)'],
  ['192.88.99.0', 24, 'ipv4', 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'private (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'reserved (documentation)'],
  ['203.0.113.0', 24, 'ipv4', 'reserved (documentation)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved or broadcast'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'private (local-use NAT64)'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['2001:2::', 48, 'ipv6', 'reserved (benchmarking)'],
  ['2001:10::', 28, 'ipv6', 'reserved (ORCHID)'],
  ['2001:20::', 28, 'ipv6', 'reserved (ORCHIDv2)'],
  ['2001:db8::', 32, 'ipv6', 'reserved (documentation)'],
  ['3fff::', 20, 'ipv6', 'reserved (documentation)'],
  ['5f00::', 16, 'ipv6', 'reserved (SRv6 segment identifiers)'],
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

/** The 16 bytes of an IPv6 address (any textual form, dotted IPv4 tail included), or null. */
function ipv6Bytes(address: string): Uint8Array | null {
  if (!net.isIPv6(address)) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === null ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    bytes[2 * i] = v >> 8;
    bytes[2 * i + 1] = v & 255;
  });
  return bytes;
}

const dottedAt = (b: Uint8Array, at: number, xor = 0): string => [0, 1, 2, 3].map((i) => (b[at + i] ^ xor) & 255).join('.');

/** The IPv4 addresses an IPv6 address carries and would reach: mapped, translated, compatible, NAT64, 6to4, Teredo. */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  if (!b) return [];
  const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  // ::a.b.c.d (compatible) and ::ffff:a.b.c.d (mapped); :: and ::1 are refused as themselves.
  if (zeros(0, 10) && ((b[10] === 0 && b[11] === 0 && !zeros(12, 15)) || (b[10] === 255 && b[11] === 255))) return [dottedAt(b, 12)];
  // ::ffff:0:a.b.c.d (IPv4-translated, ::ffff:0:0/96, RFC 2765): [::ffff:0:a9fe:a9fe] is 169.254.169.254.
  if (zeros(0, 8) && b[8] === 255 && b[9] === 255 && b[10] === 0 && b[11] === 0) return [dottedAt(b, 12)];
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return [dottedAt(b, 12)]; // NAT64 64:ff9b::/96
  if (b[0] === 0x20 && b[1] === 0x02) return [dottedAt(b, 2)]; // 6to4 2002:V4ADDR::/48
  // Teredo 2001:0::/32: the server's IPv4 in plain, the client's obfuscated (inverted) in the last 32 bits.
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [dottedAt(b, 4), dottedAt(b, 12, 255)];
  return [];
}

/** This host's non-loopback addresses: a delivery to one of them reaches a listener on this machine. */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => !i.internal).map((i) => i.address.replace(/%.*$/, '')));
}

const sameAddress = (a: string, b: string): boolean => {
  if (net.isIPv4(a) && net.isIPv4(b)) return a === b;
  const x = ipv6Bytes(a);
  const y = ipv6Bytes(b);
  return x !== null && y !== null && x.every((v, i) => v === y[i]);
};

/** Why an address may not be called (e.g. "loopback"), or null for a public address. */
export function blockedReason(address: string, ownAddresses: string[] = hostAddresses()): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 0) return 'not an IP address';
  if (ownAddresses.some((own) => sameAddress(own, bare))) return "this host's own";
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, family: f, reason } of lists) if (f === type && list.check(bare, type)) return reason;
  for (const v4 of family === 6 ? embeddedIpv4(bare) : []) {
    const reason = blockedReason(v4, ownAddresses);
    if (reason) return `${reason} (IPv4 ${v4} embedded in IPv6)`;
  }
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

/** Property names whose value names a host to connect to: url, Url, ftpHostIp, smtpHost, server, endpoint… */
const ADDRESS_FIELD = /(^|[a-z])(url|uri|host|hostip|server|endpoint)$/i;

/**
 * Settings saved for later runs (automation definitions, configuration keys) that name a host by a literal
 * address the guard refuses: one error per such field, with its path, so the save answers 400 instead of a
 * run failing later. `depth` stops the walk that many levels down (1: the object's own fields). Names are left to the connector (resolving them at save proves nothing: they re-resolve);
 * values holding an expression (`{{…}}`) are decided at run time.
 */
export function literalAddressErrors(value: unknown, path: string, allowPrivate: boolean, opts: { depth?: number } = {}): FieldErrorList {
  const errors = new FieldErrorList();
  if (allowPrivate) return errors;
  const maxDepth = opts.depth ?? Number.POSITIVE_INFINITY;
  const stack: [unknown, string, string, number][] = [[value, path, '', 0]];
  while (stack.length > 0) {
    const [current, at, key, depth] = stack.pop() as [unknown, string, string, number];
    if (depth > maxDepth) continue;
    if (typeof current === 'string') {
      if (!ADDRESS_FIELD.test(key) || current.includes('{{')) continue;
      const problem = hostProblem(current);
      if (problem) errors.push({ path: at, message: problem });
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${at}/${i}`, key, depth + 1]);
    } else if (current !== null && typeof current === 'object') {
      for (const [k, v] of Object.entries(current).reverse()) stack.push([v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, k, depth + 1]);
    }
  }
  return errors;
}

/** The refusal for a URL or host[:port] whose host is a refused literal address (or localhost), else null. */
function hostProblem(text: string): string | null {
  const trimmed = text.trim();
  let host: string | null = null;
  if (net.isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) host = trimmed;
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    try {
      host = new URL(trimmed).hostname;
    } catch {
      return null;
    }
  } else host = /^\[?([^\]/\s]+?)\]?(?::\d{1,5})?$/.exec(trimmed)?.[1] ?? null;
  if (!host) return null;
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) === 0) return bare.toLowerCase() === 'localhost' ? refusal(bare, bare, 'loopback').message : null;
  const reason = blockedReason(bare);
  return reason ? refusal(bare, bare, reason).message : null;
}
