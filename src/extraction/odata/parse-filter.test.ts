// The $filter parser's precedence and literals, as trees written back in prefix form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Node, parseFilter } from './parse-filter.ts';

function show(n: Node | null): string {
  if (!n) return '';
  switch (n.kind) {
    case 'literal':
      return `${n.type}:${n.value}`;
    case 'property':
      return n.name;
    case 'call':
      return `${n.name}(${n.args.map(show).join(',')})`;
    case 'neg':
      return `(- ${show(n.operand)})`;
    case 'not':
      return `(not ${show(n.operand)})`;
    case 'in':
      return `(in ${show(n.left)} [${n.list.map(show).join(',')}])`;
    default:
      return `(${n.op} ${show(n.left)} ${show(n.right)})`;
  }
}

test('OData precedence: mul over add over comparison over not over and over or', () => {
  const cases: [string, string][] = [
    ['A eq 1 or B eq 2 and C eq 3', '(or (eq A number:1) (and (eq B number:2) (eq C number:3)))'],
    ['(A eq 1 or B eq 2) and C eq 3', '(and (or (eq A number:1) (eq B number:2)) (eq C number:3))'],
    ['A add 2 mul 3 gt B sub 1', '(gt (add A (mul number:2 number:3)) (sub B number:1))'],
    ['A sub B sub C eq 0', '(eq (sub (sub A B) C) number:0)'],
    ["not contains(L,'x') and not (A lt 2)", '(and (not contains(L,string:x)) (not (lt A number:2)))'],
    ["Code in ('a', 'b''c') or -A le -2.5", "(or (in Code [string:a,string:b'c]) (le (- A) number:-2.5))"],
    [
      'year(D) eq 2024 and date(T) ge 2024-01-31 and T lt 2024-02-01T10:00:00Z',
      '(and (and (eq year(D) number:2024) (ge date(T) date:2024-01-31)) (lt T datetime:2024-02-01T10:00:00Z))',
    ],
    [
      "G eq 8D0C1E2F-0000-4000-8000-000000000001 or X eq null or Y eq datetime'2024-01-01T00:00:00'",
      '(or (or (eq G guid:8d0c1e2f-0000-4000-8000-000000000001) (eq X null:null)) (eq Y datetime:2024-01-01T00:00:00))',
    ],
    ['Flag', 'Flag'],
    ['A eq 10L or B eq 2.5M', '(or (eq A number:10) (eq B number:2.5))'],
  ];
  for (const [text, tree] of cases) assert.equal(show(parseFilter(text)), tree, text);
  assert.equal(parseFilter('   '), null);
});

test('malformed filters are a 400 naming the problem', () => {
  const cases: [string, RegExp][] = [
    ["A eq 'open", /not closed/],
    ['A eq 1)', /unexpected input/],
    ['A eq', /ends too early/],
    ['contains(A,', /ends too early/],
    ['A in (1, 2', /expected \)/],
    ['A eq 1 ~ 2', /unexpected input/],
    ['A has 1', /has operator/],
    [`${'('.repeat(40)}A${')'.repeat(40)}`, /nested too deeply/],
    [`A eq '${'x'.repeat(8001)}'`, /longer than 8000/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseFilter(text),
      (err: Error & { status?: number }) => err.status === 400 && message.test(err.message),
      text,
    );
  }
});
