// Examples for the OpenAPI document: every JSON request body and every JSON 2xx answer gets one. First the
// body a test really sent or received (openapi-examples.recorded.json, written by `npm run openapi:examples`
// from a recorded test run); where no test recorded one, an example written from the schema (a value of every
// required property, the first of an enum or union, a plausible value for each string format; a schema's own
// `examples`/`default` first). openapi-examples.test.ts validates each one against its schema.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const RECORDED_EXAMPLES_FILE = path.join(import.meta.dirname, 'openapi-examples.recorded.json');
/** `METHOD /path/{template} where` (where: `request` or the answer's status) → the recorded body. */
export const recordedExamples = (): Record<string, unknown> =>
  existsSync(RECORDED_EXAMPLES_FILE) ? JSON.parse(readFileSync(RECORDED_EXAMPLES_FILE, 'utf8')) : {};
type Schema = Record<string, any>;

const FORMATS: Record<string, string> = {
  'date-time': '2026-03-02T09:30:00.000Z',
  date: '2026-03-02',
  time: '09:30:00',
  uuid: '3f1c2a64-8b1e-4c5d-9a7f-2e6b1d0c4a91',
  email: 'jane.doe@example.com',
  uri: 'https://example.com/hooks/atrium',
  url: 'https://example.com/hooks/atrium',
  'uri-reference': '/api/v3/users',
  hostname: 'agency.example.com',
  ipv4: '192.0.2.10',
};

const MAX_DEPTH = 8;

/** An example value for a schema (components resolve `$ref`s); undefined when none can be made. */
export function exampleOf(schema: Schema | undefined, components: Record<string, Schema>, depth = 0, key = ''): unknown {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return undefined;
  if (typeof schema.$ref === 'string') return exampleOf(components[schema.$ref.split('/').pop() as string], components, depth + 1, key);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0];
  for (const union of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[union])) {
      const branches = schema[union] as Schema[];
      const preferred = [...branches.filter((b) => b.type !== 'null'), ...branches.filter((b) => b.type === 'null')];
      for (const b of preferred) {
        const v = exampleOf(b, components, depth + 1, key);
        if (v !== undefined) return v;
      }
      return undefined;
    }
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s: Schema) => exampleOf(s, components, depth + 1, key));
    return parts.every((p: unknown) => p !== null && typeof p === 'object' && !Array.isArray(p)) ? Object.assign({}, ...parts) : parts[0];
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : schema.type;
  switch (type) {
    case 'object':
    case undefined: {
      if (type === undefined && !schema.properties) return type === undefined && schema.additionalProperties === undefined ? {} : undefined;
      const out: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        // Optional properties too, a level or two deep: an example shows what can be sent, not the least that may.
        if (!required.has(name) && depth > 2) continue;
        const v = exampleOf(prop, components, depth + 1, name);
        if (v !== undefined) out[name] = v;
        else if (required.has(name)) return undefined;
      }
      return out;
    }
    case 'array': {
      const item = exampleOf(schema.items, components, depth + 1, key);
      const min = schema.minItems ?? 0;
      if (item === undefined) return min === 0 ? [] : undefined;
      return Array.from({ length: Math.max(1, Math.min(min, 3)) }, () => item);
    }
    case 'string':
      return stringExample(schema, key);
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      let v = /amount|price|cost|rate|value/i.test(key) ? 125 : /hours|quantity|count|take|top|size|skip|page/i.test(key) ? 10 : 1;
      if (low !== undefined && v < low) v = low;
      if (high !== undefined && v > high) v = high;
      return type === 'integer' ? Math.ceil(v) : v;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

function stringExample(schema: Schema, key: string): string | undefined {
  if (schema.format && FORMATS[schema.format]) return FORMATS[schema.format];
  let v = /mail/i.test(key)
    ? 'jane.doe@example.com'
    : /url|uri/i.test(key)
      ? 'https://example.com/hooks/atrium'
      : /(^|[a-z])Id$|^id$/.test(key)
        ? FORMATS.uuid
        : /name/i.test(key)
          ? 'Spring campaign'
          : /code/i.test(key)
            ? 'ACME'
            : 'example';
  if (schema.pattern) {
    const re = new RegExp(schema.pattern, 'u');
    if (!re.test(v)) {
      const tries = ['example', 'ACME', FORMATS.uuid, 'acme-agency', '2026-03-02', 'a', 'A', '1', 'Example value'];
      const found = tries.find((t) => re.test(t));
      if (found === undefined) return undefined;
      v = found;
    }
  }
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  if (v.length < min) v = v.padEnd(min, 'x');
  if (v.length > max) v = v.slice(0, max);
  return v;
}

/** The JSON media types of a content map (application/json and its parameterised or +json kin). */
const isJson = (mediaType: string) => /^application\/([\w.+-]*\+)?json\b/.test(mediaType);

interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema; example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema; example?: unknown }> }>;
}

/** Adds an example to every JSON request body and JSON 2xx answer of the document that has none. */
export function withExamples<T extends { paths?: object; components?: { schemas?: Record<string, unknown> } }>(document: T): T {
  const components = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const recorded = recordedExamples();
  for (const [route, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object') continue;
      const key = (where: string) => `${method.toUpperCase()} ${route} ${where}`;
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => [key('request'), type, m] as const),
        ...Object.entries(op.responses ?? {})
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([status, r]) => Object.entries(r.content ?? {}).map(([type, m]) => [key(status), type, m] as const)),
      ];
      for (const [where, type, m] of media) {
        if (!isJson(type) || m.example !== undefined || !m.schema) continue;
        const example = Object.hasOwn(recorded, where) ? recorded[where] : exampleOf(m.schema, components);
        if (example !== undefined) m.example = example;
      }
    }
  }
  return document;
}
