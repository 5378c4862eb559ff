// Schema validation whose error list cannot grow with the request: Ajv's allErrors keeps one error object per
// failing value, so a 10 MB body of 3 million `{}` would allocate millions of them before any answer is cut
// (issue 26, item 1). Every schema is compiled twice from one pool of options: a validator that stops at the
// first error runs first; only a request that fails it and holds at most ALL_ERRORS_UP_TO JSON values is
// validated again with allErrors, for an answer that lists what is wrong. The answer lists MAX_FIELD_ERRORS
// of them (src/platform/errors.ts).
import { AjvCompiler } from '@fastify/ajv-compiler';

/** Past this many JSON values (objects, arrays, scalars) an invalid request is answered with its first error only. */
export const ALL_ERRORS_UP_TO = 5_000;

/** Marks an error list that stopped at the first error because the input was too large to list all. */
export const PARTIAL_ERRORS = Symbol('partial validation errors');

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
type BuildValidator = (
  externalSchemas: unknown,
  options: { customOptions?: Record<string, unknown> } & Record<string, unknown>,
) => (route: unknown) => Validate;

/** Whether `value` holds more than `limit` JSON values; walks at most `limit + 1` of them. */
export function moreValuesThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let seen = 0;
  while (stack.length > 0) {
    if (++seen > limit) return true;
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && stack.length <= limit; i++) stack.push(v[i]);
      if (v.length > limit) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const key in v) {
        stack.push((v as Record<string, unknown>)[key]);
        if (stack.length > limit) return true;
      }
    }
  }
  return false;
}

/** A Fastify `schemaController.compilersFactory.buildValidator` whose validators collect a bounded error list. */
export function boundedValidatorFactory(): BuildValidator {
  const pool = AjvCompiler() as unknown as BuildValidator;
  return (externalSchemas, options) => {
    const all = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, allErrors: true } });
    const first = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, allErrors: false } });
    return (route) => {
      const quick = first(route);
      let full: Validate | null = null;
      const validate: Validate = (data) => {
        if (quick(data)) {
          validate.errors = null;
          return true;
        }
        if (moreValuesThan(data, ALL_ERRORS_UP_TO)) {
          const errors = [...(quick.errors ?? [])];
          Object.defineProperty(errors, PARTIAL_ERRORS, { value: true });
          validate.errors = errors;
          return false;
        }
        full ??= all(route);
        const ok = full(data);
        validate.errors = ok ? null : full.errors;
        return ok;
      };
      return validate;
    };
  };
}
