// SCIM filter and PATCH path grammar (RFC 7644 §3.4.2.2, §3.5.2): a tokenizer and a recursive-descent
// parser into a small tree. Hostile input is bounded before any work: the text's length, the nesting depth
// and the number of comparisons; every step is linear in the text. Compiling the tree to SQL is
// compile-filter.ts's job; this module knows no SQL.
import { scimError } from './errors.ts';
import { CORE_GROUP, CORE_USER, ENTERPRISE_USER } from './schemas.ts';

export const MAX_FILTER_LENGTH = 2048;
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_COMPARISONS = 32;
const MAX_LITERAL_LENGTH = 1024;

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
const COMPARE_OPS = new Set<string>(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

/** An attribute path: the schema it is qualified with (if any), the attribute and an optional sub-attribute, lowercased. */
export interface AttrPath {
  schema: string | null;
  attr: string;
  sub: string | null;
}

export type Literal = string | number | boolean | null;

export type Filter =
  | { kind: 'compare'; path: AttrPath; op: CompareOp; value: Literal }
  | { kind: 'present'; path: AttrPath }
  | { kind: 'and' | 'or'; left: Filter; right: Filter }
  | { kind: 'not'; filter: Filter }
  /** attr[filter]: some value of the multi-valued attr matches filter (whose paths are its sub-attributes). */
  | { kind: 'valuePath'; path: AttrPath; filter: Filter };

const SCHEMAS = [ENTERPRISE_USER, CORE_USER, CORE_GROUP];

/** `urn:…:User:name.givenName` or `name.givenName` to its parts; null when it is not an attribute path. */
export function parseAttrPath(text: string): AttrPath | null {
  let schema: string | null = null;
  let rest = text;
  if (/^urn:/i.test(text)) {
    const lower = text.toLowerCase();
    const known = SCHEMAS.find((s) => lower === s.toLowerCase() || lower.startsWith(`${s.toLowerCase()}:`));
    if (!known) return null;
    schema = known;
    rest = text.slice(known.length + 1);
    if (rest === '') return { schema, attr: '', sub: null };
  }
  const m = /^([A-Za-z][\w$-]*)(?:\.([A-Za-z][\w$-]*))?$/.exec(rest);
  if (!m) return null;
  return { schema, attr: m[1].toLowerCase(), sub: m[2]?.toLowerCase() ?? null };
}

type Token =
  | { t: 'word'; v: string; at: number }
  | { t: 'literal'; v: Literal; at: number }
  | { t: '(' | ')' | '[' | ']'; at: number }
  | { t: 'end'; at: number };

const invalid = (detail: string) => scimError(400, 'invalidFilter', detail);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ t: c, at: i });
      i++;
    } else if (c === '"') {
      // A JSON string: scan to the closing quote, honouring backslash escapes, then let JSON decode it.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw invalid(`the string starting at position ${i + 1} is not closed`);
      let value: string;
      try {
        value = JSON.parse(text.slice(i, j + 1)) as string;
      } catch {
        throw invalid(`the string starting at position ${i + 1} has an invalid escape`);
      }
      if (value.length > MAX_LITERAL_LENGTH) throw invalid(`a string in the filter is longer than ${MAX_LITERAL_LENGTH} characters`);
      tokens.push({ t: 'literal', v: value, at: i });
      i = j + 1;
    } else {
      const m = /^[^\s()[\]"]+/.exec(text.slice(i, i + 512));
      const word = m?.[0] ?? c;
      const lower = word.toLowerCase();
      if (lower === 'true' || lower === 'false') tokens.push({ t: 'literal', v: lower === 'true', at: i });
      else if (lower === 'null') tokens.push({ t: 'literal', v: null, at: i });
      else if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) tokens.push({ t: 'literal', v: Number(word), at: i });
      else tokens.push({ t: 'word', v: word, at: i });
      i += word.length;
    }
  }
  tokens.push({ t: 'end', at: text.length });
  return tokens;
}

class Parser {
  #tokens: Token[];
  #pos = 0;
  #comparisons = 0;
  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }
  peek(): Token {
    return this.#tokens[this.#pos];
  }
  next(): Token {
    return this.#tokens[this.#pos++];
  }
  isWord(v: string): boolean {
    const t = this.peek();
    return t.t === 'word' && t.v.toLowerCase() === v;
  }
  expect(kind: Token['t'], what: string): Token {
    const t = this.next();
    if (t.t !== kind) throw invalid(`expected ${what} at position ${t.at + 1}`);
    return t;
  }
  filter(depth: number): Filter {
    if (depth > MAX_FILTER_DEPTH) throw invalid(`the filter nests deeper than ${MAX_FILTER_DEPTH} levels`);
    let left = this.conjunction(depth);
    while (this.isWord('or')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction(depth) };
    }
    return left;
  }
  conjunction(depth: number): Filter {
    let left = this.unary(depth);
    while (this.isWord('and')) {
      this.next();
      left = { kind: 'and', left, right: this.unary(depth) };
    }
    return left;
  }
  unary(depth: number): Filter {
    if (this.isWord('not')) {
      this.next();
      this.expect('(', '"(" after not');
      const inner = this.filter(depth + 1);
      this.expect(')', '")"');
      return { kind: 'not', filter: inner };
    }
    if (this.peek().t === '(') {
      this.next();
      const inner = this.filter(depth + 1);
      this.expect(')', '")"');
      return inner;
    }
    return this.comparison(depth);
  }
  comparison(depth: number): Filter {
    const t = this.next();
    if (t.t !== 'word') throw invalid(`expected an attribute at position ${t.at + 1}`);
    const path = parseAttrPath(t.v);
    if (!path || path.attr === '') throw invalid(`"${t.v}" is not an attribute path`);
    if (++this.#comparisons > MAX_FILTER_COMPARISONS) throw invalid(`the filter has more than ${MAX_FILTER_COMPARISONS} comparisons`);
    if (this.peek().t === '[') {
      if (path.sub) throw invalid(`"${t.v}[" : a value filter follows an attribute, not a sub-attribute`);
      this.next();
      const inner = this.filter(depth + 1);
      this.expect(']', '"]"');
      return { kind: 'valuePath', path, filter: inner };
    }
    const opToken = this.next();
    const op = opToken.t === 'word' ? opToken.v.toLowerCase() : '';
    if (op === 'pr') return { kind: 'present', path };
    if (!COMPARE_OPS.has(op)) throw invalid(`expected an operator (eq ne co sw ew pr gt ge lt le) at position ${opToken.at + 1}`);
    const value = this.next();
    if (value.t !== 'literal') throw invalid(`expected a value (a "string", number, true, false or null) at position ${value.at + 1}`);
    return { kind: 'compare', path, op: op as CompareOp, value: value.v };
  }
}

/** Parses a filter; a SCIM invalidFilter error says what is wrong and where. */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) throw invalid(`the filter is longer than ${MAX_FILTER_LENGTH} characters`);
  if (text.trim() === '') throw invalid('the filter is empty');
  const parser = new Parser(tokenize(text));
  const filter = parser.filter(0);
  const rest = parser.peek();
  if (rest.t !== 'end') throw invalid(`unexpected text at position ${rest.at + 1}`);
  return filter;
}

/** A PATCH path: an attribute path, optionally with a value filter and a sub-attribute after it. */
export interface PatchPath {
  path: AttrPath;
  filter: Filter | null;
  /** The sub-attribute after `attr[filter]`, e.g. `value` of `emails[type eq "work"].value`. */
  subAfterFilter: string | null;
}

export function parsePatchPath(text: string): PatchPath {
  const bad = (detail: string) => scimError(400, 'invalidPath', detail);
  if (text.length > MAX_FILTER_LENGTH) throw bad(`the path is longer than ${MAX_FILTER_LENGTH} characters`);
  const open = text.indexOf('[');
  if (open < 0) {
    const path = parseAttrPath(text.trim());
    if (!path) throw bad(`"${text}" is not an attribute path`);
    return { path, filter: null, subAfterFilter: null };
  }
  const close = text.lastIndexOf(']');
  if (close < open) throw bad(`"${text}": "[" is not closed`);
  const path = parseAttrPath(text.slice(0, open).trim());
  if (!path || path.attr === '' || path.sub) throw bad(`"${text.slice(0, open)}" is not an attribute that takes a value filter`);
  let filter: Filter;
  try {
    filter = parseFilter(text.slice(open + 1, close));
  } catch (err) {
    throw bad(`the value filter of "${text}" is invalid: ${(err as Error).message}`);
  }
  const after = text.slice(close + 1).trim();
  let subAfterFilter: string | null = null;
  if (after !== '') {
    const m = /^\.([A-Za-z][\w$-]*)$/.exec(after);
    if (!m) throw bad(`"${after}" after the value filter is not ".subAttribute"`);
    subAfterFilter = m[1].toLowerCase();
  }
  return { path, filter, subAfterFilter };
}
