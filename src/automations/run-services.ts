// What a run may reach outside its own data: the tenant's database rows (through tenant-scoped
// transactions), the mailer, the guarded outbound HTTP client, and Atrium's own API as the tenant.
import type { Agent } from 'undici';
import type { Config } from '../config.ts';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { AuthService } from '../platform/auth/service.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import type { AutomationToRun } from './engine.ts';

export interface RunServices {
  config: Config;
  db: DatabaseHandle;
  box: SecretBox;
  auth: AuthService;
  mailer: Mailer;
  /** Outbound HTTP with the webhook address guard (unless ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  agent: Agent;
  /** Base URL of Atrium's own API for isApiCall (ATRIUM_AUTOMATION_API_URL, else this process's address). */
  apiBaseUrl: () => string;
  /** Another automation of the tenant, for ExecuteIntegrationWorkflow. */
  loadAutomation: (tenantId: string, id: string) => Promise<AutomationToRun | null>;
}
