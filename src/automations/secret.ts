// Taint tracking for configuration-key secrets inside a run. ConfigurationKeys hands its secret-named
// properties out as Secret values; every pipe or template that reads a Secret answers a Secret (so a
// password's Base64 or a "user:{{password}}" text stays one); a Secret serialises as ******** wherever it
// is written (results, logs, e-mails, templates, errors). Only the fields that consume credentials
// (SFTP password and key, OAuth2 client and user secrets, HTTP auth headers) see the clear value.
import { inspect } from 'node:util';
import { MASK, SECRET_NAME } from './mask.ts';

export class Secret {
  readonly #value: unknown;
  constructor(value: unknown) {
    this.#value = value;
  }
  reveal(): unknown {
    return this.#value;
  }
  toJSON(): string {
    return MASK;
  }
  toString(): string {
    return MASK;
  }
  [inspect.custom](): string {
    return MASK;
  }
}

export const taint = (value: unknown): Secret => (value instanceof Secret ? value : new Secret(value));

/** Whether a Secret is anywhere inside the value (walks plain lists and objects). */
export function holdsSecret(value: unknown, depth = 0): boolean {
  if (value instanceof Secret) return true;
  if (value === null || typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) return value.some((v) => holdsSecret(v, depth + 1));
  for (const k in value) if (Object.hasOwn(value, k) && holdsSecret((value as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/** The value with every Secret replaced: by its clear value (`reveal`) or by ******** (`conceal`). */
function replaceSecrets(value: unknown, reveal: boolean, depth = 0): unknown {
  if (value instanceof Secret) return reveal ? replaceSecrets(value.reveal(), true, depth + 1) : MASK;
  if (value === null || typeof value !== 'object' || depth > 64 || !holdsSecret(value)) return value;
  if (Array.isArray(value)) return value.map((v) => replaceSecrets(v, reveal, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = replaceSecrets(v, reveal, depth + 1);
  return out;
}

export const reveal = (value: unknown): unknown => replaceSecrets(value, true);
export const conceal = (value: unknown): unknown => replaceSecrets(value, false);

/** A configuration key's value with its secret-named properties (at any depth) as Secrets. */
export function secretsOf(value: unknown, secretKey = false): unknown {
  if (Array.isArray(value)) return value.map((v) => secretsOf(v, secretKey));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = secretsOf(v, secretKey || SECRET_NAME.test(k));
    return out;
  }
  return secretKey && value !== null && value !== undefined ? new Secret(value) : value;
}

/**
 * Request headers of Rest, Download and OAuth2Authentication: a Secret is revealed in the value of a header
 * named for credentials (Authorization, X-Api-Key, …), concealed in any other.
 */
export const AUTH_HEADER = /authorization|token|secret|password|api-?key|cookie|^x-app|credential|signature/i;

export function revealAuthHeaders(value: unknown): unknown {
  if (!holdsSecret(value)) return value;
  const one = (name: unknown, v: unknown) => (typeof name === 'string' && AUTH_HEADER.test(name) ? reveal(v) : conceal(v));
  if (Array.isArray(value))
    return value.map((p) => {
      if (p === null || typeof p !== 'object' || p instanceof Secret) return conceal(p);
      const pair = p as Record<string, unknown>;
      const name = pair.name ?? pair.Name ?? pair.key ?? pair.Key;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(pair)) out[k] = k === 'value' || k === 'Value' ? one(name instanceof Secret ? null : name, v) : conceal(v);
      return out;
    });
  if (value !== null && typeof value === 'object' && !(value instanceof Secret))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, one(k, v)]));
  return conceal(value);
}

/** Per action type, the fields whose Secrets are revealed (credential consumers); every other field conceals them. */
const SFTP = ['ftpPassword', 'ftpPrivateKeyFile', 'ftpPrivateKey', 'ftpPassphrase'];
export const CREDENTIAL_FIELDS: Record<string, readonly string[]> = {
  SftpListFiles: SFTP,
  SftpDownload: SFTP,
  SftpUpload: SFTP,
  SftpMoveTo: SFTP,
  OAuth2Authentication: ['clientId', 'clientSecret', 'username', 'password', 'oauthClientId', 'oauthClientSecret'],
  AzureAdAuthentication: ['clientId', 'clientSecret', 'CertificatePfx', 'CertificatePfxPassword'],
  AzureAdCertificateAuthentication: ['clientId', 'CertificatePfx', 'CertificatePfxPassword'],
};
export const HEADER_FIELDS: Record<string, readonly string[]> = {
  Rest: ['requestHeaders'],
  Download: ['requestHeaders'],
  OAuth2Authentication: ['requestHeaders'],
};
