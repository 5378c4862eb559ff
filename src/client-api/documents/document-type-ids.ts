// document_types ids by class name, per tenant: every "any document" link (history, folders, comments,
// assignments, custom fields) needs one, and a tenant's catalogue rows never change once bootstrapped.
import type { Trx } from '../../platform/db/database.ts';

const cache = new Map<string, string>();

export async function documentTypeId(trx: Trx, tenantId: string, className: string): Promise<string> {
  const key = `${tenantId}/${className}`;
  const known = cache.get(key);
  if (known) return known;
  const found = await trx.selectFrom('document_types').select('id').where('class_name', '=', className).executeTakeFirst();
  if (!found) throw new Error(`the tenant has no document type ${className}`);
  cache.set(key, found.id);
  return found.id;
}
