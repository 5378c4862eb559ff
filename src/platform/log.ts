// The process's logger for work outside a request (workers, jobs): pino at LOG_LEVEL, writing the same
// JSON lines as the HTTP server's logger. Each part logs through a child naming it ({ component }).
import { type Logger, pino } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel });
}

/** For parts built without a process logger (tests, benchmarks that construct a worker themselves). */
export const silentLogger: Logger = pino({ level: 'silent' });
