// The Kysely `Database` interface: every table of the public schema, generated from the migrated
// database into schema.generated.ts (`npm run db:types`; npm test fails when it is stale), so a
// misspelt table or column in a builder call fails to compile. Decision 0016.
import type { Selectable } from 'kysely';
import type { DB, JsonObject, JsonValue } from './schema.generated.ts';

export type Database = DB;

/** A table of the public schema, for code that names tables in data (resource definitions, upserts). */
export type TableName = keyof Database;

/** A row of a table as `selectAll()` / `returningAll()` give it back. */
export type RowOf<T extends keyof Database> = Selectable<Database[T]>;

export type { JsonObject, JsonValue };

/** A jsonb value the app only ever stores objects in, narrowed without a cast; anything else reads as null. */
export function jsonObject(value: JsonValue | null): JsonObject | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
}
