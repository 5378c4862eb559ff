// OData v4 $filter -> the query builder's DevExtreme filter, so both feeds share one compiler and one
// set of semantics: eq ne gt ge lt le, and or not, parentheses, contains/startswith/endswith, null.
import { badRequest } from '../../platform/errors.ts';

type Token = { kind: 'lparen' | 'rparen' | 'comma' } | { kind: 'string'; value: string } | { kind: 'word'; value: string };

const COMPARISONS: Record<string, string> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' };
const SWAPPED: Record<string, string> = { '=': '=', '<>': '<>', '>': '<', '>=': '<=', '<': '>', '<=': '>=' };
const TEXT_FUNCTIONS: Record<string, string> = { contains: 'contains', startswith: 'startswith', endswith: 'endswith' };
const MAX_LENGTH = 8000;

const fail = (message: string) => badRequest(`$filter is invalid: ${message}`, [{ path: '/query/$filter', message }]);

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const ch = s[i];
    const punctuation = ch === '(' ? 'lparen' : ch === ')' ? 'rparen' : ch === ',' ? 'comma' : null;
    if (/\s/.test(ch)) i++;
    else if (punctuation) {
      tokens.push({ kind: punctuation });
      i++;
    } else if (ch === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= s.length) throw fail('a string literal is not closed');
        if (s[i] === "'" && s[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (s[i] === "'") break;
        else value += s[i++];
      }
      i++;
      tokens.push({ kind: 'string', value });
    } else {
      const m = /^[^\s(),']+/.exec(s.slice(i));
      if (!m) throw fail(`unexpected character ${ch}`);
      // v2-style typed literals: datetime'…', guid'…' (the quoted part is the value).
      if (/^(datetime|datetimeoffset|guid|date)$/i.test(m[0]) && s[i + m[0].length] === "'") {
        i += m[0].length;
        continue;
      }
      tokens.push({ kind: 'word', value: m[0] });
      i += m[0].length;
    }
  }
  return tokens;
}

type Operand = { kind: 'property'; name: string } | { kind: 'literal'; value: unknown } | { kind: 'condition'; filter: unknown[] };

/** Parses $filter; `property` maps an OData property name to the field name (undefined: unknown). */
export function odataFilterToDevExtreme(text: string, property: (name: string) => string | undefined): unknown[] {
  if (text.length > MAX_LENGTH) throw fail(`longer than ${MAX_LENGTH} characters`);
  const tokens = tokenize(text);
  let pos = 0;
  const peekWord = () => {
    const t = tokens[pos];
    return t?.kind === 'word' ? t.value.toLowerCase() : undefined;
  };
  const expect = (kind: Token['kind']) => {
    if (tokens[pos]?.kind !== kind) throw fail(`expected ${kind === 'lparen' ? '(' : kind === 'rparen' ? ')' : ','} at token ${pos + 1}`);
    pos++;
  };

  function or(depth: number): unknown[] {
    const parts = [and(depth)];
    while (peekWord() === 'or') {
      pos++;
      parts.push(and(depth));
    }
    return parts.length === 1 ? parts[0] : parts.flatMap((p, i) => (i ? ['or', p] : [p]));
  }
  function and(depth: number): unknown[] {
    const parts = [unary(depth)];
    while (peekWord() === 'and') {
      pos++;
      parts.push(unary(depth));
    }
    return parts.length === 1 ? parts[0] : parts.flatMap((p, i) => (i ? ['and', p] : [p]));
  }
  function unary(depth: number): unknown[] {
    if (depth > 32) throw fail('nested too deeply');
    if (peekWord() === 'not') {
      pos++;
      return ['!', unary(depth + 1)];
    }
    const left = operand(depth);
    const opWord = peekWord();
    if (opWord && COMPARISONS[opWord]) {
      pos++;
      const right = operand(depth);
      return comparison(left, COMPARISONS[opWord], right);
    }
    if (left.kind === 'condition') return left.filter;
    if (left.kind === 'property') return [left.name, '=', true];
    throw fail('expected a comparison (eq, ne, gt, ge, lt, le)');
  }
  function operand(depth: number): Operand {
    const t = tokens[pos];
    if (!t) throw fail('the expression ends too early');
    if (t.kind === 'lparen') {
      pos++;
      const inner = or(depth + 1);
      expect('rparen');
      return { kind: 'condition', filter: inner };
    }
    if (t.kind === 'string') {
      pos++;
      return { kind: 'literal', value: t.value };
    }
    if (t.kind !== 'word') throw fail(`unexpected ${t.kind} at token ${pos + 1}`);
    pos++;
    const w = t.value;
    const lower = w.toLowerCase();
    if (tokens[pos]?.kind === 'lparen') {
      pos++;
      if (TEXT_FUNCTIONS[lower]) {
        const target = operand(depth + 1);
        expect('comma');
        const value = operand(depth + 1);
        expect('rparen');
        if (target.kind !== 'property' || value.kind !== 'literal') throw fail(`${lower}(property, 'text') takes a property and a literal`);
        return { kind: 'condition', filter: [target.name, TEXT_FUNCTIONS[lower], value.value] };
      }
      if (lower === 'tolower' || lower === 'toupper' || lower === 'trim') {
        // Comparisons already ignore case; these wrappers change nothing.
        const inner = operand(depth + 1);
        expect('rparen');
        return inner;
      }
      throw fail(`the function ${w} is not supported; supported: contains, startswith, endswith, tolower, toupper`);
    }
    if (lower === 'null') return { kind: 'literal', value: null };
    if (lower === 'true' || lower === 'false') return { kind: 'literal', value: lower === 'true' };
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[mMdDfFlL]?$/.test(w)) return { kind: 'literal', value: Number(w.replace(/[mMdDfFlL]$/, '')) };
    if (/^\d{4}-\d{2}-\d{2}/.test(w) || /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(w)) return { kind: 'literal', value: w };
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w)) {
      const name = property(w);
      if (!name) throw badRequest(`$filter names an unknown property ${w}`, [{ path: '/query/$filter', message: `unknown property ${w}` }]);
      return { kind: 'property', name };
    }
    throw fail(`cannot read ${JSON.stringify(w)}`);
  }

  if (tokens.length === 0) return [];
  const result = or(0);
  if (pos !== tokens.length) throw fail(`unexpected input at token ${pos + 1}`);
  return result;
}

function comparison(left: Operand, op: string, right: Operand): unknown[] {
  if (left.kind === 'property' && right.kind === 'literal') return [left.name, op, right.value];
  if (left.kind === 'literal' && right.kind === 'property') return [right.name, SWAPPED[op], left.value];
  // contains(Name,'x') eq true / eq false
  if (left.kind === 'condition' && right.kind === 'literal' && typeof right.value === 'boolean' && (op === '=' || op === '<>')) {
    return right.value === (op === '=') ? left.filter : ['!', left.filter];
  }
  throw fail('a comparison takes a property and a literal');
}
