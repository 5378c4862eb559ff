// Whether a subscription fires for an event: Active, ActionType, DocumentType, the optional
// BusinessObjectTypeName and the detail filters (every And filter, and one Or filter when any exist).
// Pure functions: the dispatcher loads subscriptions and system preferences, this decides.

export const GROUP_CONDITIONS = ['And', 'Or'] as const;
export const FILTER_CONDITIONS = ['Equal', 'NotEqual', 'Contains', 'NotContains'] as const;
export type GroupCondition = (typeof GROUP_CONDITIONS)[number];
export type FilterCondition = (typeof FILTER_CONDITIONS)[number];

export interface DetailFilter {
  groupCondition: GroupCondition;
  jsonPathExpression: string;
  condition: FilterCondition;
  value: string;
}

export interface MatchableSubscription {
  active: boolean;
  actionType: string;
  documentType: string;
  businessObjectTypeName: string | null;
  detailFilters: DetailFilter[];
}

export interface MatchableEvent {
  actionType: string;
  documentType: string;
  businessObjectTypeName: string | null;
  detail: unknown;
}

/** Value of system preference `name`/`key` of the event's tenant, undefined when there is none. */
export type PreferenceLookup = (name: string, key: string) => string | undefined;

const PREFERENCE_RE = /\{\{\s*([^/{}]+?)\s*\/\s*([^{}]+?)\s*\}\}/g;

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * `Name`, `a.b.c`, `$.a.b`, `$['a'].b`, `items[0].Name` -> its segments; null when malformed.
 * Segments are property names (or array indexes) of the event detail.
 */
export function parsePath(expression: string): string[] | null {
  let rest = expression.trim();
  if (rest === '$') return null;
  if (rest.startsWith('$.')) rest = rest.slice(2);
  else if (rest.startsWith('$[')) rest = rest.slice(1);
  const segments: string[] = [];
  const re = /^(?:\[\s*'([^']*)'\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*(\d+)\s*\]|([^.[\]]+))(\.(?=[^.])|(?=\[)|$)/;
  while (rest.length > 0) {
    const m = re.exec(rest);
    if (!m) return null;
    segments.push(m[1] ?? m[2] ?? m[3] ?? m[4]);
    rest = rest.slice(m[0].length);
  }
  return segments.length > 0 && segments.every((s) => s.length > 0) ? segments : null;
}

/** The value at `segments` in the detail; property names match exactly first, then case-insensitively. */
export function detailValue(detail: unknown, segments: string[]): unknown {
  let current: unknown = detail;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    const record = current as Record<string, unknown>;
    if (Object.hasOwn(record, segment)) {
      current = record[segment];
      continue;
    }
    const key = Object.keys(record).find((k) => same(k, segment));
    if (key === undefined) return undefined;
    current = record[key];
  }
  return current;
}

/** The text a condition compares: strings as they are, other scalars as JSON, objects as JSON. */
export function valueText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Every `{{Name/Key}}` a set of filters refers to (so the dispatcher loads only those). */
export function preferenceReferences(filters: DetailFilter[]): { name: string; key: string }[] {
  const refs: { name: string; key: string }[] = [];
  for (const f of filters) for (const m of f.value.matchAll(PREFERENCE_RE)) refs.push({ name: m[1], key: m[2] });
  return refs;
}

/** The filter value with each `{{Name/Key}}` replaced by the preference; null when one does not exist. */
export function resolveValue(value: string, preferences: PreferenceLookup): string | null {
  let missing = false;
  const resolved = value.replace(PREFERENCE_RE, (_all, name: string, key: string) => {
    const found = preferences(name, key);
    if (found === undefined) missing = true;
    return found ?? '';
  });
  return missing ? null : resolved;
}

/**
 * One filter against the detail. A missing property has no text: Equal and Contains fail, NotEqual
 * and NotContains pass. A value naming a system preference that does not exist never matches.
 */
export function filterPasses(filter: DetailFilter, detail: unknown, preferences: PreferenceLookup): boolean {
  const expected = resolveValue(filter.value, preferences);
  if (expected === null) return false;
  const segments = parsePath(filter.jsonPathExpression);
  const actual = segments ? valueText(detailValue(detail, segments)) : undefined;
  const a = actual?.toLowerCase();
  const e = expected.toLowerCase();
  switch (filter.condition) {
    case 'Equal':
      return a !== undefined && a === e;
    case 'NotEqual':
      return a === undefined || a !== e;
    case 'Contains':
      return a?.includes(e) === true;
    case 'NotContains':
      return a === undefined || !a.includes(e);
    default:
      return false;
  }
}

export function filtersPass(filters: DetailFilter[], detail: unknown, preferences: PreferenceLookup): boolean {
  const ands = filters.filter((f) => f.groupCondition !== 'Or');
  const ors = filters.filter((f) => f.groupCondition === 'Or');
  if (!ands.every((f) => filterPasses(f, detail, preferences))) return false;
  return ors.length === 0 || ors.some((f) => filterPasses(f, detail, preferences));
}

export function matches(subscription: MatchableSubscription, event: MatchableEvent, preferences: PreferenceLookup): boolean {
  if (!subscription.active) return false;
  if (!same(subscription.actionType, event.actionType)) return false;
  if (subscription.documentType !== event.documentType) return false;
  if (subscription.businessObjectTypeName && !same(subscription.businessObjectTypeName, event.businessObjectTypeName ?? '')) return false;
  return filtersPass(subscription.detailFilters, event.detail, preferences);
}
