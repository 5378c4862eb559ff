// Configuration keys (e.g. SFTP-HRFEED): named JSON objects. Properties named like secrets
// (/password|secret|token|privatekey/i, at any depth) are stored encrypted with the tenant-independent SecretBox and
// shown in clear only to the Administrator role; everyone else sees "********". Sending "********" back
// for a secret keeps the stored value, so a masked read can be edited and written without losing it.

import { type Actor, emitWrite, upsertRow } from '../domain/writes.ts';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { Trx } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';

export const MASK = '********';
// privateKey: the SFTP-HRFEED key may hold an SSH private key instead of ftpPassword.
const SECRET_NAME = /password|secret|token|privatekey/i;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export interface ConfigurationKeyView {
  key: string;
  value: JsonObject;
  modifiedOnUtc: string;
}

/** Walks value; every string (or other scalar) under a secret-named property goes through fn. */
function mapSecrets(value: Json, fn: (secret: Json, previous: Json | undefined) => Json, previous?: Json, secret = false): Json {
  if (Array.isArray(value)) return value.map((v, i) => mapSecrets(v, fn, Array.isArray(previous) ? previous[i] : undefined, secret));
  if (value && typeof value === 'object') {
    const prev = previous && typeof previous === 'object' && !Array.isArray(previous) ? previous : {};
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSecrets(v, fn, prev[k], secret || SECRET_NAME.test(k))]));
  }
  return secret && value !== null ? fn(value, previous) : value;
}

function seal(box: SecretBox, value: JsonObject, stored: JsonObject | null): JsonObject {
  return mapSecrets(
    value,
    (secret, previous) => {
      if (secret === MASK && typeof previous === 'string') return previous;
      return box.encrypt(JSON.stringify(secret));
    },
    stored ?? undefined,
  ) as JsonObject;
}

function open(box: SecretBox, value: JsonObject, reveal: boolean): JsonObject {
  return mapSecrets(value, (sealed) => {
    if (!reveal) return MASK;
    if (typeof sealed !== 'string') return sealed;
    try {
      return JSON.parse(box.decrypt(sealed)) as Json;
    } catch {
      return sealed;
    }
  }) as JsonObject;
}

export async function getConfigurationKey(trx: Trx, box: SecretBox, key: string, reveal: boolean): Promise<ConfigurationKeyView> {
  const row = await trx.selectFrom('configuration_keys').select(['key', 'value', 'modified_on_utc']).where('key', '=', key).executeTakeFirst();
  if (!row) throw notFound(`No configuration key named "${key}".`);
  return { key: row.key, value: open(box, row.value as JsonObject, reveal), modifiedOnUtc: new Date(row.modified_on_utc).toISOString() };
}

export async function putConfigurationKey(
  trx: Trx,
  actor: Actor,
  box: SecretBox,
  key: string,
  value: JsonObject,
  reveal: boolean,
): Promise<{ view: ConfigurationKeyView; inserted: boolean }> {
  const current = await trx.selectFrom('configuration_keys').select('value').where('key', '=', key).forUpdate().executeTakeFirst();
  const stored = (current?.value as JsonObject | undefined) ?? null;
  // Secrets re-encrypt with a fresh nonce each time; keep the stored ciphertext when the clear text is the same.
  const sealed = mapSecrets(
    seal(box, value, stored),
    (secret, previous) => {
      if (typeof previous === 'string' && typeof secret === 'string' && previous !== secret) {
        try {
          if (box.decrypt(previous) === box.decrypt(secret)) return previous;
        } catch {}
      }
      return secret;
    },
    stored ?? undefined,
  ) as JsonObject;
  const result = await upsertRow(trx, actor, { table: 'configuration_keys', key: [['key', key]], values: { key, value: JSON.stringify(sealed) } });
  if (result.inserted || 'value' in result.changes) {
    await emitWrite(trx, actor, 'ConfigurationKey', { ...result, changes: { ...result.changes, value: open(box, sealed, false) } });
  }
  const row = result.row;
  return {
    view: { key, value: open(box, row.value as JsonObject, reveal), modifiedOnUtc: new Date(row.modified_on_utc as string).toISOString() },
    inserted: result.inserted,
  };
}
