// Progress of a long table load on stderr: rows so far, rate and ETA, at most once a second, and only for
// a table that has been loading for a second already (small tables print nothing but their summary line).
import type { LoadProgress } from '../demo/demo-data.ts';

export interface ProgressOutput {
  write: (text: string) => void;
  /** A terminal: the progress line is rewritten in place; otherwise each report is a line of its own. */
  tty: boolean;
}

export interface ProgressReporter {
  progress: (p: LoadProgress) => void;
  /** A log line: clears a progress line still standing on a terminal first. */
  log: (line: string) => void;
}

export function progressReporter(out: ProgressOutput, opts: { intervalMs?: number; now?: () => number } = {}): ProgressReporter {
  const intervalMs = opts.intervalMs ?? 1000;
  const now = opts.now ?? Date.now;
  let table = '';
  let started = 0;
  let lastShown = 0;
  let standing = false;
  const clear = () => {
    if (standing) out.write('\r\x1b[2K');
    standing = false;
  };
  return {
    progress(p) {
      const t = now();
      if (p.table !== table) {
        table = p.table;
        started = t;
        lastShown = t;
        return;
      }
      if (t - lastShown < intervalMs) return;
      lastShown = t;
      const line = formatProgress(p, t - started);
      if (out.tty) {
        out.write(`\r\x1b[2K${line}`);
        standing = true;
      } else out.write(`${line}\n`);
    },
    log(line) {
      clear();
      out.write(`${line}\n`);
    },
  };
}

/** `timesheets: 412,000 rows, 98,500 rows/s, 38 %, ETA 7 s` */
export function formatProgress(p: LoadProgress, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (p.rows * 1000) / elapsedMs : 0;
  const fraction = Math.min(Math.max(p.fraction, 0), 1);
  // The rows still to come at the rate so far; with no share reached yet there is nothing to extrapolate from.
  const eta = fraction > 0 && rate > 0 ? Math.max(0, Math.round((p.rows / fraction - p.rows) / rate)) : null;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return `${p.table}: ${n(p.rows)} rows, ${n(rate)} rows/s, ${Math.floor(fraction * 100)} %, ETA ${eta === null ? '?' : formatSeconds(eta)}`;
}

function formatSeconds(s: number): string {
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
