// The NDJSON and JSON exports through COPY: PostgreSQL writes each value as the JSON pages print it, in
// COPY's text format, and JsonLines writes the keys and quotes around them (./json-lines.ts, decision 0040).
import { pipeline } from 'node:stream';
import type { Kysely, RawBuilder } from 'kysely';
import type pg from 'pg';
import { type ExportSource, inlineParameters, startCopy } from './copy-csv.ts';
import { CopyTextStage } from './copy-text.ts';
import type { CatalogueColumn } from './definition.ts';
import { JsonLines, jsonTextSelect } from './json-lines.ts';

const ENVELOPE_HEAD = '{"data":[';
const envelopeTail = (rows: number) => `\n],"totalCount":${rows}}\n`;

/**
 * Starts `COPY (<the rows' values as JSON prints them>) TO STDOUT` on a client inside the export's
 * transaction and converts it: NDJSON lines, or with `envelope` the API's JSON envelope
 * (`{"data":[…],"totalCount":n}`, the count written after the rows). The columns' SQL types come from a
 * `limit 0` run of the same query, as for CSV.
 */
export async function openCopyJson(
  client: pg.PoolClient,
  kysely: Kysely<any>,
  rows: RawBuilder<unknown>,
  columns: CatalogueColumn[],
  options: { envelope?: boolean } = {},
): Promise<ExportSource> {
  const compiled = rows.compile(kysely);
  const described = await client.query({ text: `select * from (${compiled.sql}) as r limit 0`, values: compiled.parameters as unknown[] });
  const { select, kinds } = jsonTextSelect(
    rows,
    columns,
    described.fields.map((f) => f.dataTypeID),
  );
  const text = select.compile(kysely);
  const copy = startCopy(client, `copy (${inlineParameters(text.sql, text.parameters)}) to stdout`);
  const lines = new JsonLines(
    columns.map((c) => c.name),
    kinds,
    { array: options.envelope },
  );
  const stage = new CopyTextStage(lines);
  pipeline(copy, stage, () => {});
  const converted = stage[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let head: Buffer | null = options.envelope ? Buffer.from(ENVELOPE_HEAD) : null;
  let ended = false;
  const chunks: AsyncIterator<Buffer> = {
    next: async () => {
      if (ended) return { done: true, value: undefined };
      const next = await converted.next();
      let value: Buffer;
      if (!next.done) value = next.value;
      else {
        ended = true;
        if (!options.envelope) return next;
        value = Buffer.from(envelopeTail(lines.rows));
      }
      if (head) {
        value = Buffer.concat([head, value]);
        head = null;
      }
      return { done: false, value };
    },
  };
  return {
    chunks,
    rows: () => copy.rowCount,
    stop: () => {
      stage.destroy();
      copy.destroy();
    },
  };
}
