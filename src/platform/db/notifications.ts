// One LISTEN connection per process for PostgreSQL notifications (decision 0027): the webhook dispatcher
// wakes on atrium_events, the auth caches drop on atrium_auth. A notification only says "look again":
// whoever listens must stay correct without it (the dispatcher polls, the caches expire), so a lost
// connection costs latency, not correctness. After a reconnect every handler runs once, since
// notifications sent while the connection was down are gone.
import pg from 'pg';

const CHANNEL_RE = /^[a-z_][a-z0-9_]*$/;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

export type NotificationHandler = () => void;

export class Notifications {
  readonly #connectionString: string;
  readonly #handlers = new Map<string, Set<NotificationHandler>>();
  #client: pg.Client | null = null;
  #connecting: Promise<void> | null = null;
  #retryMs = RECONNECT_MIN_MS;
  #retryTimer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(connectionString: string) {
    this.#connectionString = connectionString;
  }

  /** Calls fn on each notification on the channel (and once after a reconnect); answers a function that stops it. */
  async listen(channel: string, fn: NotificationHandler): Promise<() => void> {
    if (!CHANNEL_RE.test(channel)) throw new Error(`invalid channel name ${channel}`);
    let set = this.#handlers.get(channel);
    const fresh = !set;
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
    }
    set.add(fn);
    // Unreachable now: the reconnect loop keeps trying, and the listener's own fallback (polling, expiry) holds meanwhile.
    if (this.#client && fresh) await this.#client.query(`listen ${channel}`).catch(() => {});
    else if (!this.#client) await this.#connect().catch(() => {});
    return () => set.delete(fn);
  }

  /** Whether the LISTEN connection is up (a test or readiness may ask). */
  get connected(): boolean {
    return this.#client !== null;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<void> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client({ connectionString: this.#connectionString, application_name: 'atrium-listen' });
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client.on('notification', (msg) => this.#dispatch(msg.channel));
    try {
      await client.connect();
      for (const channel of this.#handlers.keys()) await client.query(`listen ${channel}`);
    } catch (err) {
      client.end().catch(() => {});
      this.#scheduleReconnect();
      throw err;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    const reconnected = this.#retryMs > RECONNECT_MIN_MS;
    this.#client = client;
    this.#retryMs = RECONNECT_MIN_MS;
    if (reconnected) for (const channel of this.#handlers.keys()) this.#dispatch(channel);
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    client.end().catch(() => {});
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retryTimer) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(RECONNECT_MAX_MS, this.#retryMs * 2);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#connect().catch(() => {});
    }, delay);
    this.#retryTimer.unref();
  }

  #dispatch(channel: string): void {
    for (const fn of this.#handlers.get(channel) ?? []) {
      try {
        fn();
      } catch {
        // A handler's failure is its own; the others still run.
      }
    }
  }
}
