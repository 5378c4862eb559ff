// Role names every tenant starts with. Administrator holds all of them.
export const ADMINISTRATOR = 'Administrator' as const;

export const CUSTOM_TABLES_READ = "Read custom tables (a table's Read roles, when set, narrow it further)";
export const CUSTOM_TABLES_SAVE = "Create, write, import and drop custom tables (a table's Save roles, when set, narrow it further)";

/** The roles that gave every remaining route one (decision 0043). */
export const ROUTE_ROLES = [
  { name: 'DataExtractionRead', description: 'Read named queries (list, metadata, dynamic-execute) and the OData feed' },
  { name: 'IntegrationRead', description: 'Look up users, user types, departments and typologies through the Integration API' },
  { name: 'IntegrationWrite', description: 'Create and update users, employees, clients, suppliers and master data through the Integration API' },
  { name: 'ConfigurationKeyRead', description: 'Read configuration keys (secrets masked unless Administrator)' },
  { name: 'ConfigurationKeyWrite', description: 'Create and replace configuration keys' },
  { name: 'EventRaise', description: 'Raise custom events on documents' },
  { name: 'TimeWrite', description: 'Create, change and delete timesheets and leaves through the Client API' },
] as const satisfies readonly { name: string; description: string }[];

export const BUILT_IN_ROLES = [
  { name: ADMINISTRATOR, description: 'Holds every role' },
  { name: 'WebhookSubscriptionGet', description: 'List and get webhook subscriptions' },
  { name: 'WebhookSubscriptionCreate', description: 'Create webhook subscriptions' },
  { name: 'WebhookSubscriptionWrite', description: 'Update webhook subscriptions' },
  { name: 'WebhookSubscriptionDelete', description: 'Delete webhook subscriptions' },
  { name: 'WebhookSubscriptionNavigate', description: 'Open webhook subscriptions in the UI' },
  { name: 'CustomTablesRead', description: CUSTOM_TABLES_READ },
  { name: 'CustomTablesSave', description: CUSTOM_TABLES_SAVE },
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
  // Every route has a role (issue 26, item 11; migration 0024 adds them to tenants created before).
  ...ROUTE_ROLES,
  // The Active Directory blocker agent (migration 0026 adds it to tenants created before).
  { name: 'AdBlockerAgent', description: 'The on-premises Active Directory blocker: users to block, blocked logins, unblock requests' },
] as const satisfies readonly { name: string; description: string }[];

/**
 * The name of a built-in role: what a route's `config.roles` and a role check name, so that a misspelt role
 * fails to compile. A tenant's own roles (SCIM groups, the user feed's) are plain strings on a Principal.
 */
export type RoleName = (typeof BUILT_IN_ROLES)[number]['name'];
