// XmlMap: XML in, JSON out. `xmldata` (also `xmlData`) is parsed by fast-xml-parser with no entity
// processing at all: a DOCTYPE that declares entities or points outside the document is refused before
// parsing (no billion laughs, no external entities), only XML's five predefined entities and character
// references are decoded, and nesting deeper than MAX_DEPTH is refused. Each property of `values` gets the
// text at its XPath (a subset: steps, `//`, `*`, `@attr`, `text()`, `[n]`, `[@a='v']`), prefixes resolved
// through `namespaces`.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { withContent } from './data.ts';

/** Deepest element nesting XmlMap reads. */
export const MAX_DEPTH = 64;
const MAX_VALUES = 1000;
const MAX_PATH_CHARS = 1000;

interface Element {
  name: string;
  prefix: string;
  local: string;
  uri: string;
  attrs: Record<string, string>;
  children: (Element | string)[];
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML's predefined entities and character references; any other `&name;` stays as written (never expanded). */
function decode(text: string): string {
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos));/g, (all, dec, hex, named) => {
    if (named) return PREDEFINED[named];
    const cp = dec ? Number(dec) : Number.parseInt(hex, 16);
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : all;
  });
}

/** Refuses what could expand or reach outside: entity declarations, external DTDs. */
function checkDoctype(xml: string): void {
  const at = xml.search(/<!DOCTYPE/i);
  if (at < 0) return;
  const rest = xml.slice(at, at + 100_000);
  if (/<!ENTITY/i.test(rest))
    throw new ActionError('xmldata declares entities (<!ENTITY> in its DOCTYPE): refused, as XmlMap expands no entities (an XML bomb or an external entity)');
  const head = /<!DOCTYPE[^[>]*/i.exec(rest)?.[0] ?? '';
  if (/\b(SYSTEM|PUBLIC)\b/i.test(head))
    throw new ActionError('xmldata names an external DTD (SYSTEM or PUBLIC in its DOCTYPE): refused, as XmlMap reads nothing outside the document');
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: MAX_DEPTH,
});

type Ordered = Record<string, unknown>;

/** The ordered parse as elements, with each element's namespace URI resolved from the xmlns in scope. */
function toElements(nodes: Ordered[], scope: Map<string, string>, depth: number): (Element | string)[] {
  if (depth > MAX_DEPTH) throw new ActionError(`xmldata nests elements more than ${MAX_DEPTH} deep: refused`);
  const out: (Element | string)[] = [];
  for (const node of nodes) {
    if (Object.hasOwn(node, '#text')) {
      out.push(decode(asText(node['#text'])));
      continue;
    }
    const name = Object.keys(node).find((k) => k !== ':@');
    if (!name || name.startsWith('?') || name.startsWith('!')) continue;
    const rawAttrs = (node[':@'] ?? {}) as Record<string, unknown>;
    const attrs: Record<string, string> = Object.create(null);
    let inner = scope;
    for (const [k, v] of Object.entries(rawAttrs)) {
      const value = decode(asText(v));
      if (k === 'xmlns' || k.startsWith('xmlns:')) {
        if (inner === scope) inner = new Map(scope);
        inner.set(k === 'xmlns' ? '' : k.slice(6), value);
      } else attrs[k] = value;
    }
    const colon = name.indexOf(':');
    const prefix = colon > 0 ? name.slice(0, colon) : '';
    const local = colon > 0 ? name.slice(colon + 1) : name;
    const children = Array.isArray(node[name]) ? toElements(node[name] as Ordered[], inner, depth + 1) : [];
    out.push({ name, prefix, local, uri: inner.get(prefix) ?? '', attrs, children });
  }
  return out;
}

/**
 * Refuses nesting past MAX_DEPTH in one linear pass, before the validator and the parser walk the text
 * (comments, CDATA, declarations and quoted attribute values skipped).
 */
function checkDepth(xml: string): void {
  let depth = 0;
  let i = xml.indexOf('<');
  while (i >= 0 && i < xml.length) {
    if (xml.startsWith('<!--', i)) i = xml.indexOf('-->', i + 4);
    else if (xml.startsWith('<![CDATA[', i)) i = xml.indexOf(']]>', i + 9);
    else if (xml[i + 1] === '?' || xml[i + 1] === '!') i = xml.indexOf('>', i + 2);
    else if (xml[i + 1] === '/') {
      depth--;
      i = xml.indexOf('>', i + 2);
    } else {
      let j = i + 1;
      let quote = '';
      for (; j < xml.length; j++) {
        const c = xml[j];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '>') break;
      }
      if (xml[j - 1] !== '/' && ++depth > MAX_DEPTH) throw new ActionError(`xmldata nests elements more than ${MAX_DEPTH} deep: refused`);
      i = j;
    }
    if (i < 0) return;
    i = xml.indexOf('<', i + 1);
  }
}

export function parseXml(xml: string): Element {
  checkDoctype(xml);
  checkDepth(xml);
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new ActionError(`xmldata is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let ordered: Ordered[];
  try {
    ordered = parser.parse(xml) as Ordered[];
  } catch (err) {
    const message = (err as Error).message;
    if (/nested tags/i.test(message)) throw new ActionError(`xmldata nests elements more than ${MAX_DEPTH} deep: refused`);
    throw new ActionError(`xmldata cannot be parsed: ${message.slice(0, 200)}`);
  }
  const root = toElements(ordered, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]), 0).find((n): n is Element => typeof n !== 'string');
  if (!root) throw new ActionError('xmldata holds no element');
  return root;
}

const textOf = (n: Element | string): string => (typeof n === 'string' ? n : n.children.map(textOf).join(''));

type Hit = Element | { attr: string } | { text: string };

interface Step {
  axis: 'child' | 'descendant';
  test: string;
  index: number | 'last' | null;
  attrEquals: [string, string] | null;
}

function parsePath(path: string): { absolute: boolean; steps: Step[] } {
  if (path.length > MAX_PATH_CHARS) throw new ActionError(`an XPath is longer than ${MAX_PATH_CHARS} characters`);
  const re = /(\/\/|\/)?([^/[\]]+)((?:\[[^\]]*\])*)/y;
  const steps: Step[] = [];
  let i = 0;
  const absolute = path.startsWith('/');
  while (i < path.length) {
    re.lastIndex = i;
    const m = re.exec(path);
    if (!m || m[0] === '') throw new ActionError(`"${path}" is not an XPath XmlMap reads (steps, //, *, @attr, text(), [n], [@attr='value'])`);
    i = re.lastIndex;
    const step: Step = { axis: m[1] === '//' ? 'descendant' : 'child', test: m[2].trim(), index: null, attrEquals: null };
    for (const p of m[3].match(/\[[^\]]*\]/g) ?? []) {
      const inner = p.slice(1, -1).trim();
      if (/^\d+$/.test(inner)) step.index = Number(inner);
      else if (inner === 'last()') step.index = 'last';
      else {
        const eq = /^@([\w:.-]+)\s*=\s*(?:'([^']*)'|"([^"]*)")$/.exec(inner);
        if (!eq) throw new ActionError(`"${path}": the predicate [${inner}] is not one XmlMap reads ([n], [last()], [@attr='value'])`);
        step.attrEquals = [eq[1], eq[2] ?? eq[3]];
      }
    }
    steps.push(step);
    if (steps.length > MAX_DEPTH) throw new ActionError(`"${path.slice(0, 100)}…" has more than ${MAX_DEPTH} steps`);
  }
  return { absolute, steps };
}

/** Whether an element matches a name test: `p:local` by namespace URI (from `namespaces`, else the document's own prefix), `local` by local name. */
function matches(e: Element, test: string, namespaces: Record<string, string>): boolean {
  if (test === '*' || test === 'node()') return true;
  const colon = test.indexOf(':');
  if (colon < 0) return e.local === test;
  const prefix = test.slice(0, colon);
  const local = test.slice(colon + 1);
  if (local !== '*' && e.local !== local) return false;
  const uri = Object.hasOwn(namespaces, prefix) ? namespaces[prefix] : null;
  return uri !== null ? e.uri === uri : e.prefix === prefix;
}

function descendants(e: Element, out: Element[], budget: { left: number }): void {
  for (const c of e.children)
    if (typeof c !== 'string') {
      if (--budget.left < 0) throw new ActionError('an XPath visits too many nodes');
      out.push(c);
      descendants(c, out, budget);
    }
}

function evaluate(context: Element[], steps: Step[], namespaces: Record<string, string>): Hit[] {
  let current: Hit[] = context;
  const budget = { left: 1_000_000 };
  for (const step of steps) {
    const next: Hit[] = [];
    for (const node of current) {
      if (!('children' in node)) continue;
      const pool: Element[] = [];
      if (step.axis === 'descendant') descendants(node, pool, budget);
      else for (const c of node.children) if (typeof c !== 'string') pool.push(c);
      if (step.test === 'text()') {
        for (const c of node.children) if (typeof c === 'string') next.push({ text: c });
        continue;
      }
      if (step.test.startsWith('@')) {
        const name = step.test.slice(1);
        if (Object.hasOwn(node.attrs, name)) next.push({ attr: node.attrs[name] });
        continue;
      }
      if (step.test === '.') {
        next.push(node);
        continue;
      }
      let found = pool.filter((e) => matches(e, step.test, namespaces));
      if (step.attrEquals) {
        const [a, v] = step.attrEquals;
        found = found.filter((e) => e.attrs[a] === v);
      }
      if (step.index === 'last') found = found.slice(-1);
      else if (step.index !== null) found = found[step.index - 1] ? [found[step.index - 1]] : [];
      next.push(...found);
    }
    current = next;
  }
  return current;
}

/** The text at an XPath: the first node found (an element's text content, an attribute's value), or null. */
export function xpathText(root: Element, path: string, namespaces: Record<string, string>): string | null {
  const { absolute, steps } = parsePath(path.trim());
  const doc: Element = { name: '#document', prefix: '', local: '#document', uri: '', attrs: {}, children: [root] };
  let hits = evaluate([absolute ? doc : root], steps, namespaces);
  // The platform's examples read `/cbc:ID` in a UBL Invoice whose root is Invoice: an absolute path that
  // finds nothing from the document is read again from the root element.
  if (hits.length === 0 && absolute) hits = evaluate([root], steps, namespaces);
  const first = hits[0];
  if (!first) return null;
  if ('attr' in first) return first.attr;
  if ('text' in first) return first.text;
  return textOf(first).trim();
}

/** XmlMap: each property of `values` is the text at its XPath in `xmldata`; the object read at its root or under `Content`. */
const xmlMap: Handler = async (call) => {
  const xml = call.text('xmldata');
  if (xml.trim() === '') throw new ActionError('xmldata is empty');
  const values = call.get('values');
  if (values === null || typeof values !== 'object' || Array.isArray(values)) throw new ActionError('values must be an object of name → XPath');
  const entries = Object.entries(values as Record<string, unknown>);
  if (entries.length > MAX_VALUES) throw new ActionError(`values has ${entries.length} properties; the limit is ${MAX_VALUES}`);
  const given = call.get('namespaces');
  const namespaces: Record<string, string> = Object.create(null);
  if (given && typeof given === 'object' && !Array.isArray(given)) for (const [p, u] of Object.entries(given)) namespaces[p] = asText(u);
  const root = parseXml(xml);
  // Read at the root and under Content, like Map (data.ts withContent).
  return { output: withContent(Object.fromEntries(entries.map(([name, path]) => [name, xpathText(root, asText(path), namespaces)]))) };
};

export const XML_HANDLERS: Record<string, Handler> = { XmlMap: xmlMap };
