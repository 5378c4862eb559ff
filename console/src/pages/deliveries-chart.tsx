// Deliveries per hour over the last 24 hours, stacked by status: an SVG drawn from the history
// already loaded (no chart library: a few rectangles are not worth 50 KB).
import type { Invocation } from './webhooks.tsx';

const STATUSES = ['Succeeded', 'Retrying', 'Pending', 'Failed'] as const;
const HOURS = 24;

export function DeliveriesChart({ invocations, now = Date.now() }: { invocations: Invocation[]; now?: number }) {
  const end = Math.ceil(now / 3_600_000) * 3_600_000;
  const start = end - HOURS * 3_600_000;
  const buckets = Array.from({ length: HOURS }, () => ({ Succeeded: 0, Retrying: 0, Pending: 0, Failed: 0 }));
  for (const inv of invocations) {
    const t = Date.parse(inv.createdOnUtc);
    if (t < start || t >= end) continue;
    buckets[Math.floor((t - start) / 3_600_000)][inv.status]++;
  }
  const max = Math.max(1, ...buckets.map((b) => STATUSES.reduce((n, s) => n + b[s], 0)));
  const w = 24;
  const h = 120;
  const total = (s: (typeof STATUSES)[number]) => buckets.reduce((n, b) => n + b[s], 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${HOURS * w} ${h + 18}`} role="img" aria-label={`Deliveries per hour: ${STATUSES.map((s) => `${total(s)} ${s}`).join(', ')}`}>
        {buckets.map((b, i) => {
          let y = h;
          return STATUSES.map((s) => {
            const bar = (b[s] / max) * (h - 4);
            y -= bar;
            return b[s] ? (
              <rect key={`${i}-${s}`} class={`bar ${s.toLowerCase()}`} x={i * w + 3} y={y} width={w - 6} height={bar}>
                <title>
                  {new Date(start + i * 3_600_000).toISOString().slice(11, 16)} UTC: {b[s]} {s}
                </title>
              </rect>
            ) : null;
          });
        })}
        {[0, 6, 12, 18].map((i) => (
          <text key={i} x={i * w + 2} y={h + 14} class="axis">
            {new Date(start + i * 3_600_000).toISOString().slice(11, 16)}
          </text>
        ))}
      </svg>
      <figcaption>
        {STATUSES.map((s) => (
          <span key={s} class={`legend ${s.toLowerCase()}`}>
            {s}: {total(s)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
