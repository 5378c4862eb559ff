// Bodies as the platform reads them (it is ASP.NET): property names match the route's schema in any letter
// case, and properties the schema does not know are dropped before validation, their JSON paths reported in
// X-Ignored-Properties so that a typo is still noticed. A known property of the wrong type is left for the
// schema to refuse, naming it. Every route but the operator API (/admin, strict) gets this from app.ts.
// And as the platform's JSON reader fills nullable fields: an optional reference sent as the zero GUID
// (00000000-0000-0000-0000-000000000000, what its collections send for "none") is absent, and an empty
// string in a Guid, number, boolean or date field is null (absent when the field takes no null). A
// required one is left as sent, for the schema or the service to refuse naming it (docs/client-api.md).
import { badRequest } from '../errors.ts';
import { pointerToken } from './input-guard.ts';

/** What the schema lets a value hold, reduced to what renaming and dropping need. */
interface Shape {
  /** Anything goes (an empty schema in some alternative): the value is left as sent. */
  any: boolean;
  /** Properties by the schema's spelling; absent when no alternative is an object. */
  props?: Map<string, Shape>;
  /** Lowercased name -> the schema's spelling; null when two names differ only in case (then only exact names match). */
  folded?: Map<string, string | null>;
  /** Some alternative takes properties it does not name (additionalProperties, patternProperties): they are kept. */
  open: boolean;
  items?: Shape;
  /** A scalar the platform's reader fills from "" (and, for guid, from the zero GUID). */
  scalar?: 'guid' | 'number' | 'boolean' | 'date';
  /** The schema admits null. */
  nullable?: boolean;
  /** Properties every object alternative requires. */
  required?: Set<string>;
}

export const ZERO_GUID = '00000000-0000-0000-0000-000000000000';

const ANY: Shape = { any: true, open: true };
const shapes = new WeakMap<object, Shape>();

/** At most this many paths go into the header; a body full of one typo should not make a huge header. */
export const MAX_REPORTED = 50;

function shapeOf(schema: unknown): Shape {
  if (!schema || typeof schema !== 'object') return ANY;
  const cached = shapes.get(schema);
  if (cached) return cached;
  const s = schema as Record<string, unknown>;
  const parts: Shape[] = [];
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[key])) parts.push(...(s[key] as unknown[]).map(shapeOf));
  const own = ownShape(s);
  const shape = own ? merge([own, ...parts]) : parts.length ? merge(parts) : ANY;
  shapes.set(schema, shape);
  return shape;
}

/** The shape of a schema's own keywords, or null when it constrains nothing by itself (e.g. only anyOf). */
function ownShape(s: Record<string, unknown>): Shape | null {
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  const isObject = types.includes('object') || s.properties !== undefined || s.patternProperties !== undefined || s.additionalProperties !== undefined;
  const isArray = types.includes('array') || s.items !== undefined;
  const nullable = types.includes('null') || s.const === null;
  if (!isObject && !isArray) {
    if (types.length || s.const !== undefined || s.enum !== undefined || s.$ref !== undefined) {
      const scalar = scalarOf(s, types);
      return { any: false, open: false, ...(scalar ? { scalar } : {}), ...(nullable ? { nullable } : {}) };
    }
    return null;
  }
  const shape: Shape = { any: false, open: false, ...(nullable ? { nullable } : {}) };
  if (isObject) {
    const props = (s.properties ?? {}) as Record<string, unknown>;
    shape.props = new Map(Object.entries(props).map(([name, sub]) => [name, shapeOf(sub)]));
    shape.required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    shape.open =
      s.additionalProperties === true || (typeof s.additionalProperties === 'object' && s.additionalProperties !== null) || s.patternProperties !== undefined;
  }
  if (isArray && s.items && typeof s.items === 'object' && !Array.isArray(s.items)) shape.items = shapeOf(s.items);
  else if (isArray) shape.items = ANY;
  return withFolded(shape);
}

/** Dates are strings with format date / date-time or a pattern that starts with a year (fields.ts's ISO forms). */
function scalarOf(s: Record<string, unknown>, types: unknown[]): Shape['scalar'] {
  if (types.includes('number') || types.includes('integer')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  if (!types.includes('string')) return undefined;
  if (s.format === 'uuid') return 'guid';
  if (s.format === 'date' || s.format === 'date-time' || (typeof s.pattern === 'string' && s.pattern.startsWith('^\\d{4}-'))) return 'date';
  return undefined;
}

function merge(parts: Shape[]): Shape {
  if (parts.length === 1) return parts[0];
  if (parts.some((p) => p.any)) return ANY;
  const shape: Shape = { any: false, open: parts.some((p) => p.open) };
  const scalar = parts.find((p) => p.scalar)?.scalar;
  if (scalar) shape.scalar = scalar;
  if (parts.some((p) => p.nullable)) shape.nullable = true;
  const objects = parts.filter((p) => p.props);
  if (objects.length) {
    const byName = new Map<string, Shape[]>();
    for (const p of objects) for (const [name, sub] of p.props ?? []) byName.set(name, [...(byName.get(name) ?? []), sub]);
    shape.props = new Map([...byName].map(([name, subs]) => [name, merge(subs)]));
    shape.required = new Set([...byName.keys()].filter((name) => objects.every((p) => !p.props?.has(name) || p.required?.has(name))));
  }
  const items = parts.flatMap((p) => (p.items ? [p.items] : []));
  if (items.length) shape.items = merge(items);
  return withFolded(shape);
}

function withFolded(shape: Shape): Shape {
  if (!shape.props) return shape;
  const folded = new Map<string, string | null>();
  for (const name of shape.props.keys()) {
    const lower = name.toLowerCase();
    folded.set(lower, folded.has(lower) ? null : name);
  }
  shape.folded = folded;
  return shape;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

type Segment = string | number;

/**
 * Renames body properties to the schema's spelling and drops the ones it does not know, in place,
 * through nested objects and arrays (and every alternative of anyOf / oneOf / allOf). Answers the
 * JSON paths of the dropped properties. The same property sent twice in different cases is a 400.
 */
export function tolerateBody(body: unknown, schema: unknown): { body: unknown; ignored: string[] } {
  const ignored: string[] = [];
  const segments: Segment[] = [];
  const walk = (value: unknown, shape: Shape): unknown => {
    if (shape.any) return value;
    if (Array.isArray(value)) {
      if (!shape.items || shape.items.any) return value;
      for (let i = 0; i < value.length; i++) {
        segments.push(i);
        value[i] = walk(value[i], shape.items);
        segments.pop();
      }
      return value;
    }
    if (!shape.props || !isPlainObject(value)) return value;
    const seen = new Set<string>();
    for (const key of Object.keys(value)) {
      const name = shape.props.has(key) ? key : (shape.folded?.get(key.toLowerCase()) ?? undefined);
      segments.push(key);
      if (name === undefined) {
        if (!shape.open) {
          delete value[key];
          ignored.push(jsonPath(segments));
        }
      } else {
        if (seen.has(name)) {
          throw badRequest(`Property ${name} is sent twice.`, [{ path: pointer(segments), message: `duplicate of ${name}` }]);
        }
        seen.add(name);
        const sub = shape.props.get(name) as Shape;
        const filled = platformReading(value[key], sub, !shape.required?.has(name));
        if (filled === ABSENT) {
          delete value[key];
          segments.pop();
          continue;
        }
        const v = walk(filled, sub);
        if (name !== key) delete value[key];
        value[name] = v;
      }
      segments.pop();
    }
    return value;
  };
  return { body: walk(body, shapeOf(schema)), ignored };
}

const ABSENT = Symbol('absent');

/**
 * The zero GUID in an optional Guid property is absent (in a required one that takes null, as the wrapped
 * value of a PATCH, it is null); "" in an optional or nullable Guid, number, boolean or date is null when
 * the schema takes null, else absent. Anything else is left to the schema.
 */
function platformReading(value: unknown, shape: Shape, optional: boolean): unknown {
  if (typeof value !== 'string' || !shape.scalar) return value;
  if (value === ZERO_GUID && shape.scalar === 'guid') return optional ? ABSENT : shape.nullable ? null : value;
  if (value === '') return shape.nullable ? null : optional ? ABSENT : value;
  return value;
}

/** `$.queryBuilder.fields1`, `$.Columns[0]['odd name']`: printable ASCII, no commas (the header lists them comma-separated). */
export function jsonPath(segments: readonly Segment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += `.${s}`;
    else out += `['${s.replace(/[^\x20-\x7e]|[\\',]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}']`;
  }
  return out;
}

const pointer = (segments: readonly Segment[]): string => `/body/${segments.map((s) => pointerToken(String(s))).join('/')}`;

/** A reported path is cut after this many characters, and the header after this many: an absurd property name
 * (the fuzz test sent one of 10,000 characters) must not make a header clients refuse (undici's limit is 16 KB). */
const MAX_PATH = 200;
const MAX_HEADER = 4_000;

/** The X-Ignored-Properties value: the first MAX_REPORTED paths, each cut at MAX_PATH, as many as fit in MAX_HEADER. */
export const ignoredHeader = (paths: readonly string[]): string => {
  let out = '';
  for (const path of paths.slice(0, MAX_REPORTED)) {
    const shown = path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path;
    if (out.length + shown.length + 1 > MAX_HEADER) break;
    out = out ? `${out},${shown}` : shown;
  }
  return out;
};
