// Role names every tenant starts with. Administrator holds all of them.
export const ADMINISTRATOR = 'Administrator';

export const BUILT_IN_ROLES: { name: string; description: string }[] = [
  { name: ADMINISTRATOR, description: 'Holds every role' },
  { name: 'WebhookSubscriptionGet', description: 'List and get webhook subscriptions' },
  { name: 'WebhookSubscriptionCreate', description: 'Create webhook subscriptions' },
  { name: 'WebhookSubscriptionWrite', description: 'Update webhook subscriptions' },
  { name: 'WebhookSubscriptionDelete', description: 'Delete webhook subscriptions' },
  { name: 'WebhookSubscriptionNavigate', description: 'Open webhook subscriptions in the UI' },
  { name: 'CustomTablesRead', description: 'Read custom tables that name this role' },
  { name: 'CustomTablesSave', description: 'Write custom tables that name this role' },
  { name: 'ScheduleRead', description: 'List and download scheduled extractions' },
  { name: 'ScheduleWrite', description: 'Create, change and run scheduled extractions' },
  { name: 'AutomationGet', description: 'List and get automations and their runs' },
  { name: 'AutomationCreate', description: 'Create automations' },
  { name: 'AutomationWrite', description: 'Update and run automations' },
  { name: 'AutomationDelete', description: 'Delete automations' },
  // Client API documents (migration 0016 adds them to tenants created before).
  { name: 'ProjectRead', description: 'Read projects through the Client API' },
  { name: 'ProjectWrite', description: 'Create and change projects through the Client API' },
  { name: 'JobRead', description: 'Read jobs through the Client API' },
  { name: 'JobWrite', description: 'Create and change jobs through the Client API' },
  { name: 'ContractRead', description: 'Read contracts through the Client API' },
  { name: 'ContractWrite', description: 'Create and change contracts through the Client API' },
  { name: 'RequestRead', description: 'Read requests through the Client API' },
  { name: 'RequestWrite', description: 'Create and change requests through the Client API' },
  { name: 'EstimateRead', description: 'Read estimates through the Client API' },
  { name: 'EstimateWrite', description: 'Create and change estimates and their billing conditions through the Client API' },
  { name: 'ExpenseRead', description: 'Read expense sheets through the Client API' },
  { name: 'ExpenseWrite', description: 'Create expense sheets and their items through the Client API' },
  // The Active Directory blocker agent (migration 0026 adds it to tenants created before).
  { name: 'AdBlockerAgent', description: 'The on-premises Active Directory blocker: users to block, blocked logins, unblock requests' },
];
