// How big a value is as JSON, measured without building the JSON: a walk that stops as soon as the count
// passes its limit, so a Map of 200 references to one 4 MB string costs a few steps, not 800 MB of text.
// Strings count their UTF-8 bytes (escapes aside); each list item and property counts at least 8 bytes
// (the reference that holds it, so a list of 4 million one-letter strings is not "12 MB"); a value shared
// by reference counts each time, as JSON would write it.

/** The value's JSON size in bytes, or some number above `limit` once it is known to be larger. */
export function jsonBytes(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v) + 2;
    else if (typeof v === 'number') total += Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v === 'boolean') total += v ? 4 : 5;
    else if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') total += 4;
    else if (typeof v === 'bigint') total += String(v).length;
    else if (v instanceof Date) total += 26;
    else if (Buffer.isBuffer(v) || v instanceof Uint8Array) total += v.byteLength * 2 + 40;
    else if (Array.isArray(v)) {
      total += 2 + 8 * v.length;
      if (total > limit) return total;
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (typeof (v as { toJSON?: unknown }).toJSON === 'function') stack.push((v as { toJSON: () => unknown }).toJSON());
    else {
      total += 2;
      for (const k in v as object)
        if (Object.hasOwn(v as object, k)) {
          total += Buffer.byteLength(k) + 8;
          stack.push((v as Record<string, unknown>)[k]);
        }
    }
    if (total > limit) return total;
  }
  return total;
}

/** The value as JSON text, or null when it would pass `limit` bytes (checked before the text is built). */
export function boundedJson(value: unknown, limit: number): string | null {
  if (jsonBytes(value, limit) > limit) return null;
  return JSON.stringify(value) ?? 'null';
}

/**
 * The start of the value's JSON, at most `max` characters, written without building the rest (for run logs):
 * `complete` says whether that is all of it.
 */
export function jsonPrefix(value: unknown, max: number): { text: string; complete: boolean } {
  let out = '';
  const full = () => out.length >= max;
  const write = (s: string) => {
    out += s.length + out.length > max ? s.slice(0, max - out.length) : s;
  };
  const walk = (v: unknown, depth: number): void => {
    if (full()) return;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON: () => unknown }).toJSON();
    if (typeof v === 'string') write(JSON.stringify(v.length > max ? v.slice(0, max) : v));
    else if (v === null || typeof v !== 'object') write(JSON.stringify(v) ?? 'null');
    else if (depth > 64) write('"…"');
    else if (Array.isArray(v)) {
      write('[');
      for (let i = 0; i < v.length && !full(); i++) {
        if (i > 0) write(',');
        walk(v[i], depth + 1);
      }
      write(']');
    } else {
      write('{');
      let first = true;
      for (const k in v)
        if (Object.hasOwn(v, k)) {
          if (full()) break;
          const x = (v as Record<string, unknown>)[k];
          if (x === undefined) continue;
          write(`${first ? '' : ','}${JSON.stringify(k)}:`);
          first = false;
          walk(x, depth + 1);
        }
      write('}');
    }
  };
  walk(value, 0);
  return { text: out, complete: !full() };
}

/** How deep the values a run holds may nest (objects and lists inside one another). */
export const MAX_VALUE_DEPTH = 100;

/** Whether the value nests deeper than `max` levels, found without recursion (so a hostile depth cannot overflow the stack). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 1 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (v === null || typeof v !== 'object') continue;
    if (d > max) return true;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push({ v: x, d: d + 1 });
    } else
      for (const k in v as object)
        if (Object.hasOwn(v as object, k)) {
          const x = (v as Record<string, unknown>)[k];
          if (x !== null && typeof x === 'object') stack.push({ v: x, d: d + 1 });
        }
  }
  return false;
}
