// The generated client's types (test/generated/atrium-api.ts): openapi-typescript over the document the
// app builds in-process. `npm run openapi:client` rewrites the file; test/openapi-client.test.ts fails
// when the committed file no longer matches the document.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '../src/openapi-document.ts';

export const CLIENT_TYPES_FILE = path.join(import.meta.dirname, 'generated', 'atrium-api.ts');

export async function clientTypes(document?: Record<string, unknown>): Promise<string> {
  // A property with a default is still optional in a request body (the server fills it in).
  const ast = await openapiTS((document ?? (await openApiDocument())) as unknown as OpenAPI3, { defaultNonNullable: false });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

if (import.meta.main) {
  await writeFile(CLIENT_TYPES_FILE, await clientTypes());
  process.stdout.write(`wrote ${path.relative(process.cwd(), CLIENT_TYPES_FILE)}\n`);
}
