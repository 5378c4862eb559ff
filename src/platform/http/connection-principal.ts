// The principal an app's headers were last verified as on one connection, so that a keep-alive client
// sending the same X-AppTenant/X-AppId/X-AppSecret/X-AppUser again skips hashing the secret and the
// credential cache (decision 0060). It is used only while the auth service's generation is the one it was
// verified under (a rotate, revoke or role change, here or in another process by NOTIFY atrium_auth, moves
// it) and for at most KEEP_MS; it lives on the socket, so there is at most one per open connection.
import type { Socket } from 'node:net';
import type { Principal } from '../auth/principal.ts';

/** Shorter than any credential cache behind it (apps 30 s, users 5 s). */
export const KEEP_MS = 1000;

const KEPT = Symbol('atrium.connectionPrincipal');

interface Kept {
  tenantId: string | null;
  appId: string;
  secret: string;
  appUser: unknown;
  generation: number;
  until: number;
  principal: Principal;
  /** The rate limit's key for the principal, built once. */
  rateKey: string;
}

type Carrier = Socket & { [KEPT]?: Kept };

export interface AppCredentials {
  tenantId: string | null;
  appId: unknown;
  secret: unknown;
  appUser: unknown;
}

/** The kept principal when `c` are exactly the credentials it was verified with, under `generation`, not expired. */
export function keptPrincipal(socket: Socket | null | undefined, c: AppCredentials, generation: number, now: number): Kept | null {
  const kept = (socket as Carrier | null | undefined)?.[KEPT];
  if (!kept || kept.generation !== generation || kept.until <= now) return null;
  if (kept.tenantId !== c.tenantId || kept.appId !== c.appId || kept.appUser !== c.appUser || typeof c.secret !== 'string') return null;
  return sameSecret(c.secret, kept.secret) ? kept : null;
}

/**
 * The secret in constant time: on a connection a proxy shares between clients, another caller's guess must not
 * learn from how long the comparison took. Every character is compared whatever the first difference (only the
 * length shows, as with timingSafeEqual), without the buffer a per-request Buffer.from would allocate.
 */
export function sameSecret(given: string, kept: string): boolean {
  if (given.length !== kept.length) return false;
  let differ = 0;
  for (let i = 0; i < kept.length; i++) differ |= given.charCodeAt(i) ^ kept.charCodeAt(i);
  return differ === 0;
}

/** Keeps `principal` on the connection for the credentials it was verified with under `generation`. */
export function keepPrincipal(socket: Socket | null | undefined, c: AppCredentials, generation: number, principal: Principal, rateKey: string): void {
  if (!socket || typeof c.appId !== 'string' || typeof c.secret !== 'string') return;
  (socket as Carrier)[KEPT] = {
    tenantId: c.tenantId,
    appId: c.appId,
    secret: c.secret,
    appUser: c.appUser,
    generation,
    until: Date.now() + KEEP_MS,
    principal,
    rateKey,
  };
}
