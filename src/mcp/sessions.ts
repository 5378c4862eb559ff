// MCP sessions held by this process (Mcp-Session-Id): each a server and its Streamable HTTP transport,
// owned by one grant (an OAuth authorization or a personal token) of one user. Bounded in number per
// process and per user; a session unused for ATRIUM_MCP_SESSION_IDLE is closed.
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import { SessionEventStore } from './event-store.ts';
import type { McpCaller } from './tokens.ts';

/**
 * The SDK's server and transport, loaded with the first session: ~9 MB of heap that a process serving no MCP
 * client would otherwise carry (and mark on every full garbage collection).
 */
const protocol = () =>
  Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./server.ts')]).then(([transport, server]) => ({
    StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport,
    createMcpServer: server.createMcpServer,
  }));

export interface Session {
  id: string;
  owner: string;
  userKey: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

/** A user's sessions at most: a tenth of the process's, and never more than this. */
const MAX_SESSIONS_PER_USER = 32;

export const ownerOf = (c: McpCaller): string => `${c.principal.tenantId}:${c.principal.userId}:${c.grantId}`;
const userKeyOf = (c: McpCaller): string => `${c.principal.tenantId}:${c.principal.userId}`;

export class Sessions {
  readonly #ctx: AppContext;
  readonly #sessions = new Map<string, Session>();
  /** Sessions being initialised (counted against the limits before their id is known). */
  #pending = 0;
  readonly #sweep: NodeJS.Timeout;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#sweep = setInterval(() => this.sweepIdle(), Math.min(60_000, ctx.config.mcpSessionIdleMs)).unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  get(id: string, caller: McpCaller): Session | undefined {
    const s = this.#sessions.get(id);
    // Another user's (or another grant's) session id is answered as an unknown one.
    if (!s || s.owner !== ownerOf(caller)) return undefined;
    s.lastUsed = Date.now();
    return s;
  }

  /** A new session's server and transport; registered once the SDK has answered initialize with its id. */
  async open(caller: McpCaller): Promise<{ transport: StreamableHTTPServerTransport; discardUnlessOpened: () => Promise<void> }> {
    const { StreamableHTTPServerTransport, createMcpServer } = await protocol();
    const max = this.#ctx.config.mcpMaxSessions;
    if (this.#sessions.size + this.#pending >= max) {
      this.sweepIdle();
      if (this.#sessions.size + this.#pending >= max)
        throw new HttpProblem(503, 'This server holds as many MCP sessions as it may; retry later.', { headers: { 'retry-after': '30' } });
    }
    const userKey = userKeyOf(caller);
    let mine = 0;
    for (const s of this.#sessions.values()) if (s.userKey === userKey) mine++;
    const perUser = Math.max(1, Math.min(MAX_SESSIONS_PER_USER, Math.floor(max / 10)));
    if (mine >= perUser) this.#closeOldestOf(userKey);
    this.#pending++;
    let settled = false;
    const settle = () => {
      if (!settled) this.#pending--;
      settled = true;
    };
    const server = createMcpServer(this.#ctx);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new SessionEventStore(),
      onsessioninitialized: (id) => {
        settle();
        this.#sessions.set(id, { id, owner: ownerOf(caller), userKey, server, transport, lastUsed: Date.now() });
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    transport.onclose = () => {
      settle();
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    // An initialize the SDK refused opened no session: its server goes, and it no longer counts.
    const discardUnlessOpened = async () => {
      if (transport.sessionId) return;
      settle();
      await server.close().catch(() => {});
    };
    return { transport, discardUnlessOpened };
  }

  #closeOldestOf(userKey: string): void {
    let oldest: Session | undefined;
    for (const s of this.#sessions.values()) if (s.userKey === userKey && (!oldest || s.lastUsed < oldest.lastUsed)) oldest = s;
    if (oldest) this.#close(oldest);
  }

  #close(s: Session): void {
    this.#sessions.delete(s.id);
    s.server.close().catch(() => {});
  }

  sweepIdle(now = Date.now()): void {
    for (const s of this.#sessions.values()) if (now - s.lastUsed > this.#ctx.config.mcpSessionIdleMs) this.#close(s);
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweep);
    await Promise.all([...this.#sessions.values()].map((s) => s.server.close().catch(() => {})));
    this.#sessions.clear();
  }
}
