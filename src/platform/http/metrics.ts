// Prometheus metrics (prom-client) at GET /metrics: process defaults, request counts and durations per
// route, the process's background-work instruments (../metrics.ts), and gauges read at scrape time:
// database pools, the worker side's heartbeats and the backlogs (docs/operations.md lists them all).
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { workRegistry } from '../metrics.ts';

export class Metrics {
  readonly #registry = new Registry();
  readonly #duration: Histogram;

  constructor(ctx: Pick<AppContext, 'db' | 'jobs'>) {
    collectDefaultMetrics({ register: this.#registry, prefix: 'atrium_' });
    // prom-client names three gauges like counters (…_total), which `promtool check metrics` rejects: each is
    // replaced by a gauge named for what it is (the by-type gauges beside them stay as they are).
    const process_ = process as unknown as { _getActiveHandles?: () => unknown[]; _getActiveRequests?: () => unknown[] };
    const renamed: [string, string, string, () => number][] = [
      ['handles', 'Active libuv handles (all types)', 'atrium_nodejs_active_handles_total', () => process_._getActiveHandles?.().length ?? 0],
      ['requests', 'Active libuv requests (all types)', 'atrium_nodejs_active_requests_total', () => process_._getActiveRequests?.().length ?? 0],
      [
        'resources',
        'Active resources keeping the event loop alive (all types)',
        'atrium_nodejs_active_resources_total',
        () => process.getActiveResourcesInfo().length,
      ],
    ];
    for (const [what, help, old, read] of renamed) {
      this.#registry.removeSingleMetric(old);
      new Gauge({
        name: `atrium_nodejs_active_${what}_all`,
        help,
        registers: [this.#registry],
        collect() {
          this.set(read());
        },
      });
    }
    this.#duration = new Histogram({
      name: 'atrium_http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.#registry],
    });
    const registers = [this.#registry];
    new Gauge({
      name: 'atrium_db_pool_connections',
      help: 'Database pool connections by pool (owner, tenant) and state (in_use, idle, waiting: checkouts queued for a connection)',
      labelNames: ['pool', 'state'],
      registers,
      collect() {
        for (const [pool, s] of Object.entries(ctx.db.poolStats())) {
          this.set({ pool, state: 'in_use' }, s.inUse);
          this.set({ pool, state: 'idle' }, s.idle);
          this.set({ pool, state: 'waiting' }, s.waiting);
        }
      },
    });
    new Gauge({
      name: 'atrium_worker_up',
      help: 'Background parts of this process: 1 running (and, for loops, ticking recently), 0 not; pgboss is absent without jobs',
      labelNames: ['component'],
      registers,
      collect() {
        if (!ctx.jobs) return;
        this.set({ component: 'pgboss' }, ctx.jobs.working ? 1 : 0);
        for (const h of ctx.jobs.status.heartbeats()) this.set({ component: h.name }, h.alive ? 1 : 0);
      },
    });
    // One read of the backlog serves both gauges of a scrape.
    let reading: Promise<Record<string, { count: number; oldestAgeSeconds: number }>> | null = null;
    const backlogs = () => {
      // A database that cannot answer leaves the backlog gauges out; the rest of the scrape still answers.
      reading ??= (ctx.jobs?.status.backlogs() ?? Promise.resolve({})).catch(() => ({})).finally(() => setImmediate(() => (reading = null)));
      return reading;
    };
    new Gauge({
      name: 'atrium_backlog_items',
      help: 'Work waiting, by backlog: outbox (events not yet dispatched), webhookInvocationsDue (deliveries due now, not leased); counted up to 100000',
      labelNames: ['backlog'],
      registers,
      async collect() {
        for (const [backlog, b] of Object.entries(await backlogs())) this.set({ backlog }, b.count);
      },
    });
    new Gauge({
      name: 'atrium_backlog_oldest_age_seconds',
      help: 'Age of the oldest waiting item, by backlog (0 when none waits)',
      labelNames: ['backlog'],
      registers,
      async collect() {
        for (const [backlog, b] of Object.entries(await backlogs())) this.set({ backlog }, b.oldestAgeSeconds);
      },
    });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.#duration.observe({ method, route, status_code: String(status) }, seconds);
  }

  async render(): Promise<string> {
    const [own, work] = await Promise.all([this.#registry.metrics(), workRegistry.metrics()]);
    return `${own}\n${work}`;
  }
}
