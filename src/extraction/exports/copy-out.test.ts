// CopyOut reads PostgreSQL's COPY protocol off a socket: the rows' bytes whatever the chunks (a chunk may end
// inside a message's header or body), and the socket handed back to pg's parser with exactly the bytes after
// CopyDone. A PassThrough stands for the socket, a listener for pg's parser.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { test } from 'node:test';
import { CopyOut } from './copy-out.ts';

const message = (code: string, body: Buffer | string = '') => {
  const b = Buffer.from(body);
  const head = Buffer.alloc(5);
  head.write(code, 0, 'latin1');
  head.writeUInt32BE(b.length + 4, 1);
  return Buffer.concat([head, b]);
};
// One CopyData per row, as PostgreSQL sends them; a quoted field may hold a line feed.
const rows = ['Id,Name\n', '1,plain\n', '2,"two\nlines"\n', '3,"say ""hi""",é😀\n', '\n', `4,${'x'.repeat(300)}\n`];
const tail = Buffer.concat([message('C', 'COPY 6\0'), message('Z', 'I')]);
const wire = Buffer.concat([
  message('H', Buffer.from([0, 0, 2, 0, 0, 0, 0])),
  message('S', 'application_name\0x\0'),
  ...rows.map((r, i) => (i === 2 ? Buffer.concat([message('N', 'notice'), message('d', r)]) : message('d', r))),
  message('c'),
  tail,
]);

async function run(cuts: number[]): Promise<{ out: string; handedBack: Buffer }> {
  const socket = new PassThrough();
  const handed: Buffer[] = [];
  socket.on('data', (c: Buffer) => handed.push(c));
  const copy = new CopyOut('copy t to stdout');
  let sent = '';
  copy.submit({ stream: socket as never, query: (text) => (sent = text) });
  assert.equal(sent, 'copy t to stdout');
  const out = buffer(copy);
  let from = 0;
  for (const cut of [...cuts, wire.length]) {
    // A copy, as a socket hands out fresh Buffers: CopyOut rewrites them in place.
    socket.write(Buffer.from(wire.subarray(from, cut)));
    from = cut;
    await new Promise((r) => setImmediate(r));
  }
  const text = (await out).toString();
  await new Promise((r) => setImmediate(r));
  return { out: text, handedBack: Buffer.concat(handed) };
}

test('the rows, and the bytes after CopyDone back to pg, at every cut of the wire into two and three chunks', async () => {
  const plain = rows.join('');
  for (let i = 1; i < wire.length; i++) {
    const two = await run([i]);
    assert.equal(two.out, plain, `cut at ${i}`);
    assert.deepEqual(two.handedBack, tail, `cut at ${i}`);
    if (i % 11 === 0) {
      const three = await run([i, Math.min(i + 3, wire.length - 1)]);
      assert.equal(three.out, plain, `cuts at ${i}, ${i + 3}`);
    }
  }
});

test('an ErrorResponse goes to pg from its first byte', async () => {
  const socket = new PassThrough();
  const handed: Buffer[] = [];
  socket.on('data', (c: Buffer) => handed.push(c));
  const copy = new CopyOut('copy t to stdout');
  copy.submit({ stream: socket as never, query: () => {} });
  const got: Buffer[] = [];
  copy.on('data', (c: Buffer) => got.push(c));
  const error = message('E', 'SERROR\0Mboom\0\0');
  socket.write(Buffer.concat([message('H', Buffer.from([0, 0, 0])), message('d', 'a\n'), error.subarray(0, 3)]));
  await new Promise((r) => setImmediate(r));
  socket.write(Buffer.from(error.subarray(3)));
  await new Promise((r) => setImmediate(r));
  assert.equal(Buffer.concat(got).toString(), 'a\n');
  assert.deepEqual(Buffer.concat(handed), error);
});
