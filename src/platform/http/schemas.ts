// TypeBox building blocks every surface's route schemas share.
import { Type } from 'typebox';

export const GUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A GUID in its canonical 8-4-4-4-12 form. */
export const Guid = Type.String({ format: 'uuid', pattern: GUID_PATTERN });

export const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) => Type.Union([s, Type.Null()]);

/** A value-wrapped PATCH body ({"field": {"value": …}}) unwrapped: field -> new value (only the fields sent). */
export function unwrap(body: Record<string, { value: unknown } | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(body)) if (v !== undefined) out[name] = v.value;
  return out;
}
