// The webhook subscriptions as other surfaces use them (docs/architecture.md): the import carries a
// source tenant's subscriptions over (inactive, each with a new secret).
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { DetailFilterSchema, type SubscriptionInput } from './api/schemas.ts';

export type { SubscriptionInput } from './api/schemas.ts';
export { mirrorSubscription, type SubscriptionContext } from './api/subscriptions.ts';

const DetailFilters = Type.Array(DetailFilterSchema, { maxItems: 100 });

/**
 * Detail filters read from elsewhere (another server's subscription, in an import), checked against the schema
 * the API takes them with: the filters when they are valid (none for null or absent), else null.
 */
export function checkedDetailFilters(value: unknown): NonNullable<SubscriptionInput['DetailFilters']> | null {
  if (value === undefined || value === null) return [];
  return Value.Check(DetailFilters, value) ? value : null;
}
