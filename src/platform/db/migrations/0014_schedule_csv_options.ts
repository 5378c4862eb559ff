// A schedule's CSV files can be written for spreadsheets like a dynamic-execute export: with a UTF-8 BOM
// and with excelSafe (formula-like text cells quoted). Both default false, so existing schedules write
// the bytes they always wrote.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table extraction_schedules
    add column csv_bom boolean not null default false,
    add column excel_safe boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table extraction_schedules drop column csv_bom, drop column excel_safe`.execute(db);
}
