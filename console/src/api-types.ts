// The API's types as the server's OpenAPI document states them (test/generated/atrium-api.ts, made by
// `npm run openapi:client`), so a page's view of an answer cannot drift from the route's schema.
import type { components } from '../../test/generated/atrium-api.ts';

/** The named schema `K` of the OpenAPI document. */
export type Schema<K extends keyof components['schemas']> = components['schemas'][K];
