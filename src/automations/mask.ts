// What a run log may show: secrets masked (configuration-key passwords, Authorization headers,
// ftpPassword, private keys, and any value a configuration key revealed during the run) and large
// values trimmed, so the log stays readable and never becomes a copy of a password or a file.

export const MASK = '********';
/** Property names whose values are secrets wherever they appear. */
const SECRET_NAME = /password|secret|token|authorization|privatekey|apikey|cookie/i;
const LOG_LIMIT = 4096;

function maskString(s: string, secrets: Set<string>): string {
  let out = s;
  for (const secret of secrets) if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
}

export function maskForLog(value: unknown, secrets: Set<string>, secretKey = false): unknown {
  if (value === undefined) return undefined;
  if (secretKey && value !== null && typeof value !== 'object') return MASK;
  if (typeof value === 'string') return maskString(value, secrets);
  if (Array.isArray(value)) return value.map((v) => maskForLog(v, secrets, secretKey));
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

/** The value's JSON size, whether it passes the limit, and what the log keeps of it (trimmed past 4 KB). */
export function trimmedJson(value: unknown, limit: number): { bytes: number; tooLarge: boolean; logValue: unknown } {
  if (value === undefined) return { bytes: 0, tooLarge: false, logValue: undefined };
  const text = JSON.stringify(value) ?? 'null';
  const bytes = Buffer.byteLength(text);
  if (bytes > limit) return { bytes, tooLarge: true, logValue: undefined };
  if (text.length <= LOG_LIMIT) return { bytes, tooLarge: false, logValue: value };
  return { bytes, tooLarge: false, logValue: `${text.slice(0, LOG_LIMIT)}… (trimmed; ${bytes} bytes in all)` };
}

/** Masked first (so a trimmed text cannot show a secret-named value), then trimmed. */
export const forLog = (value: unknown, secrets: Set<string>): unknown => trimmedJson(maskForLog(value, secrets), Number.MAX_SAFE_INTEGER).logValue;
