// The API document as a reader meets it: every JSON request body and every JSON 2xx answer has an example
// that its own schema accepts (JSON Schema 2020-12, as OpenAPI 3.1 means it), every operation a description,
// a licence, and the server from ATRIUM_PUBLIC_URL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../openapi-document.ts';
import { exampleOf } from './openapi-examples.ts';

type Media = { schema?: object; example?: unknown };
type Operation = { description?: string; requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

test('every JSON request body and 2xx answer has an example its schema accepts; every operation a description', async () => {
  const doc = (await openApiDocument()) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, object> };
    info: any;
    servers: any;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // The components as one schema of $defs, so that each $ref of the document resolves within it.
  const toDefs = (schema: object) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"urn:atrium:components#/$defs/'));
  ajv.addSchema({ $id: 'urn:atrium:components', $defs: toDefs(doc.components.schemas) });
  const problems: string[] = [];
  let bodies = 0;
  let answers = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.description) problems.push(`${method} ${path}: no description`);
      const media: [string, string, Media][] = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([t, m]) => ['request body', t, m] as [string, string, Media]),
        ...Object.entries(op.responses)
          .filter(([s]) => s.startsWith('2'))
          .flatMap(([s, r]) => Object.entries(r.content ?? {}).map(([t, m]) => [s, t, m] as [string, string, Media])),
      ];
      for (const [where, type, m] of media) {
        if (!/^application\/([\w.+-]*\+)?json\b/.test(type) || !m.schema) continue;
        if (where === 'request body') bodies++;
        else answers++;
        if (m.example === undefined) {
          problems.push(`${method} ${path} ${where} ${type}: no example`);
          continue;
        }
        const validate = ajv.compile(toDefs(m.schema));
        if (!validate(m.example)) problems.push(`${method} ${path} ${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(m.example).slice(0, 300)}`);
      }
    }
  }
  assert.ok(bodies >= 69 && answers >= 150, `request bodies ${bodies}, 2xx answers ${answers}`);
  assert.deepEqual(problems, []);
  assert.ok(doc.info.license?.name);
  assert.deepEqual(doc.servers, [{ url: '/', description: 'This deployment' }]);
});

test('the server is ATRIUM_PUBLIC_URL, under a tenant base path that path', async () => {
  const doc = (await openApiDocument({ ATRIUM_PUBLIC_URL: 'https://api.agency.example.com' })) as { servers: unknown };
  assert.deepEqual(doc.servers, [{ url: 'https://api.agency.example.com', description: 'This deployment (ATRIUM_PUBLIC_URL)' }]);
});

test('an example honours enums, formats, bounds and required properties', () => {
  const schema = {
    type: 'object',
    required: ['kind', 'at', 'take', 'tags'],
    properties: {
      kind: { enum: ['Created', 'Updated'] },
      at: { type: 'string', format: 'date-time' },
      take: { type: 'integer', minimum: 1, maximum: 5 },
      tags: { type: 'array', minItems: 2, items: { type: 'string', minLength: 3 } },
      ref: { $ref: '#/components/schemas/Ref' },
    },
  };
  assert.deepEqual(exampleOf(schema, { Ref: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } } }), {
    kind: 'Created',
    at: '2026-03-02T09:30:00.000Z',
    take: 5,
    tags: ['example', 'example'],
    ref: { id: '3f1c2a64-8b1e-4c5d-9a7f-2e6b1d0c4a91' },
  });
});
