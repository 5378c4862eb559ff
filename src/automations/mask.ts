// What a run log may show: secrets masked (configuration-key passwords, Authorization headers,
// ftpPassword, private keys, and any value a configuration key revealed during the run) and large
// values trimmed, so the log stays readable and never becomes a copy of a password or a file.

import { jsonBytes, jsonPrefix } from './size.ts';

export const MASK = '********';
/** Property names whose values are secrets wherever they appear. */
export const SECRET_NAME = /password|secret|token|authorization|privatekey|apikey|cookie/i;
const LOG_LIMIT = 4096;

/** A PEM private key block: a secret wherever it shows (a key downloaded as a file, then used by SFTP). */
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|$)/g;

function maskString(s: string, secrets: Set<string>): string {
  let out = s.includes('PRIVATE KEY-----') ? s.replace(PEM_PRIVATE_KEY, MASK) : s;
  for (const secret of secrets) if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
}

export function maskForLog(value: unknown, secrets: Set<string>, secretKey = false): unknown {
  if (value === undefined) return undefined;
  if (secretKey && value !== null && typeof value !== 'object') return MASK;
  if (typeof value === 'string') return maskString(value, secrets);
  if (Array.isArray(value)) return value.map((v) => maskForLog(v, secrets, secretKey));
  // A Secret (secret.ts) writes itself as ********, a Date as its ISO text.
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return maskForLog((value as { toJSON: () => unknown }).toJSON(), secrets, secretKey);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    // requestHeaders: [{name: 'Authorization', value: '...'}]
    const pairName = typeof obj.name === 'string' ? obj.name : typeof obj.Name === 'string' ? obj.Name : null;
    const pairSecret = pairName !== null && SECRET_NAME.test(pairName);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      const isValue = k === 'value' || k === 'Value';
      out[k] = maskForLog(v, secrets, secretKey || SECRET_NAME.test(k) || (pairSecret && isValue));
    }
    return out;
  }
  return value;
}

/** Values under secret-named properties, to be masked wherever else they turn up in the log. */
export function collectSecrets(value: unknown, into: Set<string>, secretKey = false): void {
  if (typeof value === 'string' || typeof value === 'number') {
    if (secretKey) into.add(String(value));
  } else if (Array.isArray(value)) for (const v of value) collectSecrets(v, into, secretKey);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) collectSecrets(v, into, secretKey || SECRET_NAME.test(k));
}

/**
 * What the log keeps of a value: masked; past 4 KB of JSON, the masked start of its JSON text and its size.
 * A large value is never copied or serialised whole for this.
 */
export function forLog(value: unknown, secrets: Set<string>): unknown {
  if (value === undefined) return undefined;
  if (jsonBytes(value, LOG_LIMIT) <= LOG_LIMIT) return maskForLog(value, secrets);
  const bytes = jsonBytes(value, Number.MAX_SAFE_INTEGER);
  // The start of the text is cut from a masked copy of at most LOG_LIMIT characters of each string.
  const head = jsonPrefix(maskForLog(shallowHead(value), secrets), LOG_LIMIT).text;
  return `${head}… (trimmed; ${bytes} bytes in all)`;
}

/** The first items of lists and properties of objects, strings cut, at most LOG_LIMIT nodes: enough for a 4 KB start. */
function shallowHead(value: unknown): unknown {
  let nodes = 0;
  const walk = (v: unknown, depth: number): unknown => {
    nodes++;
    if (typeof v === 'string') return v.length > LOG_LIMIT ? v.slice(0, LOG_LIMIT) : v;
    if (v === null || typeof v !== 'object' || depth > 32) return v;
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length && nodes < LOG_LIMIT; i++) out.push(walk(v[i], depth + 1));
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const k in v) {
      if (nodes >= LOG_LIMIT) break;
      if (Object.hasOwn(v, k)) out[k] = walk((v as Record<string, unknown>)[k], depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}
