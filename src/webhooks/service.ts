// The webhook subscriptions as other surfaces use them (docs/architecture.md): the import carries a
// source tenant's subscriptions over (inactive, each with a new secret).

export type { SubscriptionInput } from './api/schemas.ts';
export { mirrorSubscription, type SubscriptionContext } from './api/subscriptions.ts';
