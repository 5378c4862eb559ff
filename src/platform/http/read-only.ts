// Read-only properties of a write: what the resource's GET answers and the write cannot change (its id,
// its stage, the server's stamps), each with the reason. A client that sends back what it read is told
// which properties were left out and why (X-Read-Only-Properties), not that they are unknown.
import { isPlainObject } from './tolerant-body.ts';

/** Takes the body's top-level properties named in `readOnly` (any case) out of it; answers `$.Name (reason)` for each. */
export function takeReadOnly(body: unknown, readOnly: Readonly<Record<string, string>>): string[] {
  if (!isPlainObject(body)) return [];
  const byLower = new Map(Object.keys(readOnly).map((k) => [k.toLowerCase(), k]));
  const out: string[] = [];
  for (const key of Object.keys(body)) {
    const name = byLower.get(key.toLowerCase());
    if (name === undefined) continue;
    delete body[key];
    out.push(`$.${name} (${readOnly[name].replace(/[^\x20-\x7e]|,/g, ' ')})`);
  }
  return out;
}
