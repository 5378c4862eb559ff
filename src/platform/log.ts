// The process's logger for work outside a request (workers, jobs): pino at LOG_LEVEL, writing the same
// JSON lines as the HTTP server's logger. Each part logs through a child naming it ({ component }).
import { type Logger, pino } from 'pino';
import type { Config } from '../config.ts';
import { traceLogMixin } from './tracing.ts';

export type { Logger };

export function createLogger(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'tracing'>>, destination?: pino.DestinationStream): Logger {
  // Traced: each line written inside a span names its traceId and spanId (no mixin at all when tracing is off).
  const options = { level: config.logLevel, ...(config.tracing ? { mixin: traceLogMixin } : {}) };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Where the server's startup banner and lifecycle messages go, so that stdout carries only JSON log lines:
 * LOG_FORMAT=text writes them to stderr as they are; json makes each one a log line ({ component: startup }).
 */
export function startupLog(config: Pick<Config, 'logLevel' | 'logFormat'>): (line: string) => void {
  if (config.logFormat === 'text') return (line) => process.stderr.write(`${line}\n`);
  // Level info even under LOG_LEVEL=warn: the banner carries the first start's credentials and the address.
  const logger = pino({ level: config.logLevel === 'silent' ? 'silent' : 'info' }).child({ component: 'startup' });
  return (line) => logger.info(line);
}

/** For parts built without a process logger (tests, benchmarks that construct a worker themselves). */
export const silentLogger: Logger = pino({ level: 'silent' });
