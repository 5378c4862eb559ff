import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { acceptedEncoding, compressAnswer } from './answer-encoding.ts';

test("acceptedEncoding: the compress plugin's choice (br before gzip on a tie, q-values, * as gzip, q=0)", () => {
  assert.equal(acceptedEncoding(undefined), undefined);
  assert.equal(acceptedEncoding('identity'), undefined);
  assert.equal(acceptedEncoding('gzip, deflate'), 'gzip');
  assert.equal(acceptedEncoding('gzip, deflate, br'), 'br');
  assert.equal(acceptedEncoding('br;q=0.5, gzip'), 'gzip');
  assert.equal(acceptedEncoding('gzip;q=0, br;q=0'), undefined);
  // The plugin reads * (and x-gzip) as gzip.
  assert.equal(acceptedEncoding('*'), 'gzip');
  assert.equal(acceptedEncoding('x-gzip'), 'gzip');
  assert.equal(acceptedEncoding('*, br;q=0'), 'gzip');
  assert.equal(acceptedEncoding('GZIP ; Q=0.8'), 'gzip');
  assert.equal(acceptedEncoding('deflate,gzip'), 'gzip');
  // A q-value that is not a number: the plugin's negotiator accepts nothing.
  assert.equal(acceptedEncoding('gzip;q=abc'), undefined);
});

test('compressAnswer: the parts in order, decoded back to the same bytes in both encodings', async () => {
  const parts = [Buffer.from('{"data":['), Buffer.from('{"a":1},'.repeat(100_000).slice(0, -1)), Buffer.from('],"totalCount":100000}')];
  const whole = Buffer.concat(parts);
  assert.deepEqual(gunzipSync(await compressAnswer(parts, 'gzip')), whole);
  assert.deepEqual(brotliDecompressSync(await compressAnswer(parts, 'br')), whole);
});
