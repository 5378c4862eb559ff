// The JSONPath an expression reads an action's output with (`$.Content.Items[?(@.Price > 10)].Name`),
// parsed into segments and evaluated over plain JSON data. Written here rather than taken from a library
// so that no filter can run code: a filter is a small boolean language of comparisons over the data, and
// a property is read only when the value owns it (no prototype, no constructor, no getters of the host).

export class ExpressionError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.name = 'ExpressionError';
    this.position = position;
  }
}

type Selector =
  | { kind: 'name'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'slice'; start: number | null; end: number | null; step: number }
  | { kind: 'filter'; filter: Filter };

export interface Segment {
  selectors: Selector[];
  recursive: boolean;
}

export type Operand = { kind: 'path'; relative: boolean; segments: Segment[] } | { kind: 'literal'; value: unknown };

export type Filter =
  | { kind: 'or' | 'and'; left: Filter; right: Filter }
  | { kind: 'not'; operand: Filter }
  | { kind: 'compare'; op: '==' | '!=' | '<' | '<=' | '>' | '>='; left: Operand; right: Operand }
  | { kind: 'exists'; operand: Operand };

export interface JsonPath {
  segments: Segment[];
  /** Names and indexes only: the path denotes at most one value, which it answers itself (not a list). */
  definite: boolean;
}

const NAME_CHAR = /[A-Za-z0-9_\-#@$:]/;
const MAX_DEPTH = 64;

/** Reads a path starting at `$` (or `@` inside filters); answers it and the position after it. */
export function parsePath(src: string, start: number, depth = 0): { path: JsonPath; end: number } {
  if (src[start] !== '$') throw new ExpressionError('a JSONPath starts with $', start);
  return parseSegmentsAsPath(src, start + 1, depth);
}

/**
 * Reads a path written without its `$` (`.Body.Name`, `[0].Id`), as the platform's `{{['X'].Body.Name}}`
 * writes it after an entry: the same path as `$.Body.Name`.
 */
export function parseRootlessPath(src: string, start: number): { path: JsonPath; end: number } {
  if (src[start] !== '.' && src[start] !== '[') throw new ExpressionError('a path starts with "." or "["', start);
  return parseSegmentsAsPath(src, start, 0);
}

function parseSegmentsAsPath(src: string, start: number, depth: number): { path: JsonPath; end: number } {
  const { segments, end } = parseSegments(src, start, depth);
  const definite = segments.every((s) => !s.recursive && s.selectors.length === 1 && (s.selectors[0].kind === 'name' || s.selectors[0].kind === 'index'));
  return { path: { segments, definite }, end };
}

function parseSegments(src: string, pos: number, depth: number): { segments: Segment[]; end: number } {
  if (depth > MAX_DEPTH) throw new ExpressionError('the JSONPath nests too deeply', pos);
  const segments: Segment[] = [];
  let i = pos;
  for (;;) {
    if (src.startsWith('..', i)) {
      i += 2;
      if (src[i] === '[') {
        const r = parseBracket(src, i, depth);
        segments.push({ selectors: r.selectors, recursive: true });
        i = r.end;
      } else {
        const r = parseDotName(src, i);
        segments.push({ selectors: [r.selector], recursive: true });
        i = r.end;
      }
    } else if (src[i] === '.') {
      const r = parseDotName(src, i + 1);
      segments.push({ selectors: [r.selector], recursive: false });
      i = r.end;
    } else if (src[i] === '[') {
      const r = parseBracket(src, i, depth);
      segments.push({ selectors: r.selectors, recursive: false });
      i = r.end;
    } else return { segments, end: i };
  }
}

function parseDotName(src: string, pos: number): { selector: Selector; end: number } {
  if (src[pos] === '*') return { selector: { kind: 'wildcard' }, end: pos + 1 };
  let i = pos;
  while (i < src.length && NAME_CHAR.test(src[i])) i++;
  if (i === pos) throw new ExpressionError('a property name is expected after "."', pos);
  return { selector: { kind: 'name', name: src.slice(pos, i) }, end: i };
}

const skipSpaces = (src: string, i: number): number => {
  while (src[i] === ' ' || src[i] === '\t') i++;
  return i;
};

/** A quoted string ('…' or "…", backslash escapes); answers its value and the position after it. */
export function readQuoted(src: string, pos: number): { value: string; end: number } {
  const quote = src[pos];
  let out = '';
  let i = pos + 1;
  while (i < src.length && src[i] !== quote) {
    if (src[i] === '\\' && i + 1 < src.length) {
      const c = src[i + 1];
      out += c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c;
      i += 2;
    } else out += src[i++];
  }
  if (i >= src.length) throw new ExpressionError('a quoted string is not closed', pos);
  return { value: out, end: i + 1 };
}

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/;

function parseBracket(src: string, pos: number, depth: number): { selectors: Selector[]; end: number } {
  let i = skipSpaces(src, pos + 1);
  const selectors: Selector[] = [];
  if (src[i] === '?') {
    i = skipSpaces(src, i + 1);
    const paren = src[i] === '(';
    const r = parseOr(src, paren ? i + 1 : i, depth + 1);
    i = skipSpaces(src, r.end);
    if (paren) {
      if (src[i] !== ')') throw new ExpressionError('")" expected to close the filter', i);
      i = skipSpaces(src, i + 1);
    }
    if (src[i] !== ']') throw new ExpressionError('"]" expected after the filter', i);
    return { selectors: [{ kind: 'filter', filter: r.filter }], end: i + 1 };
  }
  if (src[i] === '(') {
    // A script expression: the platform's `[(@.length-1)]` (the last element); only @.length ± n is read.
    const m = /^\(\s*@\.length\s*(?:([+-])\s*(\d+))?\s*\)\s*\]/.exec(src.slice(i));
    if (!m) throw new ExpressionError('a script expression in [ ] may only be (@.length - n)', i);
    const n = m[2] === undefined ? 0 : Number(m[2]);
    const index = m[1] === '-' && n > 0 ? -n : Number.MAX_SAFE_INTEGER;
    return { selectors: [{ kind: 'index', index }], end: i + m[0].length };
  }
  for (;;) {
    i = skipSpaces(src, i);
    if (src[i] === "'" || src[i] === '"') {
      const q = readQuoted(src, i);
      selectors.push({ kind: 'name', name: q.value });
      i = q.end;
    } else if (src[i] === '*') {
      selectors.push({ kind: 'wildcard' });
      i++;
    } else {
      const m = /^(-?\d+)?\s*(:\s*(-?\d+)?\s*(:\s*(-?\d+)?)?)?/.exec(src.slice(i));
      if (!m || m[0].length === 0) throw new ExpressionError('a name, index, slice, * or filter is expected in [ ]', i);
      if (m[2] === undefined) selectors.push({ kind: 'index', index: Number(m[1]) });
      else {
        const step = m[5] === undefined ? 1 : Number(m[5]);
        if (step === 0) throw new ExpressionError('a slice step cannot be 0', i);
        selectors.push({ kind: 'slice', start: m[1] === undefined ? null : Number(m[1]), end: m[3] === undefined ? null : Number(m[3]), step });
      }
      i += m[0].length;
    }
    i = skipSpaces(src, i);
    if (src[i] === ',') {
      i++;
      continue;
    }
    if (src[i] === ']') return { selectors, end: i + 1 };
    throw new ExpressionError('"]" or "," expected', i);
  }
}

function parseOr(src: string, pos: number, depth: number): { filter: Filter; end: number } {
  let left = parseAnd(src, pos, depth);
  for (;;) {
    const i = skipSpaces(src, left.end);
    if (!src.startsWith('||', i)) return left;
    const right = parseAnd(src, i + 2, depth);
    left = { filter: { kind: 'or', left: left.filter, right: right.filter }, end: right.end };
  }
}

function parseAnd(src: string, pos: number, depth: number): { filter: Filter; end: number } {
  let left = parseUnary(src, pos, depth);
  for (;;) {
    const i = skipSpaces(src, left.end);
    if (!src.startsWith('&&', i)) return left;
    const right = parseUnary(src, i + 2, depth);
    left = { filter: { kind: 'and', left: left.filter, right: right.filter }, end: right.end };
  }
}

function parseUnary(src: string, pos: number, depth: number): { filter: Filter; end: number } {
  if (depth > MAX_DEPTH) throw new ExpressionError('the filter nests too deeply', pos);
  let i = skipSpaces(src, pos);
  if (src[i] === '!' && src[i + 1] !== '=') {
    const r = parseUnary(src, i + 1, depth + 1);
    return { filter: { kind: 'not', operand: r.filter }, end: r.end };
  }
  if (src[i] === '(') {
    const r = parseOr(src, i + 1, depth + 1);
    i = skipSpaces(src, r.end);
    if (src[i] !== ')') throw new ExpressionError('")" expected', i);
    return { filter: r.filter, end: i + 1 };
  }
  const left = parseOperand(src, i, depth);
  i = skipSpaces(src, left.end);
  const op = /^(==|!=|<=|>=|<|>)/.exec(src.slice(i))?.[1] as '==' | '!=' | '<' | '<=' | '>' | '>=' | undefined;
  if (!op) return { filter: { kind: 'exists', operand: left.operand }, end: left.end };
  const right = parseOperand(src, i + op.length, depth);
  return { filter: { kind: 'compare', op, left: left.operand, right: right.operand }, end: right.end };
}

function parseOperand(src: string, pos: number, depth: number): { operand: Operand; end: number } {
  const i = skipSpaces(src, pos);
  const c = src[i];
  if (c === '@' || c === '$') {
    const r = parseSegments(src, i + 1, depth + 1);
    return { operand: { kind: 'path', relative: c === '@', segments: r.segments }, end: r.end };
  }
  if (c === "'" || c === '"') {
    const q = readQuoted(src, i);
    return { operand: { kind: 'literal', value: q.value }, end: q.end };
  }
  const num = NUMBER.exec(src.slice(i));
  if (num) return { operand: { kind: 'literal', value: Number(num[0]) }, end: i + num[0].length };
  for (const [word, value] of [
    ['true', true],
    ['false', false],
    ['null', null],
  ] as const) {
    if (src.startsWith(word, i)) return { operand: { kind: 'literal', value }, end: i + word.length };
  }
  throw new ExpressionError('@path, $path, a string, a number, true, false or null expected in the filter', i);
}

/**
 * The value's own property (never inherited: JSON data only ever has own properties). A name that is not
 * there exactly is matched without regard to case, as the platform matches JSON names (`$.Body.ActionType`
 * reads the payload's `actionType`).
 */
export function ownProperty(value: unknown, name: string): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    if (name === 'length') return value.length;
    return /^\d+$/.test(name) ? value[Number(name)] : undefined;
  }
  const obj = value as Record<string, unknown>;
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

function children(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object') return Object.values(value);
  return [];
}

function select(value: unknown, sel: Selector, root: unknown, out: unknown[]): void {
  switch (sel.kind) {
    case 'name': {
      const v = ownProperty(value, sel.name);
      if (v !== undefined) out.push(v);
      return;
    }
    case 'index': {
      if (!Array.isArray(value)) return;
      const i = sel.index < 0 ? value.length + sel.index : sel.index;
      if (i >= 0 && i < value.length) out.push(value[i]);
      return;
    }
    case 'wildcard':
      out.push(...children(value));
      return;
    case 'slice': {
      if (!Array.isArray(value)) return;
      const n = value.length;
      const norm = (x: number) => (x < 0 ? Math.max(0, n + x) : Math.min(n, x));
      if (sel.step > 0) {
        for (let i = sel.start === null ? 0 : norm(sel.start); i < (sel.end === null ? n : norm(sel.end)); i += sel.step) out.push(value[i]);
      } else {
        const start = sel.start === null ? n - 1 : Math.min(n - 1, norm(sel.start));
        const end = sel.end === null ? -1 : norm(sel.end);
        let i = start;
        while (i > end) {
          out.push(value[i]);
          i += sel.step;
        }
      }
      return;
    }
    case 'filter':
      for (const child of children(value)) if (test(sel.filter, child, root)) out.push(child);
      return;
  }
}

function descendants(value: unknown, out: unknown[]): void {
  out.push(value);
  for (const c of children(value)) descendants(c, out);
}

function walk(segments: Segment[], start: unknown, root: unknown): unknown[] {
  let nodes = [start];
  for (const seg of segments) {
    const next: unknown[] = [];
    const bases: unknown[] = [];
    if (seg.recursive) for (const n of nodes) descendants(n, bases);
    else bases.push(...nodes);
    for (const n of bases) for (const sel of seg.selectors) select(n, sel, root, next);
    nodes = next;
  }
  return nodes;
}

function operandValue(op: Operand, current: unknown, root: unknown): { found: boolean; value: unknown } {
  if (op.kind === 'literal') return { found: true, value: op.value };
  const nodes = walk(op.segments, op.relative ? current : root, root);
  return nodes.length === 0 ? { found: false, value: undefined } : { found: true, value: nodes[0] };
}

function compare(op: string, a: unknown, b: unknown): boolean {
  if (op === '==') return a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));
  if (op === '!=') return !compare('==', a, b);
  const comparable = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!comparable) return false;
  const x = a as number | string;
  const y = b as number | string;
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

function test(f: Filter, current: unknown, root: unknown): boolean {
  switch (f.kind) {
    case 'or':
      return test(f.left, current, root) || test(f.right, current, root);
    case 'and':
      return test(f.left, current, root) && test(f.right, current, root);
    case 'not':
      return !test(f.operand, current, root);
    case 'exists': {
      const r = operandValue(f.operand, current, root);
      return r.found && r.value !== null && r.value !== false;
    }
    case 'compare': {
      const l = operandValue(f.left, current, root);
      const r = operandValue(f.right, current, root);
      return l.found && r.found && compare(f.op, l.value, r.value);
    }
  }
}

/** A definite path answers its value (undefined when absent); any other path the list of what it matched. */
export function evaluatePath(path: JsonPath, root: unknown): unknown {
  const nodes = walk(path.segments, root, root);
  return path.definite ? nodes[0] : nodes;
}
