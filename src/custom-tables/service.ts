// The Custom Tables API as other surfaces use it (docs/architecture.md): Data Extraction lists a tenant's
// tables, checks a caller's access and reads a table's columns for its `CT-` named queries and OData; the
// import writes a source's tables and rows into the target (mirror.ts).
export { listTables, mayAccess } from './catalogue.ts';
export { type CustomTableExtraction, describeCustomTableForExtraction, NAMED_QUERY_PREFIX } from './extraction.ts';
export { deleteUnseenRows, type MirroredTable, mirrorRows, mirrorSchema } from './mirror.ts';
export type { RowObject } from './rows.ts';
