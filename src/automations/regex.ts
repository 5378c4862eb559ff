// Every regular expression a tenant writes (a ValidateJson schema's `pattern`, `propertyNames.pattern`)
// runs on RE2JS, a linear-time engine with RE2's semantics: no backreferences or lookaround, so no input
// can make matching backtrack (`^(a+)+$` over "aaaa…!" takes microseconds, not minutes). Decision 0042.
import { RE2JS } from 're2js';

/** Longest pattern accepted: matching is linear in input × pattern, so both are bounded. */
export const MAX_PATTERN_LENGTH = 1000;

export class PatternError extends Error {}

/**
 * A RegExp whose `test` (unanchored search, as JSON Schema's `pattern`) runs on RE2JS: a RegExp so that
 * validators that accept RegExp instances (TypeBox) take it, with `test` and `exec` never reaching the
 * backtracking engine (its own pattern is the empty one).
 */
export class LinearPattern extends RegExp {
  readonly #re: ReturnType<typeof RE2JS.compile>;
  readonly pattern: string;
  constructor(pattern: string, re: ReturnType<typeof RE2JS.compile>) {
    super('(?:)');
    this.pattern = pattern;
    this.#re = re;
  }
  override test(input: string): boolean {
    return this.#re.matcher(String(input)).find();
  }
  override exec(): RegExpExecArray | null {
    throw new Error('a linear pattern only answers test()');
  }
  override toString(): string {
    return `/${this.pattern}/`;
  }
}

const compiled = new Map<string, LinearPattern>();

/** Compiles `pattern` with RE2 semantics, or refuses it (too long, or syntax RE2 has not: backreferences, lookaround). */
export function linearPattern(pattern: string): LinearPattern {
  const hit = compiled.get(pattern);
  if (hit) return hit;
  if (pattern.length > MAX_PATTERN_LENGTH) throw new PatternError(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  let re: ReturnType<typeof RE2JS.compile>;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new PatternError(
      `"${pattern.slice(0, 100)}" is not a pattern this server runs (RE2 syntax: no backreferences or lookaround): ${(err as Error).message}`,
    );
  }
  const out = new LinearPattern(pattern, re);
  if (compiled.size >= 1000) compiled.clear();
  compiled.set(pattern, out);
  return out;
}
