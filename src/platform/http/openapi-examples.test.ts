// The API document as a reader meets it: every JSON request body and every JSON 2xx answer has an example
// that its own schema accepts (JSON Schema 2020-12, as OpenAPI 3.1 means it), every operation a description,
// a licence, and the server from ATRIUM_PUBLIC_URL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exampleChecker } from '../../../test/openapi-example-validator.ts';
import { openApiDocument } from '../../openapi-document.ts';
import { exampleOf, recordedExamples } from './openapi-examples.ts';

/** The share of examples that must come from the tests' recorded bodies (raised as tests cover more). */
const MIN_RECORDED_SHARE = 0.1;

type Media = { schema?: object; example?: unknown };
type Operation = { description?: string; requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

test('every JSON request body and 2xx answer has an example its schema accepts; every operation a description', async () => {
  const doc = (await openApiDocument()) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, object> };
    info: any;
    servers: any;
  };
  const check = exampleChecker(doc.components.schemas);
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
        const errors = check(m.schema, m.example);
        if (errors !== null)
          problems.push(`${method} ${path} ${where}: ${errors} in ${JSON.stringify(m.example).slice(0, 300)} (npm run openapi:examples records new ones)`);
      }
    }
  }
  assert.ok(bodies >= 69 && answers >= 150, `request bodies ${bodies}, 2xx answers ${answers}`);
  assert.deepEqual(problems, []);
  assert.ok(doc.info.license?.name);
  assert.deepEqual(doc.servers, [{ url: '/', description: 'This deployment' }]);
});

test("the tests' recorded bodies are the document's examples, and each names a body or answer the document has", async () => {
  const doc = (await openApiDocument()) as { paths: Record<string, Record<string, Operation>> };
  const recorded = recordedExamples();
  const stale: string[] = [];
  let used = 0;
  let media = 0;
  for (const [key, body] of Object.entries(recorded)) {
    const [method, path, where] = key.split(' ');
    const op = doc.paths[path]?.[method.toLowerCase()];
    const content = where === 'request' ? op?.requestBody?.content : op?.responses[where]?.content;
    const json = Object.entries(content ?? {}).find(([type]) => type.includes('json'))?.[1];
    if (!json) stale.push(key);
    else if (JSON.stringify(json.example) === JSON.stringify(body)) used++;
  }
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item))
      for (const m of [
        op.requestBody?.content,
        ...Object.entries(op.responses)
          .filter(([s]) => s.startsWith('2'))
          .map(([, r]) => r.content),
      ])
        if (Object.keys(m ?? {}).some((type) => type.includes('json'))) media++;
  assert.deepEqual(stale, [], 'recorded examples of bodies the document no longer has: run npm run openapi:examples');
  assert.equal(used, Object.keys(recorded).length);
  // Most bodies and answers show what a test really sent or received; the rest are written from their schemas.
  assert.ok(used >= MIN_RECORDED_SHARE * media, `${used} of ${media} examples recorded from the tests`);
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
