// The Client API as other surfaces use it (docs/architecture.md): MCP's write tools and resources create
// and read documents, posts and time entries through these, with the same rules as the HTTP routes.
export { createPost, type PostBody } from './collaboration/posts.ts';
export { CLIENT_DOCUMENT_TYPES } from './document-type-list.ts';
export { requireRead } from './documents/access.ts';
export { documentInput } from './documents/document-input.ts';
export { contract, job, project } from './documents/document-types.ts';
export { createDocument, documentView } from './documents/documents.ts';
export { modelProperties } from './documents/fields.ts';
export type { DocumentDef } from './documents/registry.ts';
export { documentModel, postBody } from './documents/schemas.ts';
export { estimate } from './estimates/estimate-type.ts';
export { createTime, timesheet } from './time/time.ts';
