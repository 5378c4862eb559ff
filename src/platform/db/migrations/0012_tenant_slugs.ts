// Tenant slugs: the name a tenant is addressed by in a host (`apiv2-{slug}.…`) or a base path (`/t/{slug}`).
// Existing tenants get one derived from their name, made unique in creation order; the first "Demo Agency"
// (the tenant `npm start` creates) gets `demo`. The derivation is inlined, not imported, so that this
// migration stays what it was when it ran (see src/tenancy/service.ts for the live rule).
import { type Kysely, sql } from 'kysely';

const MAX = 63;

function derive(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX)
    .replace(/-+$/, '');
  return base || 'tenant';
}

function unique(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants add column slug text`.execute(db);
  const { rows } = await sql<{ id: string; name: string }>`select id, name from tenants order by created_on_utc, id`.execute(db);
  const taken = new Set<string>();
  const slugs = new Map<string, string>();
  const demo = rows.find((r) => r.name === 'Demo Agency');
  if (demo) {
    slugs.set(demo.id, 'demo');
    taken.add('demo');
  }
  for (const r of rows) {
    if (slugs.has(r.id)) continue;
    const slug = unique(derive(r.name), taken);
    taken.add(slug);
    slugs.set(r.id, slug);
  }
  for (const [id, slug] of slugs) await sql`update tenants set slug = ${slug} where id = ${id}::uuid`.execute(db);
  await sql`
alter table tenants alter column slug set not null;
alter table tenants add constraint tenants_slug_key unique (slug);
alter table tenants add constraint tenants_slug_form check (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$');
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table tenants drop column slug`.execute(db);
}
