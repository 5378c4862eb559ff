// The NDJSON and JSON exports through COPY: PostgreSQL writes each value as the JSON pages print it, in
// COPY's text format, and JsonLines writes the keys and quotes around them (./json-lines.ts, decision 0040).
import type { Kysely, RawBuilder } from 'kysely';
import type pg from 'pg';
import type { CatalogueColumn } from '../definition.ts';
import { columnTypes, copyStatement, type ExportSource } from './copy-statement.ts';
import { openCopyText } from './copy-text.ts';
import { JsonLines, jsonTextSelect } from './json-lines.ts';

/**
 * `COPY (<the rows' values as the JSON pages print them>) TO STDOUT` on a client inside the export's
 * transaction, converted: NDJSON lines, or with `envelope` the API's JSON envelope
 * (`{"data":[…],"totalCount":n}`, the count written after the rows).
 */
export async function openCopyJson(
  client: pg.PoolClient,
  kysely: Kysely<any>,
  rows: RawBuilder<unknown>,
  columns: CatalogueColumn[],
  options: { envelope?: boolean } = {},
): Promise<ExportSource> {
  const { select, kinds } = jsonTextSelect(rows, columns, await columnTypes(client, kysely, rows));
  const lines = new JsonLines(
    columns.map((c) => c.name),
    kinds,
    { array: options.envelope },
  );
  const frame = options.envelope ? { head: '{"data":[', tail: (n: number) => `\n],"totalCount":${n}}\n` } : {};
  return openCopyText(client, copyStatement(kysely, select), lines, frame);
}
