// The compression of answers, shared by the compress plugin (niceties.ts) and the answers compressed ahead of
// their request (pages read ahead, decision 0079): the same encodings, preference and levels, so an answer
// compressed ahead is the one the plugin would have sent.
import { once } from 'node:events';
import { createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';

/** The encodings answers are compressed with, in the server's order of preference. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

// Levels chosen for throughput on a streamed export (bench/RESULTS.md): brotli 4 and gzip 5 cost a fraction of
// what their maximum costs for most of the size saving.
export const BROTLI_OPTIONS = { params: { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: 4 } };
export const GZIP_OPTIONS = { level: 5 };

/**
 * The encoding an Accept-Encoding header lets the server use: of br and gzip, the one with the higher q (a `*`
 * stands for those not named; `q=0` refuses), br on a tie; undefined when neither is acceptable (identity).
 */
export function acceptedEncoding(header: string | string[] | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.length > 1024) return undefined;
  const q = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    if (Number.isFinite(weight)) q.set(name.trim(), weight);
  }
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const e of ENCODINGS) {
    const w = q.get(e) ?? q.get('*') ?? 0;
    if (w > bestQ) {
      best = e;
      bestQ = w;
    }
  }
  return best;
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
  return Buffer.concat(chunks);
}
