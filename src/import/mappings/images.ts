// Images of companies, users and clients: the named queries show only whether one exists (…HasImage, i.e.
// `image_file_id is not null`), never its bytes. The import carries the fact: an entity the source shows
// with an image points at a file row of its own, "image held by the source, not carried over" (no bytes,
// no link), in one folder of such rows; one shown without an image points at none. Decision 0064.
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { TableWrite, Values } from '../mappings.ts';
import { derivedId, id } from './helpers.ts';

/** The tables whose rows have an image (`image_file_id`). */
export type ImageTable = 'companies' | 'users' | 'commercial_clients';

/** One image flag a query shows: the entity's table, its id column and its flag column. */
export interface ShownImage {
  table: ImageTable;
  idColumn: string;
  flagColumn: string;
}

/** The folder the placeholder files are kept in: the same id in every tenant (rows are per tenant). */
export const SOURCE_IMAGES_FOLDER = derivedId('folders', 'images held by the source');
export const SOURCE_IMAGES_FOLDER_NAME = 'Images held by the source (atrium import)';

/** The placeholder file of one entity's image. */
export const sourceImageFileId = (table: ImageTable, entityId: string): string => derivedId('files', 'image held by the source', table, entityId);

const KIND: Record<ImageTable, string> = { companies: 'company', users: 'user', commercial_clients: 'client' };

/** What one row shows of an image: the entity and whether it has one. */
interface Fact {
  table: ImageTable;
  id: string;
  has: boolean;
}

/** What a row shows of images: each entity it names with its flag (a row without the id or flag tells nothing). */
function factsOf(r: SourceRow, shown: ShownImage[]): Fact[] {
  const facts: Fact[] = [];
  for (const x of shown) {
    const entityId = id(r[x.idColumn]);
    const has = r[x.flagColumn];
    if (entityId && typeof has === 'boolean') facts.push({ table: x.table, id: entityId, has });
  }
  return facts;
}

/**
 * The writes that carry the image flags a query shows, in this order: the folder and the placeholder files
 * of entities shown with an image, each entity's `image_file_id` (its placeholder, or null), then the
 * placeholders of entities shown without one are removed (an image removed on the source is cleared). The
 * entities must exist by then (written by an earlier query): a flag of one the target lacks leaves only its
 * placeholder, which the next run removes (removeUnusedImagePlaceholders).
 */
export function imageFlags(...shown: ShownImage[]): TableWrite[] {
  const tables = [...new Set(shown.map((x) => x.table))];
  return [
    {
      table: 'folders',
      mode: 'insertMissing',
      values: (r) => (factsOf(r, shown).some((f) => f.has) ? { id: SOURCE_IMAGES_FOLDER, name: SOURCE_IMAGES_FOLDER_NAME } : null),
    },
    {
      table: 'files',
      values: (r) =>
        factsOf(r, shown)
          .filter((f) => f.has)
          .map((f) => ({
            id: sourceImageFileId(f.table, f.id),
            folder_id: SOURCE_IMAGES_FOLDER,
            name: `Image of ${KIND[f.table]} ${f.id} (held by the source)`,
            description:
              `atrium import: the source shows that this ${KIND[f.table]} has an image, but no API it may use exposes the bytes, ` +
              'so they were not carried over. Upload the image again.',
            content_type: null,
            size_bytes: null,
            storage_key: null,
            link_url: null,
          })),
    },
    ...tables.map(
      (table): TableWrite => ({
        table,
        mode: 'updateOnly',
        values: (r) =>
          factsOf(r, shown)
            .filter((f) => f.table === table)
            .map((f): Values => ({ id: f.id, image_file_id: f.has ? sourceImageFileId(f.table, f.id) : null })),
      }),
    ),
    {
      table: 'files',
      mode: 'delete',
      values: (r) =>
        factsOf(r, shown)
          .filter((f) => !f.has)
          .map((f) => ({ id: sourceImageFileId(f.table, f.id) })),
    },
  ];
}

/**
 * Placeholder files no entity points at any more (the entity was deleted on the source, or a flag named
 * one the target does not hold): removed. Run in the transaction of the last query that writes flags.
 */
export async function removeUnusedImagePlaceholders(trx: Trx, tenantId: string): Promise<void> {
  await sql`
    delete from files f
     where f.tenant_id = ${tenantId} and f.folder_id = ${SOURCE_IMAGES_FOLDER}
       and not exists (select 1 from users u where u.tenant_id = f.tenant_id and u.image_file_id = f.id)
       and not exists (select 1 from companies c where c.tenant_id = f.tenant_id and c.image_file_id = f.id)
       and not exists (select 1 from commercial_clients cc where cc.tenant_id = f.tenant_id and cc.image_file_id = f.id)`.execute(trx);
}

/** How many companies, users and clients of the tenant point at an image the source holds (to upload again). */
export async function imagesHeldBySource(trx: Trx, tenantId: string): Promise<Record<ImageTable, number>> {
  const { rows } = await sql<Record<ImageTable, number>>`
    select (select count(*)::int from companies c join files f on f.tenant_id = c.tenant_id and f.id = c.image_file_id
             where c.tenant_id = ${tenantId} and f.folder_id = ${SOURCE_IMAGES_FOLDER}) as companies,
           (select count(*)::int from users u join files f on f.tenant_id = u.tenant_id and f.id = u.image_file_id
             where u.tenant_id = ${tenantId} and f.folder_id = ${SOURCE_IMAGES_FOLDER}) as users,
           (select count(*)::int from commercial_clients cc join files f on f.tenant_id = cc.tenant_id and f.id = cc.image_file_id
             where cc.tenant_id = ${tenantId} and f.folder_id = ${SOURCE_IMAGES_FOLDER}) as commercial_clients`.execute(trx);
  return rows[0];
}

/** The usual pairs: a query's CreatedBy/ModifiedBy users, and its company and client. */
export const COMPANY: ShownImage = { table: 'companies', idColumn: 'CompanyId', flagColumn: 'CompanyHasImage' };
export const CLIENT: ShownImage = { table: 'commercial_clients', idColumn: 'ClientId', flagColumn: 'ClientHasImage' };
export const CREATED_BY: ShownImage = { table: 'users', idColumn: 'CreatedById', flagColumn: 'CreatedByHasImage' };
export const MODIFIED_BY: ShownImage = { table: 'users', idColumn: 'ModifiedById', flagColumn: 'ModifiedByHasImage' };
/** DE-Jobs and DE-Projects name the modifier ModifiedId and its flag ModifiedHasImage. */
export const MODIFIED: ShownImage = { table: 'users', idColumn: 'ModifiedId', flagColumn: 'ModifiedHasImage' };
