// The worker thread a contained automation run executes in (contained.ts starts it): the engine and its
// actions with their own outbound agent and mailer, and the tenant's rows reached through messages to the
// main thread. Several runs at a time (each with its own id); a thread stopped for its memory or CPU stops
// the runs it holds.
import { parentPort, workerData } from 'node:worker_threads';
import { context } from '@opentelemetry/api';
import type { Config } from '../config.ts';
import type { Principal } from '../platform/auth/principal.ts';
import { HttpProblem } from '../platform/errors.ts';
import { Mailer } from '../platform/mail/mailer.ts';
import { createOutboundAgent } from '../platform/outbound.ts';
import { contextOf, startTracing } from '../platform/tracing.ts';
import { type AutomationToRun, type HttpRequestValue, runAutomation } from './engine.ts';
import { HANDLERS } from './handlers.ts';
import type { RunServices } from './run-services.ts';

export type ToThread =
  | { type: 'run'; run: number; automation: AutomationToRun; request: HttpRequestValue; apiBaseUrl: string; traceContext: string | null }
  | { type: 'abort'; run: number }
  | { type: 'ping' }
  | { type: 'answer'; call: number; ok: true; value: unknown }
  | { type: 'answer'; call: number; ok: false; status: number | null; message: string; errors?: unknown };

export type FromThread =
  | { type: 'done'; run: number; outcome: Awaited<ReturnType<typeof runAutomation>> }
  | { type: 'pong' }
  | { type: 'ready' }
  | { type: 'call'; call: number; method: RemoteMethod; args: unknown[] };

/** The run services the main thread answers (contained.ts). */
export type RemoteMethod =
  | 'loadAutomation'
  | 'configurationKey'
  | 'appRoles'
  | 'namedQuery'
  | 'documentView'
  | 'issueAppToken'
  | 'openCredentials'
  | 'enqueueBackgroundWork';

const port = parentPort;
if (port) {
  const config = (workerData as { config: Config }).config;
  // Traced (decision 0048): the thread exports its own spans, the actions' spans continuing the run's span
  // (its traceparent comes with each run), so a Rest call's traceparent names its action's span.
  startTracing(config.tracing);
  let apiBaseUrl = config.publicUrl;
  const aborts = new Map<number, AbortController>();
  let nextCall = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const remote =
    (method: RemoteMethod) =>
    (...args: unknown[]): Promise<never> =>
      new Promise((resolve, reject) => {
        const call = ++nextCall;
        pending.set(call, { resolve: resolve as (v: unknown) => void, reject });
        port.postMessage({ type: 'call', call, method, args } satisfies FromThread);
      });
  const unavailable = (what: string) => () => {
    throw new Error(`${what} is not reachable from a contained automation run`);
  };
  const services: RunServices = {
    config,
    // Only the engine's own actions run contained (contained.ts, containable).
    handlers: HANDLERS,
    get db(): never {
      return unavailable('the database')() as never;
    },
    get box(): never {
      return unavailable('the secret box')() as never;
    },
    mailer: new Mailer(config),
    agent: createOutboundAgent({ allowPrivate: config.webhookAllowPrivateNetworks, connections: config.automationConcurrency, connectTimeoutMs: 10_000 }),
    apiBaseUrl: () => apiBaseUrl,
    loadAutomation: remote('loadAutomation'),
    configurationKey: remote('configurationKey'),
    appRoles: remote('appRoles'),
    namedQuery: remote('namedQuery') as (principal: Principal, name: string, body: unknown) => Promise<string>,
    documentView: remote('documentView'),
    issueAppToken: remote('issueAppToken'),
    openCredentials: remote('openCredentials'),
    enqueueBackgroundWork: remote('enqueueBackgroundWork'),
  };
  port.on('message', (m: ToThread) => {
    switch (m.type) {
      case 'ping':
        port.postMessage({ type: 'pong' } satisfies FromThread);
        return;
      case 'abort':
        aborts.get(m.run)?.abort();
        return;
      case 'answer': {
        const p = pending.get(m.call);
        pending.delete(m.call);
        if (!p) return;
        if (m.ok) p.resolve(m.value);
        else p.reject(m.status === null ? new Error(m.message) : new HttpProblem(m.status, m.message, { errors: m.errors as HttpProblem['errors'] }));
        return;
      }
      case 'run': {
        const abort = new AbortController();
        aborts.set(m.run, abort);
        apiBaseUrl = m.apiBaseUrl;
        void context
          .with(contextOf(m.traceContext), () => runAutomation(m.automation, services, m.request, { signal: abort.signal }))
          .then((outcome) => {
            aborts.delete(m.run);
            port.postMessage({ type: 'done', run: m.run, outcome } satisfies FromThread);
          });
        return;
      }
    }
  });
  port.postMessage({ type: 'ready' } satisfies FromThread);
}
