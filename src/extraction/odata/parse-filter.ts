// OData v4 $filter text -> an expression tree, with the precedence of OData ABNF §5.1.1.1 (grouping,
// function calls, unary, mul/div/mod, add/sub, comparisons and `in`, not, and, or). Names stay names;
// compile-filter.ts resolves them against the entity's properties and binds every literal as a parameter.
import { badRequest } from '../../platform/errors.ts';

export type LiteralType = 'string' | 'number' | 'boolean' | 'null' | 'date' | 'datetime' | 'guid';

export type Node =
  | { kind: 'literal'; type: LiteralType; value: string | boolean | null }
  | { kind: 'property'; name: string }
  | { kind: 'call'; name: string; args: Node[] }
  | { kind: 'arith'; op: 'add' | 'sub' | 'mul' | 'div' | 'mod'; left: Node; right: Node }
  | { kind: 'neg'; operand: Node }
  | { kind: 'compare'; op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'; left: Node; right: Node }
  | { kind: 'in'; left: Node; list: Node[] }
  | { kind: 'logic'; op: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'not'; operand: Node };

type Token = { kind: 'lparen' | 'rparen' | 'comma' } | { kind: 'string'; value: string } | { kind: 'word'; value: string };

const MAX_LENGTH = 8000;
const MAX_DEPTH = 32;
const COMPARISONS = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?[mMdDfFlL]?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/i;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const filterError = (message: string) => badRequest(`$filter is invalid: ${message}`, [{ path: '/query/$filter', message }]);

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
        if (i >= s.length) throw filterError('a string literal is not closed');
        if (s[i] === "'" && s[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (s[i] === "'") break;
        else value += s[i++];
      }
      i++;
      tokens.push({ kind: 'string', value });
    } else {
      const m = /^[^\s(),']+/.exec(s.slice(i)) as RegExpExecArray;
      // v2-style typed literals: datetime'…', guid'…' — the quoted part is the value, read as a bare literal.
      if (/^(datetime|datetimeoffset|guid|date)$/i.test(m[0]) && s[i + m[0].length] === "'") {
        const end = s.indexOf("'", i + m[0].length + 1);
        if (end < 0) throw filterError('a string literal is not closed');
        tokens.push({ kind: 'word', value: s.slice(i + m[0].length + 1, end) });
        i = end + 1;
        continue;
      }
      tokens.push({ kind: 'word', value: m[0] });
      i += m[0].length;
    }
  }
  return tokens;
}

/** A bare word as a literal, or null when it is a name. */
function literalOf(word: string): Node | null {
  const lower = word.toLowerCase();
  if (lower === 'null') return { kind: 'literal', type: 'null', value: null };
  if (lower === 'true' || lower === 'false') return { kind: 'literal', type: 'boolean', value: lower === 'true' };
  if (NUMBER.test(word)) return { kind: 'literal', type: 'number', value: word.replace(/[mMdDfFlL]$/, '') };
  if (DATE.test(word)) return { kind: 'literal', type: 'date', value: word };
  if (DATETIME.test(word)) return { kind: 'literal', type: 'datetime', value: word };
  if (GUID.test(word)) return { kind: 'literal', type: 'guid', value: word.toLowerCase() };
  return null;
}

/** Parses $filter into a tree; an empty filter is null. */
export function parseFilter(text: string): Node | null {
  if (text.length > MAX_LENGTH) throw filterError(`longer than ${MAX_LENGTH} characters`);
  const tokens = tokenize(text);
  if (tokens.length === 0) return null;
  let pos = 0;
  let depth = 0;
  const peekWord = () => {
    const t = tokens[pos];
    return t?.kind === 'word' ? t.value.toLowerCase() : undefined;
  };
  const expect = (kind: 'lparen' | 'rparen' | 'comma') => {
    if (tokens[pos]?.kind !== kind) throw filterError(`expected ${kind === 'lparen' ? '(' : kind === 'rparen' ? ')' : ','} at token ${pos + 1}`);
    pos++;
  };
  const nested = <T>(f: () => T): T => {
    if (++depth > MAX_DEPTH) throw filterError('nested too deeply');
    try {
      return f();
    } finally {
      depth--;
    }
  };

  const or = (): Node => {
    let left = and();
    while (peekWord() === 'or') {
      pos++;
      left = { kind: 'logic', op: 'or', left, right: and() };
    }
    return left;
  };
  const and = (): Node => {
    let left = not();
    while (peekWord() === 'and') {
      pos++;
      left = { kind: 'logic', op: 'and', left, right: not() };
    }
    return left;
  };
  const not = (): Node => {
    if (peekWord() === 'not') {
      pos++;
      return nested(() => ({ kind: 'not', operand: not() }));
    }
    return comparison();
  };
  const comparison = (): Node => {
    const left = additive();
    const w = peekWord();
    if (w && COMPARISONS.has(w)) {
      pos++;
      return { kind: 'compare', op: w as 'eq', left, right: additive() };
    }
    if (w === 'in') {
      pos++;
      expect('lparen');
      const list = [additive()];
      while (tokens[pos]?.kind === 'comma') {
        pos++;
        list.push(additive());
      }
      expect('rparen');
      return { kind: 'in', left, list };
    }
    if (w === 'has') throw filterError('the has operator is not supported (the feed has no enumeration types)');
    return left;
  };
  const additive = (): Node => {
    let left = multiplicative();
    for (let w = peekWord(); w === 'add' || w === 'sub'; w = peekWord()) {
      pos++;
      left = { kind: 'arith', op: w, left, right: multiplicative() };
    }
    return left;
  };
  const multiplicative = (): Node => {
    let left = unary();
    for (let w = peekWord(); w === 'mul' || w === 'div' || w === 'mod' || w === 'divby'; w = peekWord()) {
      pos++;
      left = { kind: 'arith', op: w === 'divby' ? 'div' : w, left, right: unary() };
    }
    return left;
  };
  const unary = (): Node => {
    const t = tokens[pos];
    // `-Amount` (a minus glued to a name or a parenthesis); `-5` is a number literal.
    if (t?.kind === 'word' && t.value.startsWith('-') && !literalOf(t.value)) {
      if (t.value === '-') pos++;
      else t.value = t.value.slice(1);
      return nested(() => ({ kind: 'neg', operand: unary() }));
    }
    return primary();
  };
  const primary = (): Node => {
    const t = tokens[pos];
    if (!t) throw filterError('the expression ends too early');
    if (t.kind === 'lparen') {
      pos++;
      const inner = nested(or);
      expect('rparen');
      return inner;
    }
    if (t.kind === 'string') {
      pos++;
      return { kind: 'literal', type: 'string', value: t.value };
    }
    if (t.kind !== 'word') throw filterError(`unexpected ${t.kind === 'comma' ? ',' : ')'} at token ${pos + 1}`);
    pos++;
    if (tokens[pos]?.kind === 'lparen' && IDENTIFIER.test(t.value)) {
      pos++;
      const args: Node[] = [];
      if (tokens[pos]?.kind !== 'rparen') {
        args.push(nested(or));
        while (tokens[pos]?.kind === 'comma') {
          pos++;
          args.push(nested(or));
        }
      }
      expect('rparen');
      return { kind: 'call', name: t.value.toLowerCase(), args };
    }
    const literal = literalOf(t.value);
    if (literal) return literal;
    if (IDENTIFIER.test(t.value)) return { kind: 'property', name: t.value };
    throw filterError(`cannot read ${JSON.stringify(t.value)}`);
  };

  const result = or();
  if (pos !== tokens.length) throw filterError(`unexpected input at token ${pos + 1}`);
  return result;
}
