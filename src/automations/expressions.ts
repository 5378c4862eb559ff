// The platform's expression language inside definition strings: `{{['Action']$.Content.Name | ToUpperCase}}`,
// `{{['#HttpRequest']$.Body}}`, `{{NewGuid}}`, `{{NewDateUtc(Today)}}`, pipes chained with `|`. Text is
// tokenised and parsed into a small AST that is interpreted here; nothing is ever handed to eval or
// Function, and the only values an expression sees are the run's own action outputs.
import { randomUUID } from 'node:crypto';
import { ExpressionError, evaluatePath, type JsonPath, parsePath, parseRootlessPath, readQuoted } from './jsonpath.ts';
import { isStringValues, PIPES } from './pipes.ts';
import { reveal, Secret, taint } from './secret.ts';
import { boundedJson, jsonBytes } from './size.ts';

export { ExpressionError };

export type Expr =
  | { kind: 'ref'; name: string; path: JsonPath | null }
  | { kind: 'guid' }
  | { kind: 'date'; which: DateWord }
  | { kind: 'literal'; value: unknown }
  | { kind: 'pipe'; input: Expr; pipe: string; args: Expr[] }
  /** An expression with `#eval(...)` in it: its shape is known only once the #eval arguments have values. */
  | { kind: 'dynamic'; text: string };

const DATE_WORDS = ['Now', 'Today', 'Yesterday', 'FirstDayOfYear', 'LastDayOfYear'] as const;
type DateWord = (typeof DATE_WORDS)[number];

/** A string of the definition: literal text and expressions, or exactly one expression (then its value keeps its type). */
export type Template = { kind: 'text'; text: string } | { kind: 'single'; expr: Expr } | { kind: 'mixed'; parts: (string | Expr)[] };

/** What an expression reads: the outputs of the run's actions by name, `#HttpRequest`, `#Item` and the like. */
export type Scope = (name: string) => { found: boolean; value: unknown };

const IDENT = /^[A-Za-z][A-Za-z0-9]*/;

/** Finds the end of an expression started at `{{`: the first `}}` outside quotes and brackets. */
function closing(src: string, from: number): number {
  let depth = 0;
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    if (c === "'" || c === '"') i = readQuoted(src, i).end - 1;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === '}' && src[i + 1] === '}' && depth <= 0) return i;
  }
  throw new ExpressionError('"{{" is not closed by "}}"', from - 2);
}

/** Pipes one expression may chain: evaluation recurses once per pipe. */
export const MAX_PIPES = 100;
/** Longest definition string parsed as a template. */
export const MAX_TEMPLATE_LENGTH = 256 * 1024;
/** The parse cache holds at most this many characters of source, and no string longer than CACHE_ENTRY_MAX. */
const CACHE_MAX_CHARS = 8 * 1024 * 1024;
const CACHE_ENTRY_MAX = 16 * 1024;
const cache = new Map<string, Template>();
let cacheChars = 0;

/** Parses a definition string once (cached, bounded by characters): the engine evaluates the same strings for every run. */
export function parseTemplate(src: string): Template {
  const hit = cache.get(src);
  if (hit) return hit;
  if (src.length > MAX_TEMPLATE_LENGTH)
    throw new ExpressionError(`a string with expressions may be at most ${MAX_TEMPLATE_LENGTH} characters (it has ${src.length})`, 0);
  const parts: (string | Expr)[] = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      parts.push(src.slice(i));
      break;
    }
    if (open > i) parts.push(src.slice(i, open));
    const end = closing(src, open + 2);
    const body = src.slice(open + 2, end);
    parts.push(body.includes(EVAL) ? parseDynamic(body, open + 2) : parseExpression(body, open + 2));
    i = end + 2;
  }
  let t: Template;
  if (parts.length === 1 && typeof parts[0] !== 'string') t = { kind: 'single', expr: parts[0] };
  else if (parts.every((p) => typeof p === 'string')) t = { kind: 'text', text: src };
  else t = { kind: 'mixed', parts };
  if (src.length <= CACHE_ENTRY_MAX) {
    if (cacheChars + src.length > CACHE_MAX_CHARS) {
      cache.clear();
      cacheChars = 0;
    }
    cache.set(src, t);
    cacheChars += src.length;
  }
  return t;
}

const EVAL = '#eval(';
/** #eval substitutions one expression may make (nested ones included). */
export const MAX_EVALS = 32;

/** The `)` closing the `(` at `open`, skipping quoted text; -1 when there is none. */
function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close < 0) return -1;
      i = close;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * `#eval(<expression>)` (the platform's preprocessor, fact sheet §6.6): checked on save as far as it can be
 * (every #eval closed, at most MAX_EVALS of them); the expression is parsed once its #eval values are known.
 */
function parseDynamic(text: string, offset: number): Expr {
  let count = 0;
  for (let at = text.indexOf(EVAL); at >= 0; at = text.indexOf(EVAL, at + 1)) {
    if (++count > MAX_EVALS) throw new ExpressionError(`an expression may hold at most ${MAX_EVALS} #eval`, offset + at);
    if (matchingParen(text, at + EVAL.length - 1) < 0) throw new ExpressionError('"#eval(" is not closed by ")"', offset + at);
  }
  return { kind: 'dynamic', text };
}

/**
 * Replaces each #eval, innermost (last) first, by its argument's value as text; every argument and the final
 * text go through this parser and interpreter — nothing is ever handed to JavaScript's eval.
 */
function expandEvals(text: string, scope: Scope, budget: Budget): string {
  let t = text;
  for (let n = 0; ; n++) {
    const at = t.lastIndexOf(EVAL);
    if (at < 0) return t;
    if (n >= MAX_EVALS) throw new ExpressionError(`an expression may make at most ${MAX_EVALS} #eval substitutions`, 0);
    const close = matchingParen(t, at + EVAL.length - 1);
    if (close < 0) throw new ExpressionError('"#eval(" is not closed by ")"', at);
    // An argument that is no expression (the value an inner #eval put there, such as a date) is its own text.
    const arg = t.slice(at + EVAL.length, close);
    let parsed: Expr | null = null;
    try {
      parsed = parseExpression(arg);
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
    }
    const value = parsed ? evaluateExpr(parsed, scope, budget) : arg.trim();
    if (value instanceof Secret) throw new ExpressionError('#eval cannot take a secret (it would become part of an expression)', at);
    const piece = asText(value, MAX_TEMPLATE_LENGTH);
    if (t.length - (close + 1 - at) + piece.length > MAX_TEMPLATE_LENGTH)
      throw new ExpressionError(`#eval would make the expression longer than ${MAX_TEMPLATE_LENGTH} characters`, at);
    t = t.slice(0, at) + piece + t.slice(close + 1);
  }
}

/** One expression (the text between `{{` and `}}`); offset places error positions in the whole string. */
export function parseExpression(text: string, offset = 0): Expr {
  const fail = (message: string, at: number): never => {
    throw new ExpressionError(message, offset + at);
  };
  const ws = (i: number) => {
    while (i < text.length && /\s/.test(text[i])) i++;
    return i;
  };

  function primary(pos: number): { expr: Expr; end: number } {
    const i = ws(pos);
    const c = text[i];
    if (c === '[') {
      const j = ws(i + 1);
      if (text[j] !== "'" && text[j] !== '"') fail("an action name in quotes is expected: ['Name']", j);
      const q = readQuoted(text, j);
      const k = ws(q.end);
      if (text[k] !== ']') fail('"]" expected after the action name', k);
      let end = k + 1;
      let path: JsonPath | null = null;
      // `['X']$.path` and the platform's other spelling `['X'].path` (no `$`) read the same.
      if (text[end] === '$' || text[end] === '.' || text[end] === '[') {
        try {
          const p = text[end] === '$' ? parsePath(text, end) : parseRootlessPath(text, end);
          path = p.path;
          end = p.end;
        } catch (err) {
          if (err instanceof ExpressionError) fail(`${err.message}`, err.position);
          throw err;
        }
      }
      return { expr: { kind: 'ref', name: q.value, path }, end };
    }
    if (c === "'" || c === '"') {
      const q = readQuoted(text, i);
      return { expr: { kind: 'literal', value: q.value }, end: q.end };
    }
    const num = /^-?\d+(\.\d+)?/.exec(text.slice(i));
    if (num) return { expr: { kind: 'literal', value: Number(num[0]) }, end: i + num[0].length };
    const id = IDENT.exec(text.slice(i))?.[0];
    if (!id) return fail("an expression is expected: ['Action']$.path, NewGuid, NewDateUtc(...) or a literal", i);
    let end = i + id.length;
    if (id === 'true' || id === 'false') return { expr: { kind: 'literal', value: id === 'true' }, end };
    if (id === 'null') return { expr: { kind: 'literal', value: null }, end };
    if (id === 'EmptyGuid') {
      const j = ws(end);
      if (text[j] === '(' && text[ws(j + 1)] === ')') end = ws(j + 1) + 1;
      return { expr: { kind: 'literal', value: '00000000-0000-0000-0000-000000000000' }, end };
    }
    if (id === 'NewGuid') {
      const j = ws(end);
      if (text[j] === '(' && text[ws(j + 1)] === ')') end = ws(j + 1) + 1;
      return { expr: { kind: 'guid' }, end };
    }
    if (id === 'NewDateUtc') {
      let j = ws(end);
      if (text[j] !== '(') return { expr: { kind: 'date', which: 'Now' }, end };
      j = ws(j + 1);
      const word = IDENT.exec(text.slice(j))?.[0] ?? '';
      if (!(DATE_WORDS as readonly string[]).includes(word)) fail(`NewDateUtc takes one of ${DATE_WORDS.join(', ')}`, j);
      const k = ws(j + word.length);
      if (text[k] !== ')') fail('")" expected', k);
      return { expr: { kind: 'date', which: word as DateWord }, end: k + 1 };
    }
    return fail(`unknown function "${id}"`, i);
  }

  let { expr, end } = primary(0);
  let pipes = 0;
  for (;;) {
    let i = ws(end);
    if (i >= text.length) return expr;
    if (text[i] !== '|') fail('"|" or the end of the expression expected', i);
    i = ws(i + 1);
    const pipe = IDENT.exec(text.slice(i))?.[0];
    if (!pipe) fail('a pipe name is expected after "|"', i);
    const name = pipe as string;
    if (!Object.hasOwn(PIPES, name)) fail(`unknown pipe "${name}"`, i);
    if (++pipes > MAX_PIPES) fail(`an expression may chain at most ${MAX_PIPES} pipes`, i);
    i += name.length;
    const args: Expr[] = [];
    const j = ws(i);
    if (text[j] === '(') {
      i = ws(j + 1);
      if (text[i] === ')') i++;
      else
        for (;;) {
          const a = primary(i);
          args.push(a.expr);
          i = ws(a.end);
          if (text[i] === ',') {
            i++;
            continue;
          }
          if (text[i] !== ')') fail('")" or "," expected in the pipe\'s arguments', i);
          i++;
          break;
        }
    }
    const spec = PIPES[name];
    if (args.length < spec.min || args.length > spec.max)
      fail(`${name} takes ${spec.min === spec.max ? spec.min : `${spec.min} to ${spec.max}`} argument(s)`, i);
    expr = { kind: 'pipe', input: expr, pipe: name, args };
    end = i;
  }
}

function dateOf(which: DateWord, now: Date): string {
  const y = now.getUTCFullYear();
  const day = Date.UTC(y, now.getUTCMonth(), now.getUTCDate());
  switch (which) {
    case 'Now':
      return now.toISOString();
    case 'Today':
      return new Date(day).toISOString();
    case 'Yesterday':
      return new Date(day - 86_400_000).toISOString();
    case 'FirstDayOfYear':
      return new Date(Date.UTC(y, 0, 1)).toISOString();
    case 'LastDayOfYear':
      return new Date(Date.UTC(y, 11, 31)).toISOString();
  }
}

/**
 * How many bytes of values an evaluation may still produce: every template's value is charged, and pipes
 * refuse (before allocating) a result larger than what is left. One per action, so its fields together are
 * bounded by ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES.
 */
export class Budget {
  readonly limit: number;
  left: number;
  constructor(limit: number) {
    this.limit = limit;
    this.left = limit;
  }
  charge(value: unknown): void {
    if (typeof value !== 'object' || value === null) {
      if (typeof value !== 'string' || value.length < 64) return;
    }
    const n = jsonBytes(value, this.left);
    if (n > this.left) throw new ExpressionError(`the values would pass the output limit of ${this.limit} bytes (ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES)`, 0);
    this.left -= n;
  }
}

const UNLIMITED = 16 * 1024 * 1024;

export function evaluateExpr(expr: Expr, scope: Scope, budget: Budget = new Budget(UNLIMITED)): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'guid':
      return randomUUID();
    case 'date':
      return dateOf(expr.which, new Date());
    case 'ref': {
      const r = scope(expr.name);
      if (!r.found) throw new ExpressionError(`['${expr.name}'] has no value here: no such action has run`, 0);
      if (!expr.path) return r.value;
      // A path into a secret reads the clear value, and what it finds stays a secret.
      return r.value instanceof Secret ? taint(evaluatePath(expr.path, r.value.reveal())) : evaluatePath(expr.path, r.value);
    }
    case 'dynamic':
      return evaluateExpr(parseExpression(expandEvals(expr.text, scope, budget)), scope, budget);
    case 'pipe': {
      const input = evaluateExpr(expr.input, scope, budget);
      const args = expr.args.map((a) => evaluateExpr(a, scope, budget));
      if (input instanceof Secret || args.some((a) => a instanceof Secret)) return taint(PIPES[expr.pipe].fn(reveal(input), args.map(reveal), budget.left));
      return PIPES[expr.pipe].fn(input, args, budget.left);
    }
  }
}

/** A value as text: objects as JSON, refused when that would pass `limit` bytes (checked before writing it). */
const asText = (v: unknown, limit = UNLIMITED): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (isStringValues(v)) return v.join(',');
  if (typeof v !== 'object' || v instanceof Secret) return String(v);
  const json = boundedJson(v, limit);
  if (json === null) throw new ExpressionError(`the value as text would pass the output limit of ${limit} bytes`, 0);
  return json;
};

export function evaluateTemplate(t: Template, scope: Scope, budget: Budget = new Budget(UNLIMITED)): unknown {
  if (t.kind === 'text') return t.text;
  let value: unknown;
  if (t.kind === 'single') value = evaluateExpr(t.expr, scope, budget);
  else {
    let out = '';
    let secret = false;
    for (const p of t.parts) {
      let v = typeof p === 'string' ? p : evaluateExpr(p, scope, budget);
      if (v instanceof Secret) {
        secret = true;
        v = v.reveal();
      }
      const piece = asText(v, budget.left);
      if (out.length + piece.length > budget.left)
        throw new ExpressionError(`the text would pass the output limit of ${budget.limit} bytes (ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES)`, 0);
      out += piece;
    }
    // A text with a secret in it is a secret as a whole.
    value = secret ? taint(out) : out;
  }
  budget.charge(value);
  return value;
}

/** Evaluates every string inside a JSON value of the definition (objects and arrays are walked). */
export function evaluateValue(value: unknown, scope: Scope, budget: Budget = new Budget(UNLIMITED)): unknown {
  if (typeof value === 'string') return value.includes('{{') ? evaluateTemplate(parseTemplate(value), scope, budget) : value;
  if (Array.isArray(value)) return value.map((v) => evaluateValue(v, scope, budget));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = evaluateValue(v, scope, budget);
    return out;
  }
  return value;
}

/** The action names an expression reads (for validation). */
export function referencedNames(t: Template): string[] {
  const names: string[] = [];
  const visit = (e: Expr) => {
    if (e.kind === 'ref') names.push(e.name);
    if (e.kind === 'pipe') {
      visit(e.input);
      e.args.forEach(visit);
    }
  };
  if (t.kind === 'single') visit(t.expr);
  if (t.kind === 'mixed') for (const p of t.parts) if (typeof p !== 'string') visit(p);
  return names;
}

export { asText };
