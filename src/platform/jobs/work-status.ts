// What the worker side of a process reports about itself, for /health/ready and /metrics: heartbeats of
// its loops (a loop that stops ticking is stuck or dead) and backlog readers (how much work waits, and
// for how long) that the surfaces register.
export interface Backlog {
  /** Items waiting now (counted up to a bound, so a huge backlog stays cheap to read). */
  count: number;
  /** Age in seconds of the oldest waiting item; 0 when none waits. */
  oldestAgeSeconds: number;
}

export type BacklogReader = () => Promise<Record<string, Backlog>>;

export interface Heartbeat {
  name: string;
  /** Since the last beat (or since it was expected, before the first). */
  silentMs: number;
  alive: boolean;
}

export class WorkStatus {
  readonly #heartbeats = new Map<string, { maxSilenceMs: number; last: number }>();
  readonly #backlogs: BacklogReader[] = [];

  /** A loop that must beat at least every maxSilenceMs while it runs. */
  expectHeartbeat(name: string, maxSilenceMs: number): void {
    this.#heartbeats.set(name, { maxSilenceMs, last: Date.now() });
  }

  beat(name: string): void {
    const h = this.#heartbeats.get(name);
    if (h) h.last = Date.now();
  }

  /** The loop stopped on purpose (shutdown): it is no longer reported. */
  forget(name: string): void {
    this.#heartbeats.delete(name);
  }

  heartbeats(now = Date.now()): Heartbeat[] {
    return [...this.#heartbeats].map(([name, h]) => ({ name, silentMs: now - h.last, alive: now - h.last <= h.maxSilenceMs }));
  }

  addBacklog(read: BacklogReader): void {
    this.#backlogs.push(read);
  }

  async backlogs(): Promise<Record<string, Backlog>> {
    const parts = await Promise.all(this.#backlogs.map((read) => read()));
    return Object.assign({}, ...parts);
  }
}
