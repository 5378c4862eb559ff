// Standard Webhooks signatures (https://www.standardwebhooks.com): webhook-id, webhook-timestamp and
// webhook-signature = "v1," + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the subscription's Secret.
import { createHmac, type KeyObject, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new `whsec_` secret: 32 random bytes, base64 (the form Standard Webhooks libraries expect). */
export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** Why a Secret cannot be used, or null. `whsec_` secrets must carry base64 of 16 to 64 bytes. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(SECRET_PREFIX)) return secret.length > 0 ? null : 'must not be empty';
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!BASE64_RE.test(b64)) return 'a whsec_ secret must be followed by base64';
  const bytes = Buffer.from(b64, 'base64').length;
  return bytes >= 16 && bytes <= 64 ? null : 'a whsec_ secret must carry 16 to 64 bytes';
}

/** The HMAC key: the decoded base64 of a `whsec_` secret, else the Secret's UTF-8 bytes ("raw" format). */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX) ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

export function sign(key: Buffer | KeyObject, webhookId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.`).update(body).digest('base64')}`;
}

/** Headers of one attempt; the timestamp is the attempt's own, the id is the invocation's on every attempt. */
export function signatureHeaders(key: Buffer | KeyObject, webhookId: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(key, webhookId, timestamp, body),
  };
}
