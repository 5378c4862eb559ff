// MCP benchmark (issue 37). 1) A named-query tool call (tools/call de_timesheets over Streamable HTTP,
// in a session, with a personal access token) against the same page by POST dynamic-execute over HTTP
// (app headers and X-AppUser, the same user), on a demo tenant: sequential calls alternating in rounds,
// median latency of each and their ratio (goal <= 1.2x), both answers checked to hold the same rows.
// 2) 100 MCP sessions held at once by one API process (each initialized, with its GET stream open, one
// tool call made): the process's RSS before and after, per session.
// Run: npm run bench -- mcp   (or: npx node bench/mcp.ts)   BENCH_CALLS, BENCH_ROUNDS, BENCH_SESSIONS, BENCH_SCALE
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { benchDatabase, benchEnv, fmt, median, runCli, SERVER_MEMORY_ENV, startServerProcess } from './lib.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const SCALE = process.env.BENCH_SCALE ?? '1';
const ACCEPT = 'application/json, text/event-stream';

const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/** The JSON-RPC answer inside an SSE (or JSON) body. */
function answerOf(text: string): any {
  const line = text.split('\n').find((l) => l.startsWith('data: {'));
  return JSON.parse(line ? line.slice(6) : text);
}

const db = await benchDatabase();
try {
  const env = benchEnv(db.url, { ...SERVER_MEMORY_ENV, ATRIUM_MCP_RATE_LIMIT_PER_MINUTE: '0' });
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--demo', '--scale', SCALE, '--json'], env));
  const server = await startServerProcess(env);
  try {
    const apiHeaders = {
      'content-type': 'application/json',
      'x-apptenant': creds.tenantId,
      'x-appid': creds.appId,
      'x-appsecret': creds.appSecret,
      'x-appuser': creds.userId,
    };
    const tokenFor = (userId: string) =>
      fetch(`${server.baseUrl}/api/v3/mcp/personal-access-tokens`, {
        method: 'POST',
        headers: apiHeaders,
        body: JSON.stringify({ Name: 'bench', UserId: userId }),
      }).then((r) => r.json() as Promise<{ Token: string }>);
    const headersOf = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT });
    const mcpHeaders = headersOf((await tokenFor(creds.userId)).Token);
    // A user holds at most 32 sessions (decision 0049): the sessions are spread over users of 25 each.
    const userHeaders = [mcpHeaders];
    for (let i = 1; i < Math.ceil(SESSIONS / 25); i++) {
      const user = JSON.parse(
        await runCli(['users', 'create', '--tenant', creds.tenantId, '--username', `bench${i}`, '--role', 'Administrator', '--json'], env),
      );
      userHeaders.push(headersOf((await tokenFor(user.userId)).Token));
    }
    const sessionHeaders = new Map<string, Record<string, string>>();

    const openSession = async (headers = mcpHeaders): Promise<string> => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
        }),
      });
      await res.text();
      const id = res.headers.get('mcp-session-id');
      if (!id) throw new Error(`initialize: ${res.status}`);
      sessionHeaders.set(id, { ...headers, 'mcp-session-id': id });
      await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': id },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      }).then((r) => r.text());
      return id;
    };

    const queryBuilder = { filters: ['Hours', '>', 0], orderBy: [{ field: 'Day', direction: 'desc' }], take: 100 };
    let rpcId = 1;
    const toolCall = async (session: string) => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: sessionHeaders.get(session),
        body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name: 'de_timesheets', arguments: queryBuilder } }),
      });
      const answer = answerOf(await res.text());
      if (answer.error || answer.result?.isError) throw new Error(`tools/call: ${JSON.stringify(answer).slice(0, 300)}`);
      return answer.result.structuredContent.rows as unknown[];
    };
    const dynamicExecute = async () => {
      const res = await fetch(`${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
        method: 'POST',
        headers: apiHeaders,
        body: JSON.stringify({ queryBuilder }),
      });
      if (!res.ok) throw new Error(`dynamic-execute: ${res.status}`);
      return ((await res.json()) as { data: unknown[] }).data;
    };

    // 1) Latency, sequential, alternating rounds after a warm-up.
    const session = await openSession();
    const viaTool = await toolCall(session);
    const viaApi = await dynamicExecute();
    if (JSON.stringify(viaTool) !== JSON.stringify(viaApi) || viaTool.length === 0) throw new Error('the tool and dynamic-execute answered different rows');
    for (let i = 0; i < 20; i++) await Promise.all([toolCall(session), dynamicExecute()]);
    const tool: number[] = [];
    const api: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [times, call] of [
        [api, dynamicExecute],
        [tool, () => toolCall(session)],
      ] as const) {
        for (let i = 0; i < CALLS; i++) {
          const t0 = performance.now();
          await call();
          times.push(performance.now() - t0);
        }
      }
    }
    const ratio = median(tool) / median(api);
    console.log(`machine: ${os.cpus().length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB; demo tenant scale ${SCALE}; DE-TimeSheets, 100 rows a call`);
    console.log(`dynamic-execute: median ${fmt(median(api), 2)} ms over ${api.length} calls`);
    console.log(`MCP tools/call:  median ${fmt(median(tool), 2)} ms over ${tool.length} calls`);
    console.log(`ratio tool/dynamic-execute: ${fmt(ratio, 2)}x (goal <= 1.2x)`);

    // 2) Sessions held at once: RSS before and after opening them (each with its GET stream and one call).
    const pid = server.child.pid as number;
    await new Promise((r) => setTimeout(r, 1000));
    const before = rssKb(pid);
    const streams: AbortController[] = [];
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const id = await openSession(userHeaders[Math.floor(i / 25)]);
      ids.push(id);
      const controller = new AbortController();
      streams.push(controller);
      const res = await fetch(`${server.baseUrl}/mcp`, { headers: sessionHeaders.get(id), signal: controller.signal });
      if (res.status !== 200) throw new Error(`GET stream: ${res.status}`);
      res.body
        ?.getReader()
        .read()
        .catch(() => {});
    }
    await Promise.all(ids.map((id) => toolCall(id)));
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssKb(pid);
    const perSession = (after - before) / SESSIONS;
    for (const c of streams) c.abort();
    await Promise.all(ids.map((id) => fetch(`${server.baseUrl}/mcp`, { method: 'DELETE', headers: sessionHeaders.get(id) }).then((r) => r.text())));

    console.log(`${SESSIONS} sessions held: RSS ${fmt(before / 1024, 1)} MB -> ${fmt(after / 1024, 1)} MB, ${fmt(perSession, 0)} KB per session`);
  } finally {
    await server.stop();
  }
} finally {
  await db.stop();
}
