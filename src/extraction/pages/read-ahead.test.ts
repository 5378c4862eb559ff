import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { answerOf, dropPager, PageSplitter, pagesPerBatch, READ_AHEAD_ROWS, readAhead, readAheadSettled } from './read-ahead.ts';

/** JSON lines of `n` rows, some with multi-byte characters (a line never holds a raw LF: JSON escapes it). */
const lines = (n: number) => Array.from({ length: n }, (_, i) => `{"Id":${i},"Name":"r${i} é😀\\n"}\n`).join('');

function split(input: Buffer, take: number, cuts: number[]): string[] {
  const s = new PageSplitter(take);
  let at = 0;
  // Copies: the splitter changes what it is given in place.
  for (const cut of [...cuts, input.length]) {
    s.push(Buffer.from(input.subarray(at, cut)));
    at = cut;
  }
  // Each page answered with its count written in place after its rows; each row ends where rowEnds says (decision 0083).
  return s.end().map((p, i) => {
    let from = '{"data":['.length;
    for (const end of p.rowEnds) {
      const row = p.body.subarray(from, end).toString();
      assert.ok(row.startsWith('{"Id":') && row.endsWith('"}'), `row ${row} of page ${i}`);
      from = end + 1;
    }
    assert.equal(p.rowEnds.at(-1), p.end, 'the last row ends where the page does');
    const answer = answerOf(p, 1_000_000_000_000 + i).toString();
    const tail = `],"totalCount":${1_000_000_000_000 + i}}`;
    assert.ok(answer.startsWith('{"data":[') && answer.endsWith(tail), answer);
    return answer.slice('{"data":['.length, -tail.length);
  });
}

test("pages of take rows, their objects joined by commas in the page's answer, at every cut of the input", () => {
  for (const [rows, take] of [
    [7, 3],
    [6, 3],
    [1, 1],
    [5, 10],
  ] as const) {
    const input = Buffer.from(lines(rows));
    const all = lines(rows).trimEnd().split('\n');
    const expected: string[] = [];
    for (let i = 0; i < all.length; i += take) expected.push(all.slice(i, i + take).join(','));
    for (let cut = 0; cut <= input.length; cut++) assert.deepEqual(split(input, take, [cut]), expected, `${rows}/${take} cut at ${cut}`);
    // Every byte its own chunk.
    assert.deepEqual(
      split(
        input,
        take,
        Array.from({ length: input.length }, (_, i) => i),
      ),
      expected,
    );
    assert.deepEqual(
      expected.map((p) => JSON.parse(`[${p}]`).length),
      expected.map((_, i) => Math.min(take, rows - i * take)),
    );
  }
  assert.deepEqual(split(Buffer.alloc(0), 3, []), []);
});

test('a batch reads as many pages as fit in its rows, at most eight; pages larger than a batch are not read ahead', () => {
  assert.equal(pagesPerBatch(2_000), 6);
  assert.equal(pagesPerBatch(100), 8);
  assert.equal(pagesPerBatch(READ_AHEAD_ROWS), 1);
  assert.equal(pagesPerBatch(READ_AHEAD_ROWS + 1), 0);
  assert.equal(pagesPerBatch(0), 0);
});

test('a pager whose pages went stale reads one page ahead, not a batch (it would be thrown away after its first page)', async () => {
  // The state is per database handle; the handle is only a key here.
  const db = {} as DatabaseHandle;
  const asked: number[] = [];
  const read = async (start: number, count: number) => {
    asked.push(count);
    return Array.from({ length: count }, (_, i) => ({
      position: start + i * 10,
      page: { body: Buffer.alloc(16), end: 9, rows: 10, snapshot: '', tables: [] },
    }));
  };
  readAhead(db, 'p', 10, 10, 6, 16, read);
  await readAheadSettled(db);
  dropPager(db, 'p');
  readAhead(db, 'p', 20, 10, 6, 16, read);
  await readAheadSettled(db);
  // Another pager is not held back.
  readAhead(db, 'q', 10, 10, 6, 16, read);
  await readAheadSettled(db);
  assert.deepEqual(asked, [6, 1, 6]);
});
