// Prometheus metrics (prom-client): process defaults plus request counts and durations per route.
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly #registry = new Registry();
  readonly #duration: Histogram;

  constructor() {
    collectDefaultMetrics({ register: this.#registry, prefix: 'atrium_' });
    this.#duration = new Histogram({
      name: 'atrium_http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.#registry],
    });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.#duration.observe({ method, route, status_code: String(status) }, seconds);
  }

  render(): Promise<string> {
    return this.#registry.metrics();
  }
}
