// What a run may reach outside its own data: a few named operations on the tenant's rows (each in a
// tenant-scoped transaction of the run's tenant), the mailer, the guarded outbound HTTP client, and Atrium's
// own API as the tenant. Named operations rather than a database handle, so a run contained in a worker
// thread reaches them through messages to the main thread (contained.ts) exactly as an in-process run does.
import type { Agent } from 'undici';
import type { Config } from '../config.ts';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import type { AutomationToRun, Handler } from './engine.ts';

/** A run EnqueueBackgroundWork asks for (background.ts). */
export interface BackgroundWork {
  automationId: string;
  body: unknown;
  /** Runs sharing a session id execute one after another; null: no ordering. */
  sessionId: string | null;
  /** ISO date-time before which the run does not start. */
  startAfter: string;
  /** The automation that asked (the run's x-calling-automation header). */
  callerId: string;
  /** The app the asking automation acts as, for a target saved without one. */
  runAsAppId: string | null;
}

export interface RunServices {
  config: Config;
  /** The handler of every action type the run may meet, by type name (handlers.ts, and other surfaces' in runtime.ts). */
  handlers: Readonly<Record<string, Handler>>;
  /**
   * The database and the secret box, for built-in actions registered by other surfaces (UserFeed): an
   * automation that uses one runs in the main thread (contained.ts), and in a worker thread these throw.
   */
  db: DatabaseHandle;
  box: SecretBox;
  mailer: Mailer;
  /** Outbound HTTP with the webhook address guard (unless ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
  agent: Agent;
  /** Base URL of Atrium's own API for isApiCall (ATRIUM_AUTOMATION_API_URL, else this process's address). */
  apiBaseUrl: () => string;
  /** Another automation of the tenant, for ExecuteIntegrationWorkflow. */
  loadAutomation: (tenantId: string, id: string) => Promise<AutomationToRun | null>;
  /** A configuration key's value with its secrets in clear (throws HttpProblem 404 when there is none). */
  configurationKey: (tenantId: string, key: string) => Promise<unknown>;
  /** The roles of one of the tenant's apps. */
  appRoles: (tenantId: string, appId: string) => Promise<string[]>;
  /** One page of a named query as `principal` (dynamic execute), as JSON text; HttpProblem for what it refuses. */
  namedQuery: (principal: Principal, name: string, body: unknown) => Promise<string>;
  /**
   * A document of the Client API's registry (Project, Job/Deliverable, Contract, Request, Estimate, Expense…)
   * as GET /api/v3/<type>s/{id} answers it, read as one of the tenant's apps (403 without its Read role, 404
   * when there is none): what CreatePdfFromDocument renders.
   */
  documentView: (tenantId: string, appId: string, documentType: string, documentId: string) => Promise<Record<string, unknown>>;
  /** An access token for one of the tenant's apps (isApiCall), reused per context until shortly before it expires. */
  issueAppToken: (tenantId: string, appId: string) => Promise<{ accessToken: string; expiresIn: number }>;
  /** Queues a background run of one of the tenant's automations (EnqueueBackgroundWork); answers the job id. */
  enqueueBackgroundWork: (tenantId: string, work: BackgroundWork) => Promise<string>;
  /** The saving app's sealed credentials, opened (isApiCall). */
  openCredentials: (sealed: string) => Promise<string>;
}
