// A generated document number is one past the larger of the type's counter and the highest number of its prefix
// in use (decision 0044). That highest number was a scan of the tenant's documents of the type on every create,
// a cost that grew with the tenant (decision 0061): these partial expression indexes answer it as one index probe
// (the max of the number's digits for the tenant). The expressions are exactly those of nextNumber (documents.ts).
import { type Kysely, sql } from 'kysely';

const NUMBERED: [table: string, prefix: string][] = [
  ['projects', 'PRJ'],
  ['jobs', 'JOB'],
  ['contracts', 'CTR'],
  ['requests', 'REQ'],
  ['estimates', 'EST'],
  ['expense_sheets', 'EXP'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, prefix] of NUMBERED) {
    const pattern = `^${prefix}-([0-9]{1,18})$`;
    await sql`create index ${sql.id(`${table}_generated_number`)} on ${sql.table(table)}
      (tenant_id, (substring(number from ${sql.lit(pattern)})::bigint)) where number ~ ${sql.lit(pattern)}`.execute(db);
  }
}
