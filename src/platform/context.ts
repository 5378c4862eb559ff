// What every surface receives: configuration, the database, auth and the secret box. Built once per process.
import type { DestinationStream } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from './auth/hashing.ts';
import type { AuthService } from './auth/service.ts';
import type { DatabaseHandle } from './db/database.ts';
import type { Jobs } from './jobs/jobs.ts';
import type { Logger } from './log.ts';

export interface AppContext {
  config: Config;
  db: DatabaseHandle;
  auth: AuthService;
  box: SecretBox;
  /** Logs work outside requests; each part takes a child ({ component }). */
  log: Logger;
  /** Background jobs (pg-boss); null in one-off CLI commands. */
  jobs: Jobs | null;
  /** Where log lines go when not stdout (a test reading them): the process logger and the request logger. */
  logDestination?: DestinationStream;
}
