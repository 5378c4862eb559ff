// Environment -> one typed, validated configuration object. Every variable is listed in the README.
import path from 'node:path';

export type AtriumRole = 'api' | 'worker' | 'all';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminToken: string | undefined;
  secretKey: string | undefined;
  logLevel: string;
  role: AtriumRole;
  tokenLifetimeSeconds: number;
  refreshTokenLifetimeSeconds: number;
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
}

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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const role = (env.ATRIUM_ROLE || 'all') as AtriumRole;
  if (!['api', 'worker', 'all'].includes(role)) problems.push(`ATRIUM_ROLE must be api, worker or all (got "${env.ATRIUM_ROLE}")`);
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
    dataDir: path.resolve(env.DATA_DIR || './data'),
    adminToken,
    secretKey,
    logLevel,
    role,
    tokenLifetimeSeconds: intVar(env, 'ATRIUM_TOKEN_LIFETIME_SECONDS', 3600, 1, 31 * 24 * 3600, problems),
    refreshTokenLifetimeSeconds: intVar(env, 'ATRIUM_REFRESH_TOKEN_LIFETIME_SECONDS', 14 * 24 * 3600, 60, 365 * 24 * 3600, problems),
    requestTimeoutMs: intVar(env, 'ATRIUM_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000, problems),
    bodyLimitBytes: intVar(env, 'ATRIUM_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems),
    rateLimitPerMinute: intVar(env, 'ATRIUM_RATE_LIMIT_PER_MINUTE', 6000, 0, 10_000_000, problems),
  };
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return config;
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
