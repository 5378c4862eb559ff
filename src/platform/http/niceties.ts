// What HTTP clients expect beyond the API itself: compressed answers when they ask for them, and
// CORS for the browser origins an operator lists. Neither changes a byte of an answer nobody asked for.
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { Config } from '../../config.ts';
import { BROTLI_OPTIONS, COMPRESS_THRESHOLD, ENCODINGS, GZIP_OPTIONS } from './answer-encoding.ts';
import type { App } from './app.ts';

// Text answers worth compressing: JSON and problem+json, OData (json; odata.metadata=…), CSV, NDJSON, CSDL.
const COMPRESSIBLE = /^(application\/(json|problem\+json|x-ndjson|ndjson|xml)|text\/(csv|plain|xml))\b/i;

/** Headers a browser script may read: those the API answers with for it to act on. */
export const CORS_EXPOSED_HEADERS = [
  'x-ignored-properties',
  'x-read-only-properties',
  'x-continuation-token',
  'link',
  'location',
  'x-request-id',
  'etag',
  'retry-after',
];

/**
 * Registered before the app's own hooks, so a preflight is answered before authentication and a
 * refused request (401, 429) still carries the CORS headers a browser needs to read its problem.
 */
export async function registerHttpNiceties(app: App, config: Config): Promise<void> {
  // Encodings and levels in answer-encoding.ts (shared with the pages compressed ahead). Request bodies stay
  // uncompressed: inflating them would let a small body outgrow the body limit's intent.
  await app.register(compress, {
    encodings: [...ENCODINGS],
    customTypes: COMPRESSIBLE,
    threshold: COMPRESS_THRESHOLD,
    globalDecompression: false,
    brotliOptions: BROTLI_OPTIONS,
    zlibOptions: GZIP_OPTIONS,
  });
  if (config.corsOrigins.length === 0) return;
  await app.register(cors, {
    origin: config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
}
