// A document model as the services take it: the custom fields and brief ride inside the model. Shared by
// the Client API's routes and the MCP write tools.
import type { Row } from './registry.ts';

export function documentInput(model: Row, path: string) {
  const { DocumentUserFieldValues, DocumentBrief, ...rest } = model as Row & {
    DocumentUserFieldValues?: Record<string, unknown> | null;
    DocumentBrief?: { Text?: string | null; PlainText?: string | null } | null;
  };
  return {
    model: rest,
    path,
    userFields: DocumentUserFieldValues ?? null,
    brief: DocumentBrief?.Text ? { text: DocumentBrief.Text, plainText: DocumentBrief.PlainText ?? null } : null,
  };
}
