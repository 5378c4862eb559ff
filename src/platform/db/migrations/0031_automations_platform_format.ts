// Automations in the platform's published format (decision 0050): definitions stored in Atrium's older shape
// are rewritten in place. Every action's type goes under `actionType` (the older key `type` is dropped), and
// the actions whose fields were Atrium's own take the platform's names, or become Atrium's extension types
// where the platform has no equivalent, so each keeps doing what it did (src/automations/older-shape.ts).
// Saved versions (automation_versions) stay as they were saved: they are the history a run points to.
import { type Kysely, sql } from 'kysely';
import { upgradeDefinition } from '../../../automations/older-shape.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The action with its type under `actionType`, first. */
function typeKey(a: Json): Json {
  if (!isObject(a)) return a;
  const k = Object.keys(a).find((x) => x.toLowerCase() === 'actiontype') ?? Object.keys(a).find((x) => x.toLowerCase() === 'type');
  if (k === undefined) return a;
  const out: Record<string, Json> = { actionType: a[k] };
  for (const [key, v] of Object.entries(a)) if (key.toLowerCase() !== 'actiontype' && key.toLowerCase() !== 'type') out[key] = v;
  return out;
}

export function migrateDefinition(definition: Json): Json {
  const d = upgradeDefinition(definition);
  if (!isObject(d)) return d;
  const out: Record<string, Json> = { ...d };
  if (Array.isArray(out.actions)) out.actions = out.actions.map(typeKey);
  const subs = out.subWorkflows ?? out.subWorkflow;
  if (Array.isArray(subs)) {
    delete out.subWorkflow;
    out.subWorkflows = subs.map((s) => (isObject(s) && Array.isArray(s.actions) ? { ...s, actions: s.actions.map(typeKey) } : s));
  }
  return out;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ tenant_id: string; id: string; definition: Json }>`select tenant_id, id, definition from automations`.execute(db);
  for (const r of rows) {
    const next = migrateDefinition(r.definition);
    if (JSON.stringify(next) === JSON.stringify(r.definition)) continue;
    await sql`update automations set definition = ${JSON.stringify(next)}::jsonb where tenant_id = ${r.tenant_id} and id = ${r.id}`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The older shape is still read as a synonym on input; nothing to undo in the stored definitions.
}
