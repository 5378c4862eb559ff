// The Custom Tables API as other surfaces use it (docs/architecture.md): Data Extraction lists a tenant's
// tables, checks a caller's access and reads a table's columns for its `CT-` named queries and OData.
export { listTables, mayAccess } from './catalogue.ts';
export { type CustomTableExtraction, describeCustomTableForExtraction, NAMED_QUERY_PREFIX } from './extraction.ts';
