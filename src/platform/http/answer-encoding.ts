// The compression of answers, shared by the compress plugin (niceties.ts) and the answers compressed ahead of
// their request (pages read ahead, decision 0079): the same encodings, preference and levels, so an answer
// compressed ahead is the one the plugin would have sent.
import { once } from 'node:events';
import { createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';

/** The encodings answers are compressed with, in the server's order of preference. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

// Levels chosen for throughput (bench/RESULTS.md): brotli 4 costs a fraction of what its maximum costs for most of
// the size saving. gzip 3 is the last of zlib's fast levels (1–3 use its greedy matcher, 4 and up its lazy one): on
// a 2,000-row DE-TimeSheets page (2.6 MB) 16 ms against 30.5 ms at level 5, for 325 KB instead of 280 KB
// (decision 0084).
export const BROTLI_OPTIONS = { params: { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: 4 } };
export const GZIP_OPTIONS = { level: 3 };
/** Answers shorter than this many bytes are sent uncompressed (the plugin's threshold, set from here). */
export const COMPRESS_THRESHOLD = 1024;

/**
 * The encoding the compress plugin answers an Accept-Encoding header with: its negotiator (the plugin's own
 * dependency) over ENCODINGS, `*` and `x-gzip` read as gzip as the plugin reads them; undefined for identity.
 */
export function acceptedEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), [...ENCODINGS]) ?? undefined;
}

/**
 * The answer made of `parts` (in order, not copied into one buffer nor changed) compressed as the plugin compresses
 * an answer with `encoding`, on libuv's thread pool.
 */
export async function compressAnswer(parts: Buffer[], encoding: Encoding): Promise<Buffer> {
  // Output in large chunks: each chunk is a trip between the thread pool and the event loop, which is busy with
  // other work (16 KB chunks made a 1.3 MB page wait for the event loop ~80 times).
  const chunkSize = 1 << 20;
  const z = encoding === 'br' ? createBrotliCompress({ ...BROTLI_OPTIONS, chunkSize }) : createGzip({ ...GZIP_OPTIONS, chunkSize });
  const chunks: Buffer[] = [];
  z.on('data', (c: Buffer) => chunks.push(c));
  const done = once(z, 'end');
  for (const p of parts) z.write(p);
  z.end();
  await done;
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
