// Environment -> one typed, validated configuration object. Every variable is listed in the README.
import path from 'node:path';
import { type TrustProxy, trustEntryProblem } from './platform/http/public-address.ts';
import { type TracingConfig, tracingConfigFrom } from './platform/tracing.ts';

export type AtriumRole = 'api' | 'worker' | 'all';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** DATABASE_READ_URL: streaming replicas for reads that may lag (pages, exports, OData, scheduled runs); empty: the primary. */
  databaseReadUrls: string[];
  /** A replica lagging more than this (ATRIUM_READ_MAX_LAG) is skipped for the primary. */
  readMaxLagMs: number;
  dataDir: string;
  adminToken: string | undefined;
  secretKey: string | undefined;
  logLevel: string;
  role: AtriumRole;
  tokenLifetimeSeconds: number;
  refreshTokenLifetimeSeconds: number;
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  /** Largest custom-table import file (PUT …/import streams it, so this bounds time and storage, not memory). */
  customTableImportLimitBytes: number;
  /** Largest member or row of a custom-table import file, held whole while it is parsed. */
  customTableImportRowLimitBytes: number;
  rateLimitPerMinute: number;
  /** Development: a directory where the server writes the JSON bodies it sees, for `npm run openapi:examples`. */
  recordExamplesDir: string | null;
  /** MCP (src/mcp): requests per minute per user (ATRIUM_MCP_RATE_LIMIT_PER_MINUTE; 0: none). */
  mcpRateLimitPerMinute: number;
  /** MCP sessions one process holds at most (ATRIUM_MCP_MAX_SESSIONS); each user at most a tenth of them, and 32. */
  mcpMaxSessions: number;
  /** An MCP session unused for this long is closed (ATRIUM_MCP_SESSION_IDLE). */
  mcpSessionIdleMs: number;
  /** Base address of this deployment as callers reach it; webhook payloads link documents under it. */
  publicUrl: string;
  /** Whether ATRIUM_PUBLIC_URL was set: then request links use it unless a trusted proxy forwards the address. */
  publicUrlExplicit: boolean;
  /** ATRIUM_TRUST_PROXY: whose Forwarded / X-Forwarded-* headers are believed (false, true, or addresses / CIDRs). */
  trustProxy: TrustProxy;
  /** `apiv2-{tenant}.example.com`: a request's Host names its tenant by slug; unset: hosts name no tenant. */
  tenantHostPattern: string | undefined;
  /** Delay before each webhook delivery attempt (the first is usually 0); its length is the number of attempts. */
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  webhookAllowPrivateNetworks: boolean;
  webhookLegacySecretHeader: boolean;
  /** A subscription whose every delivery has failed for this long is set inactive. */
  webhookDisableAfterMs: number;
  webhookConcurrency: number;
  /** Delivered events and settled invocations (with their attempts) older than this are deleted by the maintenance job. */
  eventRetentionMs: number;
  /** Where scheduled-extraction files live (default DATA_DIR/exports); every process must see the same folder. */
  exportsDir: string;
  /** ATRIUM_EXPORTS_URL=s3://bucket/prefix: export files in S3-compatible storage instead of exportsDir (AWS_* variables for the rest). */
  exportsUrl: string | undefined;
  /** Files kept per schedule; older ones are deleted after each run. */
  exportRetention: number;
  /** A scheduled run's own time limit (the interactive 30 s limit does not apply to it). */
  scheduleRunTimeoutMs: number;
  /** smtp(s)://user:pass@host:port for failure e-mails; unset: none are sent. */
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** Browser origins allowed by CORS (scheme://host[:port]); empty: CORS is off. */
  corsOrigins: string[];
  /** /health/ready answers 503 when the oldest waiting webhook work (outbox, due invocations) is older than this. */
  readyMaxBacklogAgeMs: number;
  /** text: the startup banner and lifecycle messages go to stderr as text; json: they are JSON log lines on stdout. */
  logFormat: LogFormat;
  /** OpenTelemetry tracing from the standard OTEL_* variables; null: off (decision 0048). */
  tracing: TracingConfig | null;
  /** An automation run's own time limit (ATRIUM_AUTOMATION_RUN_TIMEOUT); a run past it ends Failed. */
  automationRunTimeoutMs: number;
  /** Actions one automation run may execute, sub-workflows and loop bodies included. */
  automationMaxSteps: number;
  /** Items one Loop (or Reduce) may iterate over. */
  automationMaxLoopIterations: number;
  /** Largest output (serialised JSON) one action may produce. */
  automationMaxOutputBytes: number;
  /** Largest user-feed file (ATRIUM_USER_FEED_MAX_FILE_BYTES): a larger one fails unread, moved with its reason. */
  userFeedMaxFileBytes: number;
  /** Data rows one user-feed file may hold (ATRIUM_USER_FEED_MAX_ROWS). */
  userFeedMaxRows: number;
  /** Automation runs a worker process executes at once (webhook-triggered and scheduled). */
  automationConcurrency: number;
  /** Bytes one run may hold at once in action outputs and parameters (every workflow's, sub-workflows included). */
  automationMaxRunBytes: number;
  /** Largest definition (serialised JSON) a save accepts. */
  automationMaxDefinitionBytes: number;
  /** Actions a definition may declare, sub-workflows included. */
  automationMaxActions: number;
  /** thread: each run in a worker thread with its own heap limit and CPU deadline; none: in the calling thread. */
  automationIsolation: 'thread' | 'none';
  /** Heap (old generation) of a run thread, in MB: past it the thread is stopped and its runs Failed. */
  automationMemoryMb: number;
  /** Run threads a process keeps; runs (ATRIUM_AUTOMATION_CONCURRENCY in all) are shared among them. */
  automationThreads: number;
  /** Longest a run's thread may keep its CPU without answering (a synchronous stall): past it the thread is stopped. */
  automationCpuStallMs: number;
  /** Render time of one ApplyTemplate (liquidjs renderLimit). */
  automationTemplateTimeoutMs: number;
  /** Where Rest actions with isApiCall send their requests; unset: this process's own listening address. */
  automationApiUrl: string | undefined;
  /** Authority the AzureAd*Authentication actions ask for tokens (`<authority>/<tenantId>/oauth2/token`). */
  azureAdAuthority: string;
  /** ATRIUM_ROLE=worker: the port its /metrics and /health/* answer on (0: any free one); undefined: it listens on none. */
  metricsPort: number | undefined;
}

export type LogFormat = 'text' | 'json';

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return fallback;
  }
  return n;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `250ms`, `5s`, `30m`, `2h`, `5d` -> milliseconds; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * DURATION_UNITS[m[2]]) : null;
}

function durationVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const ms = parseDuration(raw);
  if (ms === null || ms < min || ms > max) {
    problems.push(`${name} must be a duration such as 500ms, 15s, 5m, 2h or 5d, between ${min} ms and ${max} ms (got "${raw}")`);
    return fallback;
  }
  return ms;
}

function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean, problems: string[]): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  problems.push(`${name} must be true or false (got "${raw}")`);
  return fallback;
}

/** The spec-less default chosen for webhooks: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '0s,5s,5m,30m,2h,5h,10h,10h';

function retryScheduleVar(env: NodeJS.ProcessEnv, problems: string[]): number[] {
  const raw = env.ATRIUM_WEBHOOK_RETRY_SCHEDULE || DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const parts = raw.split(',').map((p) => parseDuration(p));
  if (parts.length > 50 || parts.some((ms) => ms === null || ms > 7 * 86_400_000)) {
    problems.push(`ATRIUM_WEBHOOK_RETRY_SCHEDULE must be 1 to 50 comma-separated durations (such as 0s,5s,5m), each at most 7d (got "${raw}")`);
    return retryScheduleVar({}, problems);
  }
  return parts as number[];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const role = (env.ATRIUM_ROLE || 'all') as AtriumRole;
  if (!['api', 'worker', 'all'].includes(role)) problems.push(`ATRIUM_ROLE must be api, worker or all (got "${env.ATRIUM_ROLE}")`);
  const logFormat = (env.LOG_FORMAT || 'text') as LogFormat;
  if (!['text', 'json'].includes(logFormat)) problems.push(`LOG_FORMAT must be text or json (got "${env.LOG_FORMAT}")`);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  const secretKey = env.ATRIUM_SECRET_KEY || undefined;
  if (secretKey !== undefined && !isValidSecretKey(secretKey)) {
    problems.push('ATRIUM_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  const adminToken = env.ATRIUM_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) problems.push('ATRIUM_ADMIN_TOKEN must be at least 16 characters');
  const config: Config = {
    port: intVar(env, 'PORT', 8080, 0, 65535, problems),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    databaseReadUrls: readUrlsVar(env, problems),
    readMaxLagMs: durationVar(env, 'ATRIUM_READ_MAX_LAG', 30_000, 0, 86_400_000, problems),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    adminToken,
    secretKey,
    logLevel,
    role,
    tokenLifetimeSeconds: intVar(env, 'ATRIUM_TOKEN_LIFETIME_SECONDS', 3600, 1, 31 * 24 * 3600, problems),
    refreshTokenLifetimeSeconds: intVar(env, 'ATRIUM_REFRESH_TOKEN_LIFETIME_SECONDS', 14 * 24 * 3600, 60, 365 * 24 * 3600, problems),
    requestTimeoutMs: intVar(env, 'ATRIUM_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000, problems),
    bodyLimitBytes: intVar(env, 'ATRIUM_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems),
    customTableImportLimitBytes: intVar(env, 'ATRIUM_CUSTOM_TABLE_IMPORT_LIMIT_BYTES', 512 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024, problems),
    customTableImportRowLimitBytes: intVar(env, 'ATRIUM_CUSTOM_TABLE_IMPORT_ROW_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024, problems),
    rateLimitPerMinute: intVar(env, 'ATRIUM_RATE_LIMIT_PER_MINUTE', 6000, 0, 10_000_000, problems),
    recordExamplesDir: env.ATRIUM_RECORD_OPENAPI_EXAMPLES ? path.resolve(env.ATRIUM_RECORD_OPENAPI_EXAMPLES) : null,
    mcpRateLimitPerMinute: intVar(env, 'ATRIUM_MCP_RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000, problems),
    mcpMaxSessions: intVar(env, 'ATRIUM_MCP_MAX_SESSIONS', 2000, 1, 1_000_000, problems),
    mcpSessionIdleMs: durationVar(env, 'ATRIUM_MCP_SESSION_IDLE', 30 * 60_000, 1000, 7 * 86_400_000, problems),
    publicUrl: '',
    publicUrlExplicit: Boolean(env.ATRIUM_PUBLIC_URL),
    trustProxy: trustProxyVar(env, problems),
    tenantHostPattern: tenantHostPatternVar(env, problems),
    webhookRetryScheduleMs: retryScheduleVar(env, problems),
    webhookTimeoutMs: durationVar(env, 'ATRIUM_WEBHOOK_TIMEOUT', 15_000, 100, 300_000, problems),
    webhookAllowPrivateNetworks: boolVar(env, 'ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS', false, problems),
    webhookLegacySecretHeader: boolVar(env, 'ATRIUM_WEBHOOK_LEGACY_SECRET_HEADER', true, problems),
    webhookDisableAfterMs: durationVar(env, 'ATRIUM_WEBHOOK_DISABLE_AFTER', 5 * 86_400_000, 1000, 365 * 86_400_000, problems),
    webhookConcurrency: intVar(env, 'ATRIUM_WEBHOOK_CONCURRENCY', 32, 1, 1024, problems),
    eventRetentionMs: durationVar(env, 'ATRIUM_EVENT_RETENTION', 30 * 86_400_000, 60_000, 3650 * 86_400_000, problems),
    exportsDir: '',
    exportsUrl: exportsUrlVar(env, problems),
    exportRetention: intVar(env, 'ATRIUM_EXPORT_RETENTION', 30, 1, 100_000, problems),
    scheduleRunTimeoutMs: durationVar(env, 'ATRIUM_SCHEDULE_RUN_TIMEOUT', 3_600_000, 1000, 7 * 86_400_000, problems),
    smtpUrl: env.ATRIUM_SMTP_URL || undefined,
    smtpFrom: env.ATRIUM_SMTP_FROM || 'Atrium <atrium@localhost>',
    corsOrigins: corsOriginsVar(env, problems),
    readyMaxBacklogAgeMs: durationVar(env, 'ATRIUM_READY_MAX_BACKLOG_AGE', 5 * 60_000, 1000, 7 * 86_400_000, problems),
    automationRunTimeoutMs: durationVar(env, 'ATRIUM_AUTOMATION_RUN_TIMEOUT', 15 * 60_000, 100, 7 * 86_400_000, problems),
    automationMaxSteps: intVar(env, 'ATRIUM_AUTOMATION_MAX_STEPS', 10_000, 10, 10_000_000, problems),
    automationMaxLoopIterations: intVar(env, 'ATRIUM_AUTOMATION_MAX_LOOP_ITERATIONS', 10_000, 1, 10_000_000, problems),
    automationMaxOutputBytes: intVar(env, 'ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems),
    userFeedMaxFileBytes: intVar(env, 'ATRIUM_USER_FEED_MAX_FILE_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems),
    userFeedMaxRows: intVar(env, 'ATRIUM_USER_FEED_MAX_ROWS', 20_000, 1, 10_000_000, problems),
    automationConcurrency: intVar(env, 'ATRIUM_AUTOMATION_CONCURRENCY', 32, 1, 1024, problems),
    automationApiUrl: env.ATRIUM_AUTOMATION_API_URL || undefined,
    azureAdAuthority: (env.ATRIUM_AZURE_AD_AUTHORITY || 'https://login.microsoftonline.com').replace(/\/+$/, ''),
    automationMaxRunBytes: intVar(env, 'ATRIUM_AUTOMATION_MAX_RUN_BYTES', 64 * 1024 * 1024, 4096, 4 * 1024 * 1024 * 1024, problems),
    automationMaxDefinitionBytes: intVar(env, 'ATRIUM_AUTOMATION_MAX_DEFINITION_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024, problems),
    automationMaxActions: intVar(env, 'ATRIUM_AUTOMATION_MAX_ACTIONS', 1000, 2, 100_000, problems),
    automationIsolation: env.ATRIUM_AUTOMATION_ISOLATION === 'none' ? 'none' : 'thread',
    automationMemoryMb: intVar(env, 'ATRIUM_AUTOMATION_MEMORY_MB', 512, 32, 16_384, problems),
    automationThreads: intVar(env, 'ATRIUM_AUTOMATION_THREADS', 2, 1, 256, problems),
    automationCpuStallMs: durationVar(env, 'ATRIUM_AUTOMATION_CPU_STALL', 10_000, 100, 3_600_000, problems),
    automationTemplateTimeoutMs: durationVar(env, 'ATRIUM_AUTOMATION_TEMPLATE_TIMEOUT', 1000, 10, 60_000, problems),
    logFormat,
    tracing: tracingConfigFrom(env, problems),
    metricsPort:
      env.ATRIUM_METRICS_PORT === undefined || env.ATRIUM_METRICS_PORT === '' ? undefined : intVar(env, 'ATRIUM_METRICS_PORT', 0, 0, 65535, problems),
  };
  config.exportsDir = path.resolve(env.ATRIUM_EXPORTS_DIR || path.join(config.dataDir, 'exports'));
  if (env.ATRIUM_AUTOMATION_ISOLATION && !['thread', 'none'].includes(env.ATRIUM_AUTOMATION_ISOLATION))
    problems.push('ATRIUM_AUTOMATION_ISOLATION must be thread or none');
  if (config.automationApiUrl && !/^https?:\/\/[^/]+/.test(config.automationApiUrl)) problems.push('ATRIUM_AUTOMATION_API_URL must be an http(s) URL');
  if (!/^https?:\/\/[^/]+/.test(config.azureAdAuthority) || !URL.canParse(config.azureAdAuthority))
    problems.push('ATRIUM_AZURE_AD_AUTHORITY must be an http(s) URL');
  if (config.smtpUrl && !/^smtps?:\/\/[^/]+/.test(config.smtpUrl)) problems.push('ATRIUM_SMTP_URL must be an smtp:// or smtps:// URL');
  const publicUrl = env.ATRIUM_PUBLIC_URL || `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  if (!/^https?:\/\/[^/]+/.test(publicUrl) || !URL.canParse(publicUrl)) problems.push(`ATRIUM_PUBLIC_URL must be an http(s) URL (got "${publicUrl}")`);
  config.publicUrl = publicUrl.replace(/\/+$/, '');
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return config;
}

function exportsUrlVar(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const raw = env.ATRIUM_EXPORTS_URL;
  if (raw === undefined || raw === '') return undefined;
  if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^?#]*)?$/.test(raw)) {
    problems.push(`ATRIUM_EXPORTS_URL must be s3://bucket or s3://bucket/prefix (got "${raw}")`);
    return undefined;
  }
  return raw;
}

/** `postgres://replica-1/atrium,postgres://replica-2/atrium`: one or more, comma-separated. */
function readUrlsVar(env: NodeJS.ProcessEnv, problems: string[]): string[] {
  const urls = (env.DATABASE_READ_URL ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.some((u) => !/^postgres(ql)?:\/\//.test(u))) problems.push('DATABASE_READ_URL must be postgres:// or postgresql:// URLs, comma-separated');
  else if (urls.length > 0 && !env.DATABASE_URL) problems.push('DATABASE_READ_URL needs DATABASE_URL (replicas of which primary?)');
  return urls;
}

function trustProxyVar(env: NodeJS.ProcessEnv, problems: string[]): TrustProxy {
  const raw = (env.ATRIUM_TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  const entries = raw.split(',').map((e) => e.trim().toLowerCase());
  const wrong = entries.map(trustEntryProblem).filter((p) => p !== null);
  if (wrong.length)
    problems.push(
      `ATRIUM_TRUST_PROXY must be true, false or a comma-separated list of IP addresses, CIDRs, loopback, linklocal or uniquelocal: ${wrong.join('; ')}`,
    );
  return wrong.length ? false : entries;
}

/** `https://app.example.com,http://localhost:5173`: each an origin exactly as a browser sends it. */
function corsOriginsVar(env: NodeJS.ProcessEnv, problems: string[]): string[] {
  const raw = env.ATRIUM_CORS_ORIGINS;
  if (raw === undefined || raw.trim() === '') return [];
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  const bad = origins.filter((o) => !URL.canParse(o) || new URL(o).origin !== o);
  if (bad.length) problems.push(`ATRIUM_CORS_ORIGINS must be comma-separated origins such as https://app.example.com (got "${bad.join(', ')}")`);
  return bad.length ? [] : origins;
}

/** A host name (optionally with :port) holding `{tenant}` once, where the tenant's slug goes. */
function tenantHostPatternVar(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const raw = env.ATRIUM_TENANT_HOST_PATTERN;
  if (raw === undefined || raw === '') return undefined;
  const pattern = raw.trim().toLowerCase();
  if (pattern.split('{tenant}').length !== 2 || !/^[a-z0-9.-]*\{tenant\}[a-z0-9.-]*(:\d{1,5})?$/.test(pattern)) {
    problems.push(`ATRIUM_TENANT_HOST_PATTERN must be a host name holding {tenant} once, such as apiv2-{tenant}.atrium.example.com (got "${raw}")`);
    return undefined;
  }
  return pattern;
}

export function decodeSecretKey(value: string): Buffer {
  const buf = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (buf.length !== 32) throw new ConfigError('ATRIUM_SECRET_KEY must decode to 32 bytes');
  return buf;
}

function isValidSecretKey(value: string): boolean {
  try {
    decodeSecretKey(value);
    return true;
  } catch {
    return false;
  }
}
