// Saved queries (decision 0054): a named query, its query builder and parameters, and how the console shows it
// (a table's columns and widths, or a chart's settings), stored per tenant. Private to who saved it until shared
// with the tenant; only its owner (or an Administrator) changes or deletes it. Knows nothing of HTTP.
import { type Selectable, sql } from 'kysely';
import { plan } from '../extraction/service.ts';
import { isAdministrator, type Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import type { SavedQueries } from '../platform/db/schema.generated.ts';
import { badRequest, conflict, HttpProblem, notFound } from '../platform/errors.ts';

/** Saved queries one user (or app) may keep; a list answers at most MAX_TAKE of them. */
export const MAX_PER_OWNER = 500;
export const MAX_TAKE = 500;
/** The JSON a saved query carries (query builder, parameters, view), as the table's check bounds it. */
export const MAX_JSON_BYTES = 65_536;

export interface SavedQueryInput {
  name: string;
  query: string;
  queryBuilder?: Record<string, unknown> | null;
  parameters?: Record<string, unknown> | null;
  view?: Record<string, unknown> | null;
  shared?: boolean;
}

export interface SavedQueryView {
  id: string;
  name: string;
  query: string;
  queryBuilder: Record<string, unknown>;
  parameters: Record<string, unknown>;
  view: Record<string, unknown>;
  shared: boolean;
  ownerUserId: string | null;
  /** The caller may rename, change, share or delete it. */
  mine: boolean;
  createdOnUtc: string;
  modifiedOnUtc: string;
}

type Row = Selectable<SavedQueries>;

const owns = (p: Principal, r: Pick<Row, 'owner_user_id' | 'owner_app_id'>): boolean =>
  p.userId ? r.owner_user_id === p.userId : r.owner_user_id === null && r.owner_app_id === p.appId;

const asObject = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function viewOf(p: Principal, r: Row): SavedQueryView {
  return {
    id: r.id,
    name: r.name,
    query: r.named_query,
    queryBuilder: asObject(r.query_builder),
    parameters: asObject(r.parameters),
    view: asObject(r.view),
    shared: r.shared,
    ownerUserId: r.owner_user_id,
    mine: owns(p, r),
    createdOnUtc: r.created_on_utc.toISOString(),
    modifiedOnUtc: r.modified_on_utc.toISOString(),
  };
}

/** What the caller sees: their own and those shared with the tenant. */
const visible = (trx: Trx, p: Principal) =>
  trx
    .selectFrom('saved_queries')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('shared', '=', true),
        p.userId
          ? eb('owner_user_id', '=', p.userId)
          : eb.and([eb('owner_user_id', 'is', null), eb('owner_app_id', '=', p.appId ?? '00000000-0000-0000-0000-000000000000')]),
      ]),
    );

/**
 * The query builder and parameters must plan against the named query as the caller could run it (its fields,
 * filters and order exist): a saved query that cannot run is refused when saved, not when opened. Answers the
 * named query's canonical name.
 */
async function check(trx: Trx, p: Principal, input: Pick<SavedQueryInput, 'query' | 'queryBuilder' | 'parameters' | 'view'>): Promise<string> {
  const bytes = Buffer.byteLength(JSON.stringify([input.queryBuilder ?? {}, input.parameters ?? {}, input.view ?? {}]));
  if (bytes > MAX_JSON_BYTES) throw badRequest(`queryBuilder, parameters and view take at most ${MAX_JSON_BYTES} bytes of JSON together (${bytes} given)`);
  try {
    const planned = await plan(trx, p, input.query, { queryBuilder: input.queryBuilder ?? null, parameters: input.parameters ?? null }, true);
    return planned.query.name;
  } catch (err) {
    // The plan's field paths are those of a dynamic-execute body; the saved query's body has the same shape.
    if (err instanceof HttpProblem && err.status === 404) throw badRequest(`query: ${err.message}`, [{ path: '/query', message: err.message }]);
    throw err;
  }
}

export async function listSavedQueries(trx: Trx, p: Principal, skip: number, take: number): Promise<{ data: SavedQueryView[]; totalCount: number }> {
  const rows = await visible(trx, p).orderBy(sql`name collate atrium_ci`).orderBy('id').offset(skip).limit(Math.min(take, MAX_TAKE)).execute();
  const { n } = await trx
    .selectFrom(visible(trx, p).as('v'))
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return { data: rows.map((r) => viewOf(p, r)), totalCount: Number(n) };
}

export async function getSavedQuery(trx: Trx, p: Principal, id: string): Promise<SavedQueryView> {
  const row = await visible(trx, p).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`No saved query ${id} (or it is another user's and not shared).`);
  return viewOf(p, row);
}

export async function createSavedQuery(trx: Trx, p: Principal, input: SavedQueryInput): Promise<SavedQueryView> {
  const query = await check(trx, p, input);
  // Serialises an owner's saves, so two at once cannot pass the bound together.
  await sql`select pg_advisory_xact_lock(hashtext(${`saved_queries:${p.tenantId}:${p.userId ?? p.appId}`}))`.execute(trx);
  const mine = await trx
    .selectFrom('saved_queries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where(p.userId ? sql<boolean>`owner_user_id = ${p.userId}` : sql<boolean>`owner_user_id is null and owner_app_id = ${p.appId}`)
    .executeTakeFirstOrThrow();
  if (Number(mine.n) >= MAX_PER_OWNER) throw conflict(`You have ${MAX_PER_OWNER} saved queries, the most one user may keep: delete some first.`);
  const row = await trx
    .insertInto('saved_queries')
    .values({
      tenant_id: p.tenantId,
      name: input.name,
      named_query: query,
      query_builder: JSON.stringify(input.queryBuilder ?? {}),
      parameters: JSON.stringify(input.parameters ?? {}),
      view: JSON.stringify(input.view ?? {}),
      shared: input.shared ?? false,
      owner_user_id: p.userId,
      owner_app_id: p.userId ? null : p.appId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return viewOf(p, row);
}

/** Rename, change or share: the properties given replace the stored ones. */
export async function updateSavedQuery(trx: Trx, p: Principal, id: string, patch: Partial<SavedQueryInput>): Promise<SavedQueryView> {
  const before = await trx.selectFrom('saved_queries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!before || !(before.shared || owns(p, before))) throw notFound(`No saved query ${id} (or it is another user's and not shared).`);
  if (!owns(p, before) && !isAdministrator(p)) throw new HttpProblem(403, 'Only who saved this query (or an Administrator) may change it.');
  const merged = {
    query: patch.query ?? before.named_query,
    queryBuilder: patch.queryBuilder !== undefined ? patch.queryBuilder : asObject(before.query_builder),
    parameters: patch.parameters !== undefined ? patch.parameters : asObject(before.parameters),
    view: patch.view !== undefined ? patch.view : asObject(before.view),
  };
  const query = await check(trx, p, merged);
  const row = await trx
    .updateTable('saved_queries')
    .set({
      name: patch.name ?? before.name,
      named_query: query,
      query_builder: JSON.stringify(merged.queryBuilder ?? {}),
      parameters: JSON.stringify(merged.parameters ?? {}),
      view: JSON.stringify(merged.view ?? {}),
      shared: patch.shared ?? before.shared,
      modified_on_utc: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return viewOf(p, row);
}

export async function deleteSavedQuery(trx: Trx, p: Principal, id: string): Promise<void> {
  const row = await trx.selectFrom('saved_queries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row || !(row.shared || owns(p, row))) throw notFound(`No saved query ${id} (or it is another user's and not shared).`);
  if (!owns(p, row) && !isAdministrator(p)) throw new HttpProblem(403, 'Only who saved this query (or an Administrator) may delete it.');
  await trx.deleteFrom('saved_queries').where('id', '=', id).execute();
}
