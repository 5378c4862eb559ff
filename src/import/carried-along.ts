// What the import carries along besides the named queries: the custom tables (schema, roles and rows,
// read through the source's Custom Tables API) and the webhook subscriptions (read through its webhook
// subscription API, created inactive with a new secret each, listed in the report). Decision 0053.

import { deleteUnseenRows, type MirroredTable, mirrorRows, mirrorSchema, type RowObject } from '../custom-tables/service.ts';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';
import { checkedDetailFilters, mirrorSubscription, type SubscriptionInput } from '../webhooks/service.ts';
import { ImportError, type SourceClient } from './client.ts';

/** Rows of a custom table per page of the source's rows API (its largest `take`). */
const ROWS_PAGE = 10_000;
/** Bounds on what a source's lists may grow. */
const MAX_TABLES = 1000;
const MAX_SUBSCRIPTIONS = 10_000;

export interface CarriedCounts {
  rowsRead: number;
  rowsWritten: number;
  rowsDeleted: number;
}

/** A webhook subscription created by the import: inactive, with this new secret (the source's cannot be read). */
export interface NewWebhookSecret {
  id: string;
  name: string;
  secret: string;
}

/** The source app lacks the role (403): the step is left out and said so, rather than failing the import. */
const refused = (err: unknown): boolean => err instanceof ImportError && err.status === 403;

const listOf = (body: unknown, what: string, max: number): Record<string, unknown>[] => {
  const list = Array.isArray(body) ? body : (body as { data?: unknown })?.data;
  if (!Array.isArray(list)) throw new ImportError(`source answered a malformed list of ${what}`);
  if (list.length > max) throw new ImportError(`source lists more than ${max} ${what}`);
  return list as Record<string, unknown>[];
};

/** Every custom table of the source, its schema and rows; the target's rows the source does not have are removed. */
export async function importCustomTables(
  trx: Trx,
  client: SourceClient,
  tenantId: string,
  removeUnseen: boolean,
): Promise<CarriedCounts | { skipped: string }> {
  let tables: Record<string, unknown>[];
  try {
    tables = listOf(await client.getJson('/api/v3/custom-tables', 'token'), 'custom tables', MAX_TABLES);
  } catch (err) {
    if (refused(err)) return { skipped: 'the source app lacks the CustomTablesRead role' };
    throw err;
  }
  const counts: CarriedCounts = { rowsRead: 0, rowsWritten: 0, rowsDeleted: 0 };
  for (const source of tables as unknown as MirroredTable[]) {
    const { table, changed } = await mirrorSchema(trx, tenantId, source);
    counts.rowsWritten += changed;
    const keys = [];
    const name = encodeURIComponent(source.TableName);
    for (let skip = 0; ; skip += ROWS_PAGE) {
      const page = listOf(await client.getJson(`/api/v3/custom-tables/${name}/rows/values?skip=${skip}&take=${ROWS_PAGE}`, 'token'), 'rows', ROWS_PAGE);
      const r = await mirrorRows(trx, table, page as unknown as RowObject[]);
      counts.rowsRead += page.length;
      counts.rowsWritten += r.written;
      keys.push(...r.keys);
      if (page.length < ROWS_PAGE) break;
    }
    if (removeUnseen) counts.rowsDeleted += await deleteUnseenRows(trx, table, keys);
  }
  return counts;
}

/** A field of the source's subscription, whatever the case of its name (the platform answers PascalCase). */
const field = (o: Record<string, unknown>, name: string): unknown => {
  const k = Object.keys(o).find((key) => key.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : o[k];
};
const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/**
 * Every webhook subscription of the source under its id: a new one inactive with a new secret (listed in
 * the report), one already imported brought up to date (its secret and Active kept). Subscriptions that
 * run an automation are left out: automations are not imported.
 */
export async function importWebhookSubscriptions(
  trx: Trx,
  client: SourceClient,
  tenantId: string,
  ctx: { box: SecretBox; allowPrivateNetworks: boolean },
): Promise<(CarriedCounts & { secrets: NewWebhookSecret[]; leftOut: string[] }) | { skipped: string }> {
  let subscriptions: Record<string, unknown>[];
  try {
    subscriptions = listOf(await client.getJson('/api/webhook-subscriptions'), 'webhook subscriptions', MAX_SUBSCRIPTIONS);
  } catch (err) {
    if (refused(err)) return { skipped: 'the source app lacks the WebhookSubscriptionGet role' };
    throw err;
  }
  const out = { rowsRead: subscriptions.length, rowsWritten: 0, rowsDeleted: 0, secrets: [] as NewWebhookSecret[], leftOut: [] as string[] };
  for (const s of subscriptions) {
    const id = text(field(s, 'id'));
    const name = text(field(s, 'name')) ?? '';
    if (!id) throw new ImportError('source answered a webhook subscription without an id');
    if (field(s, 'isAutomation') === true) {
      out.leftOut.push(`${name} (${id}): runs an automation`);
      continue;
    }
    const filters = checkedDetailFilters(field(s, 'detailFilters'));
    if (filters === null) {
      out.leftOut.push(`${name} (${id}): its detail filters are not valid ones`);
      continue;
    }
    const input: SubscriptionInput = {
      Name: name,
      Description: text(field(s, 'description')),
      ActionType: text(field(s, 'actionType')) ?? '',
      DocumentType: text(field(s, 'documentType')) ?? '',
      Url: text(field(s, 'url')),
      BusinessObjectTypeName: text(field(s, 'businessObjectTypeName')),
      DetailFilters: filters,
    };
    let r: { secret: string | null; changed: boolean };
    try {
      r = await mirrorSubscription(trx, tenantId, id, input, { ...ctx, userId: null });
    } catch (err) {
      // The target refuses it (a URL it may not call, a document type it lacks): said, not fatal.
      if (!(err instanceof HttpProblem) || err.status !== 400) throw err;
      out.leftOut.push(`${name} (${id}): ${err.message}`);
      continue;
    }
    if (r.changed) out.rowsWritten++;
    if (r.secret) out.secrets.push({ id, name, secret: r.secret });
  }
  return out;
}
