import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { acceptedEncoding, compressAnswer } from './answer-encoding.ts';

test('acceptedEncoding: br before gzip on a tie, q-values, * and q=0', () => {
  assert.equal(acceptedEncoding(undefined), undefined);
  assert.equal(acceptedEncoding('identity'), undefined);
  assert.equal(acceptedEncoding('gzip, deflate'), 'gzip');
  assert.equal(acceptedEncoding('gzip, deflate, br'), 'br');
  assert.equal(acceptedEncoding('br;q=0.5, gzip'), 'gzip');
  assert.equal(acceptedEncoding('gzip;q=0, br;q=0'), undefined);
  assert.equal(acceptedEncoding('*'), 'br');
  assert.equal(acceptedEncoding('*, br;q=0'), 'gzip');
  assert.equal(acceptedEncoding('GZIP ; Q=0.8'), 'gzip');
  assert.equal(acceptedEncoding(['deflate', 'gzip']), 'gzip');
  // A q-value that is not a number is ignored (q=1).
  assert.equal(acceptedEncoding('gzip;q=abc'), 'gzip');
});

test('compressAnswer: the parts in order, decoded back to the same bytes in both encodings', async () => {
  const parts = [Buffer.from('{"data":['), Buffer.from('{"a":1},'.repeat(100_000).slice(0, -1)), Buffer.from('],"totalCount":100000}')];
  const whole = Buffer.concat(parts);
  assert.deepEqual(gunzipSync(await compressAnswer(parts, 'gzip')), whole);
  assert.deepEqual(brotliDecompressSync(await compressAnswer(parts, 'br')), whole);
});
