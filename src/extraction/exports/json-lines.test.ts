import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonKind, JsonLines } from './json-lines.ts';

// COPY's text format as PostgreSQL writes it (CopyAttributeOutText): \N for null; backslash, \b \f \n \r \t \v
// escaped; every other byte as it is.
const copyText = (v: string | null): string =>
  v === null ? '\\N' : v.replace(/[\\\b\f\n\r\t\v]/g, (c) => `\\${{ '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v' }[c]}`);

const names = ['Id', 'Text', 'Amount', 'Flag', 'Doc', 'Ünïcode name with "quotes"'];
const kinds = [JsonKind.String, JsonKind.String, JsonKind.Raw, JsonKind.Raw, JsonKind.Json, JsonKind.String];
const rows: Record<string, unknown>[] = [
  { Id: 'a', Text: 'plain', Amount: 1.5, Flag: true, Doc: { a: [1, 'x\ny'] }, [names[5]]: 'é' },
  { Id: 'b', Text: 'quote " back\\slash \\N \\v', Amount: -2, Flag: false, Doc: null, [names[5]]: null },
  { Id: 'c', Text: 'tab\there\nline\r\n\b\f\v\u0001\u001f\u007f', Amount: null, Flag: null, Doc: ['\\', '"'], [names[5]]: '\\N' },
  { Id: 'd', Text: '', Amount: 0, Flag: true, Doc: { tab: '\t' }, [names[5]]: '日本語 🙂 \u2028' },
  { Id: 'e', Text: '\\', Amount: 1e-7, Flag: false, Doc: 'a string', [names[5]]: '' },
];
const text = (r: Record<string, unknown>) =>
  names
    .map((n, i) => {
      const v = r[n];
      if (v === null) return copyText(null);
      return copyText(kinds[i] === JsonKind.Json ? JSON.stringify(v) : String(v));
    })
    .join('\t');
const input = Buffer.from(`${rows.map(text).join('\n')}\n`);

function convert(lines: JsonLines, cuts: number[]): string {
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, input.length]) {
    const b = lines.convert(input.subarray(from, cut));
    if (b) out.push(b);
    from = cut;
  }
  lines.finish();
  return Buffer.concat(out).toString('utf8');
}

test('each row is the JSON.stringify of its values, whatever the chunks (cut inside escapes and UTF-8)', () => {
  const expected = rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  for (let cut = 1; cut < input.length; cut++) {
    assert.equal(convert(new JsonLines(names, kinds), [cut]), expected, `cut at ${cut}`);
  }
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let round = 0; round < 50; round++) {
    const cuts = [...new Set(Array.from({ length: 1 + Math.floor(random() * 20) }, () => Math.floor(random() * input.length)))].sort((a, b) => a - b);
    const lines = new JsonLines(names, kinds);
    assert.equal(convert(lines, cuts), expected);
    assert.equal(lines.rows, rows.length);
  }
});

test('array mode separates rows as the JSON envelope holds them; no columns give {}', () => {
  const lines = new JsonLines(names, kinds, { array: true });
  const body = convert(lines, [17]);
  assert.deepEqual(JSON.parse(`[${body}\n]`), rows);
  assert.ok(body.startsWith('\n{') && body.includes('},\n{'));
  const empty = new JsonLines([], []);
  assert.equal(empty.convert(Buffer.from('\n\n'))?.toString(), '{}\n{}\n');
});

test('text ending inside a row is an error', () => {
  const lines = new JsonLines(['A'], [JsonKind.String]);
  assert.equal(lines.convert(Buffer.from('x')), null);
  assert.throws(() => lines.finish(), /ended inside a row/);
});
