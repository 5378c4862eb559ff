// The API's types as the server's OpenAPI document states them (test/generated/atrium-api.ts, made by
// `npm run openapi:client`), so a page's view of an answer cannot drift from the route's schema.
import type { components, paths } from '../../test/generated/atrium-api.ts';

/** The named schema `K` of the OpenAPI document. */
export type Schema<K extends keyof components['schemas']> = components['schemas'][K];

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Success<R> = R extends { 200: infer A } ? Json<A> : R extends { 201: infer A } ? Json<A> : R extends { 202: infer A } ? Json<A> : never;

/** The JSON answer (200, else 201 or 202) of `method` on the route `P`, as its response schema states it. */
export type Answer<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'patch' | 'delete' = 'get'> = paths[P][M] extends {
  responses: infer R;
}
  ? Success<R>
  : never;

/** The JSON request body of `method` on the route `P`. */
export type RequestBody<P extends keyof paths, M extends 'post' | 'put' | 'patch' = 'post'> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
