import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { derivedOperationId, named, referenceComponents } from './openapi.ts';

test('a route without an operationId gets one from its method and URL', () => {
  assert.equal(derivedOperationId('GET', '/api/users/:id'), 'get_usersById');
  assert.equal(derivedOperationId('GET', '/odata/v4/:entitySet/$count'), 'get_odataByEntitySetCount');
  assert.equal(derivedOperationId('POST', '/api/v3/custom-tables/:tableName/rows'), 'post_customTablesByTableNameRows');
});

test('one name, one shape', () => {
  named('OpenApiTestShape', Type.Object({ a: Type.String() }));
  named('OpenApiTestShape', Type.Object({ a: Type.String() }));
  assert.throws(() => named('OpenApiTestShape', Type.Object({ a: Type.Integer() })), /Two different schemas are named OpenApiTestShape/);
});

test('copies of a component become $refs, the component itself stays whole', () => {
  const shape = { type: 'object', properties: { a: { type: 'string' } } };
  const document = {
    paths: { '/x': { get: { responses: { '200': { content: { 'application/json': { schema: { type: 'array', items: { ...shape } } } } } } } } },
    components: { schemas: { Problem: { type: 'object', properties: { status: { type: 'integer' } } }, Shape: shape } },
  };
  const out = referenceComponents({ openapiObject: document }) as typeof document & { components: { responses: object } };
  assert.deepEqual(out.paths['/x'].get.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Shape' } });
  assert.deepEqual(out.components.schemas.Shape, shape);
});
