// SCIM PATCH (RFC 7644 §3.5.2) on a User's canonical form: add, replace and remove, with a path (an
// attribute, a sub-attribute, or a value filter such as emails[type eq "work"].value) or without one (a
// replace/add whose value object names the attributes, as Entra ID sends). The operations only move JSON;
// the result is read again by mapping.ts, so a wrong type fails the same way it fails in a POST or PUT.
import { scimError } from './errors.ts';
import { type AttrPath, type Filter, parseAttrPath, parsePatchPath } from './filter.ts';
import { type Doc, userAttribute } from './mapping.ts';
import { attrOf, ENTERPRISE_USER, LIMITS, PATCH_OP } from './schemas.ts';

export type PatchOpName = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchOpName;
  path: string | null;
  value: unknown;
}

const isObject = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The PatchOp body's operations, checked for shape and count. */
export function readPatchBody(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw scimError(400, 'invalidSyntax', 'The body must be a PatchOp object.');
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === PATCH_OP.toLowerCase())) {
    throw scimError(400, 'invalidSyntax', `schemas must contain ${PATCH_OP}.`);
  }
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops) || ops.length === 0) throw scimError(400, 'invalidSyntax', 'Operations must be a non-empty array.');
  if (ops.length > LIMITS.maxPatchOperations) throw scimError(400, 'invalidValue', `At most ${LIMITS.maxPatchOperations} operations per PATCH.`);
  return ops.map((o, i) => {
    if (!isObject(o)) throw scimError(400, 'invalidSyntax', `Operations[${i}] must be an object.`);
    const op = typeof o.op === 'string' ? o.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw scimError(400, 'invalidSyntax', `Operations[${i}].op must be add, replace or remove.`);
    if (o.path !== undefined && o.path !== null && typeof o.path !== 'string') throw scimError(400, 'invalidPath', `Operations[${i}].path must be a string.`);
    const path = typeof o.path === 'string' && o.path.trim() !== '' ? o.path : null;
    if (op !== 'remove' && o.value === undefined) throw scimError(400, 'invalidValue', `Operations[${i}] (${op}) needs a value.`);
    return { op, path, value: o.value };
  });
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v.toLowerCase() : null);

/** Does a value of a multi-valued attribute match a value filter (its paths are sub-attributes)? */
export function matches(el: unknown, f: Filter): boolean {
  if (!isObject(el)) return false;
  switch (f.kind) {
    case 'and':
      return matches(el, f.left) && matches(el, f.right);
    case 'or':
      return matches(el, f.left) || matches(el, f.right);
    case 'not':
      return !matches(el, f.filter);
    case 'valuePath':
      return false;
    case 'present': {
      const v = field(el, f.path);
      return v !== undefined && v !== null && v !== '';
    }
    case 'compare': {
      const v = field(el, f.path);
      if (typeof f.value === 'boolean' || f.value === null) {
        const b = typeof v === 'string' ? v.toLowerCase() === 'true' : v;
        return f.op === 'eq' ? (b ?? null) === f.value : f.op === 'ne' ? (b ?? null) !== f.value : false;
      }
      const a = text(v);
      const b = String(f.value).toLowerCase();
      switch (f.op) {
        case 'eq':
          return a === b;
        case 'ne':
          return a !== b;
        case 'co':
          return Boolean(a?.includes(b));
        case 'sw':
          return Boolean(a?.startsWith(b));
        case 'ew':
          return Boolean(a?.endsWith(b));
        case 'gt':
          return a !== null && a > b;
        case 'ge':
          return a !== null && a >= b;
        case 'lt':
          return a !== null && a < b;
        default:
          return a !== null && a <= b;
      }
    }
  }
}

function field(el: Doc, path: AttrPath): unknown {
  const name = path.sub ? path.sub : path.attr;
  const key = Object.keys(el).find((k) => k.toLowerCase() === name);
  return key ? el[key] : undefined;
}

/** `type eq "work"` (and conjunctions of such): the value a new element gets when nothing matched. */
function equalities(f: Filter): Doc | null {
  if (f.kind === 'compare' && f.op === 'eq' && !f.path.sub) return { [f.path.attr]: f.value };
  if (f.kind === 'and') {
    const l = equalities(f.left);
    const r = equalities(f.right);
    return l && r ? { ...l, ...r } : null;
  }
  return null;
}

const sameValue = (a: unknown, b: unknown): boolean =>
  isObject(a) && isObject(b) && a.value !== undefined && text(a.value) === text(b.value) && text(a.type) === text(b.type);

/**
 * Applies the operations to a copy of `doc`; returns it with the attribute paths touched. A path that names no
 * attribute is invalidPath, a read-only attribute mutability, a remove without a path noTarget.
 */
export function applyUserPatch(doc: Doc, ops: PatchOperation[]): { doc: Doc; touched: Set<string> } {
  const out = JSON.parse(JSON.stringify(doc)) as Doc;
  const touched = new Set<string>();
  for (const op of ops) {
    if (op.path) {
      applyPath(out, op.op, op.path, op.value, touched);
      continue;
    }
    if (op.op === 'remove') throw scimError(400, 'noTarget', 'A remove operation needs a path.');
    if (!isObject(op.value)) throw scimError(400, 'invalidValue', `An ${op.op} without a path needs an object value.`);
    for (const [key, value] of Object.entries(op.value)) {
      const lower = key.toLowerCase();
      if (lower === 'schemas' || lower === 'id' || lower === 'meta') continue;
      if (lower === ENTERPRISE_USER.toLowerCase() && isObject(value)) {
        for (const [k, v] of Object.entries(value)) applyPath(out, op.op, `${ENTERPRISE_USER}:${k}`, v, touched);
        continue;
      }
      applyPath(out, op.op, key, value, touched);
    }
  }
  // Name follows what changed: new name parts without a new formatted name make Name again, and so does a
  // new displayName alone.
  const name = isObject(out.name) ? out.name : null;
  const partsChanged = touched.has('name.givenName') || touched.has('name.familyName');
  if (name && partsChanged && !touched.has('name.formatted') && !touched.has('name')) delete name.formatted;
  if (touched.has('displayName') && ![...touched].some((t) => t === 'name' || t.startsWith('name.'))) {
    out.name = { ...(name ?? {}), formatted: out.displayName };
  }
  return { doc: out, touched };
}

function applyPath(doc: Doc, op: PatchOpName, pathText: string, value: unknown, touched: Set<string>): void {
  const pp = parsePatchPath(pathText);
  if (pp.path.attr === '') {
    // The path is the extension itself: its value names its attributes.
    if (pp.path.schema !== ENTERPRISE_USER) throw scimError(400, 'invalidPath', `"${pathText}" is not an attribute path of a User.`);
    if (op === 'remove') {
      delete doc[ENTERPRISE_USER];
      touched.add(ENTERPRISE_USER);
      return;
    }
    if (!isObject(value)) throw scimError(400, 'invalidValue', `The value for "${pathText}" must be an object.`);
    for (const [k, v] of Object.entries(value)) applyPath(doc, op, `${ENTERPRISE_USER}:${k}`, v, touched);
    return;
  }
  const found = userAttribute(pp.path.schema, pp.path.attr);
  if (!found) throw scimError(400, 'invalidPath', `"${pathText}" names no attribute of a User.`);
  const { def } = found;
  if (def.mutability === 'readOnly') throw scimError(400, 'mutability', `${def.name} is read-only.`);
  const sub = pp.path.sub ?? pp.subAfterFilter;
  const subDef = sub ? attrOf(def.subAttributes ?? [], sub) : undefined;
  if (sub && !subDef) throw scimError(400, 'invalidPath', `"${pathText}": ${def.name} has no sub-attribute ${sub}.`);
  if (subDef?.mutability === 'readOnly') throw scimError(400, 'mutability', `${def.name}.${subDef.name} is read-only.`);
  touched.add(subDef ? `${def.name}.${subDef.name}` : def.name);
  if (def.mutability === 'writeOnly' && def.returned === 'never' && def.name !== 'password') return; // accepted, not kept
  if (found.enterprise && !isObject(doc[ENTERPRISE_USER])) doc[ENTERPRISE_USER] = {};
  const container = (found.enterprise ? doc[ENTERPRISE_USER] : doc) as Doc;
  const name = def.name;

  if (pp.filter) {
    if (!def.multiValued) throw scimError(400, 'invalidPath', `${name} is not multi-valued; a value filter does not apply.`);
    const list = Array.isArray(container[name]) ? (container[name] as unknown[]) : [];
    const filter = pp.filter;
    const hit = list.filter((el) => matches(el, filter));
    if (op === 'remove') {
      if (subDef) for (const el of hit) delete (el as Doc)[subDef.name];
      else container[name] = list.filter((el) => !hit.includes(el));
      return;
    }
    if (hit.length === 0) {
      const created = equalities(filter);
      if (!created) throw scimError(400, 'noTarget', `No value of ${name} matches "${pathText}".`);
      list.push(subDef ? { ...created, [subDef.name]: value } : { ...created, ...(isObject(value) ? value : { value }) });
      container[name] = list;
      return;
    }
    for (const el of hit) {
      if (subDef) (el as Doc)[subDef.name] = value;
      else Object.assign(el as Doc, isObject(value) ? value : { value });
    }
    return;
  }

  if (subDef) {
    if (def.multiValued) {
      const list = Array.isArray(container[name]) ? (container[name] as Doc[]) : [];
      for (const el of list) {
        if (!isObject(el)) continue;
        if (op === 'remove') delete el[subDef.name];
        else el[subDef.name] = value;
      }
      return;
    }
    const parent = isObject(container[name]) ? (container[name] as Doc) : {};
    if (op === 'remove') delete parent[subDef.name];
    else parent[subDef.name] = value;
    container[name] = parent;
    return;
  }

  if (op === 'remove') {
    if (def.multiValued && value !== undefined && value !== null && Array.isArray(container[name])) {
      const gone = Array.isArray(value) ? value : [value];
      container[name] = (container[name] as unknown[]).filter((el) => !gone.some((g) => sameValue(el, g)));
    } else delete container[name];
    return;
  }
  if (def.multiValued) {
    const incoming = Array.isArray(value) ? value : [value];
    if (op === 'replace') container[name] = incoming;
    else {
      const list = Array.isArray(container[name]) ? (container[name] as unknown[]) : [];
      // A new primary value takes primary from the others (RFC 7643 §2.4).
      if (incoming.some((v) => isObject(v) && (v.primary === true || v.primary === 'true'))) for (const el of list) if (isObject(el)) delete el.primary;
      container[name] = [...list.filter((el) => !incoming.some((v) => sameValue(el, v))), ...incoming];
    }
    return;
  }
  if (def.type === 'complex' && isObject(value) && isObject(container[name])) container[name] = { ...(container[name] as Doc), ...value };
  else container[name] = value;
}

/** For callers that only need to know whether a path is well formed (Groups). */
export const attrPathOf = (text: string): AttrPath | null => parseAttrPath(text);
