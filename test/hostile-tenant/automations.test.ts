// Hostile tenants against automations (issue 26, items 3–6, 8–10, 12, 14, 15), through HTTP against a
// server in a process of its own (default limits, loopback only). Each case asserts that the process is
// alive afterwards, that /health/live answered within 1 s throughout (probed concurrently), that the
// request got a 4xx or the run ended Failed with a reason, that no secret appears in any answer, run
// record or log line (the server's stdout and stderr are captured and searched), and that the server's
// RSS stayed under RSS_BOUND_MB.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, createTestDatabase } from '../helpers.ts';

/** The server process's resident memory stays under this in every case (its run threads included). */
const RSS_BOUND_MB = 1200;
const SECRET_KEY = randomBytes(32).toString('hex');
const FTP_PASSWORD = 'Hr-Feed-Pa55word-7f3c91';
const API_KEY_SECRET = 'sk-live-91d2c6a0e4b7';

interface Proc {
  child: ChildProcess;
  url: string;
  log: string[];
}

const children = new Set<ChildProcess>();
/** Every server process started, with its captured output. */
const procs: Proc[] = [];
let dir: string;
let db: { connectionString: string; drop: () => Promise<void> };

function spawnAtrium(env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../../src/main.ts'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: db.connectionString,
      ATRIUM_SECRET_KEY: SECRET_KEY,
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      DATA_DIR: path.join(dir, `data-${children.size}`),
      ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_AUTOMATION_RUN_TIMEOUT: '30s',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'text',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const proc: Proc = { child, url: '', log: [] };
  procs.push(proc);
  child.stdout?.setEncoding('utf8').on('data', (d: string) => proc.log.push(d));
  return new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      proc.log.push(d);
      const listening = /Atrium listening on (http:\/\/\S+)/.exec(proc.log.join(''));
      if (listening && !proc.url) {
        proc.url = listening[1];
        resolve(proc);
      }
    });
    child.on('exit', (code) => reject(new Error(`atrium exited (${code}): ${proc.log.join('')}`)));
  });
}

const rssMb = (proc: Proc): number => {
  const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

/**
 * Runs `work` while /health/live is probed every 100 ms (each probe may take at most 1 s) and the RSS read;
 * afterwards the process must be alive, every probe answered 200 within 1 s, and the RSS under the bound.
 */
async function guarded<T>(proc: Proc, label: string, work: () => Promise<T>): Promise<T> {
  const began = Date.now();
  let stop = false;
  let slowest = 0;
  const failures: string[] = [];
  let probes = 0;
  let maxRss = 0;
  const probing = (async () => {
    for (let i = 0; i < 100_000 && !stop; i++) {
      const t0 = Date.now();
      try {
        const res = await fetch(`${proc.url}/health/live`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        slowest = Math.max(slowest, Date.now() - t0);
        if (res.status !== 200) failures.push(`${res.status} after ${Date.now() - t0} ms`);
      } catch (err) {
        failures.push(`${(err as Error).name} after ${Date.now() - t0} ms`);
      }
      probes++;
      maxRss = Math.max(maxRss, rssMb(proc));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    return await work();
  } finally {
    stop = true;
    await probing;
    console.log(`# ${label}: ${Date.now() - began} ms, ${probes} probes of /health/live (slowest ${slowest} ms), peak RSS ${maxRss.toFixed(0)} MB`);
    assert.equal(proc.child.exitCode, null, `${label}: the server process is alive; its last output: ${proc.log.join('').slice(-3000)}`);
    assert.ok(probes > 0, `${label}: /health/live was probed`);
    assert.deepEqual(failures, [], `${label}: /health/live answered within 1 s in all ${probes} probes`);
    assert.ok(maxRss < RSS_BOUND_MB, `${label}: RSS ${maxRss.toFixed(0)} MB stayed under ${RSS_BOUND_MB} MB`);
  }
}

async function call(proc: Proc, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${proc.url}${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, text };
}

/**
 * A large JSON body announced by its Content-Length, of which only the first 64 KB is sent until the server
 * answers: a body refused for its size is refused before it is read (and no write races the server's close).
 */
function postLarge(proc: Proc, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${proc.url}${url}`,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          text += d;
        });
        const done = () => {
          resolve({ status: res.statusCode ?? 0, text });
          req.destroy();
        };
        res.on('end', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('no answer within 10 s to a body announced larger than the limit'));
    }, 10_000);
    req.on('close', () => clearTimeout(timer));
    req.on('error', () => {});
    req.write(body.slice(0, 64 * 1024));
  });
}

const start = (next: string) => ({ name: 'Start', type: 'Start', next });
const done = (body: unknown = null) => ({ name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body } });

describe('hostile tenants: automations', () => {
  let server: Proc;
  let h: Record<string, string>;
  let tenant: { tenantId: string; appId: string; appSecret: string };
  let receiver: Server;
  let receiverUrl: string;
  const received: { headers: Record<string, unknown>; body: string }[] = [];
  const answers: string[] = [];

  const create = async (definition: Record<string, unknown>) => {
    const res = await call(server, 'POST', '/api/v3/automations', h, definition);
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const runNow = async (id: string, input: unknown = null) => {
    const res = await call(server, 'POST', `/api/v3/automations/${id}/run`, h, { input });
    assert.equal(res.status, 200, res.text.slice(0, 500));
    answers.push(res.text);
    return res.body;
  };
  const failedWith = (run: any, reason: RegExp) => {
    assert.equal(run.status, 'Failed', JSON.stringify(run).slice(0, 500));
    assert.match(run.error, reason);
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-hostile-'));
    db = await createTestDatabase();
    // 64 MB for /big, 12 MB for /twelve; any other request is recorded and answered {ok}.
    receiver = createServer((req, res) => {
      if (req.url === '/big' || req.url === '/twelve') {
        const size = req.url === '/big' ? 64 * 1024 * 1024 : 12 * 1024 * 1024;
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(size) });
        const chunk = Buffer.alloc(1024 * 1024, 'x');
        for (let i = 0; i < size / chunk.length; i++) res.write(chunk);
        res.end();
        return;
      }
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    server = await spawnAtrium({});
    const res = await call(server, 'POST', '/admin/tenants', { authorization: `Bearer ${ADMIN_TOKEN}` }, { name: 'Hostile Agency', demoData: false });
    assert.equal(res.status, 201, res.text);
    tenant = res.body;
    h = appHeaders(tenant);
    const key = await call(server, 'PUT', '/api/configuration-keys/SFTP-HRFEED', h, {
      ftpHostIp: 'sftp.example.invalid',
      ftpUsername: 'feed',
      ftpPassword: FTP_PASSWORD,
      apiKeySecret: API_KEY_SECRET,
    });
    assert.ok(key.status === 200 || key.status === 201, key.text);
  });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    receiver?.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test('item 3: outputs past the limit, a run past its total budget, growing pipes and references end Failed with the reason', async () => {
    await guarded(server, 'item 3', async () => {
      // One output of 64 MB (the limit is 16 MiB): refused while it is read.
      const big = await create({
        name: 'Big',
        actions: [start('Get'), { name: 'Get', type: 'Rest', method: 'GET', url: `${receiverUrl}/big`, next: 'Done' }, done()],
      });
      failedWith(await runNow(big), /16777216|limit/);

      // Twelve outputs of 12 MB, each under the output limit: the run's total budget ends it.
      const twelve = [start('Get1')] as Record<string, unknown>[];
      for (let i = 1; i <= 12; i++)
        twelve.push({ name: `Get${i}`, type: 'Rest', method: 'GET', url: `${receiverUrl}/twelve`, next: i === 12 ? 'Done' : `Get${i + 1}` });
      twelve.push(done());
      const r12 = await runNow(await create({ name: 'Twelve', actions: twelve }));
      failedWith(r12, /ATRIUM_AUTOMATION_MAX_RUN_BYTES/);

      const four = 'D'.repeat(4 * 1024 * 1024);
      // Split('') of 4 MB into 4 million one-letter strings, then Join: refused before the list is made.
      const split = await create({
        name: 'Split',
        actions: [
          start('D'),
          { name: 'D', type: 'SetParameter', value: "{{['#HttpRequest']$.Body}}", next: 'Rejoin' },
          { name: 'Rejoin', type: 'SetParameter', value: "{{['D'] | Split('') | Join('')}}", next: 'Done' },
          done(),
        ],
      });
      failedWith(await runNow(split, four), /Split into .* pieces would pass the output limit/);

      // SetParameter doubling a string.
      const doubling = [start('P0'), { name: 'P0', type: 'SetParameter', value: "{{['#HttpRequest']$.Body}}", next: 'P1' }] as Record<string, unknown>[];
      for (let i = 1; i <= 8; i++)
        doubling.push({ name: `P${i}`, type: 'SetParameter', value: `{{['P${i - 1}']}}{{['P${i - 1}']}}`, next: i === 8 ? 'Done' : `P${i + 1}` });
      doubling.push(done());
      failedWith(await runNow(await create({ name: 'Doubling', actions: doubling }), four), /would pass the output limit/);

      // A Map of 200 references to a 4 MB value.
      const refs = await create({
        name: 'Refs',
        actions: [
          start('D'),
          { name: 'D', type: 'SetParameter', value: "{{['#HttpRequest']$.Body}}", next: 'Many' },
          { name: 'Many', type: 'Map', source: Array.from({ length: 200 }, (_, i) => i), body: "{{['D']}}", next: 'Done' },
          done(),
        ],
      });
      failedWith(await runNow(refs, four), /output limit/);
    });
  });

  test('item 4: huge definitions, many large rejected ones and deep expressions answer 400', async () => {
    await guarded(server, 'item 4', async () => {
      const many = await call(server, 'POST', '/api/v3/automations', h, `{"name":"Many","actions":[${Array(100_000).fill('{}').join(',')}]}`);
      assert.equal(many.status, 400, many.text.slice(0, 300));
      assert.ok(many.text.length < 10_000, `a short answer (${many.text.length} characters)`);
      assert.match(many.text, /ATRIUM_AUTOMATION_MAX_ACTIONS/);

      for (let i = 0; i < 8; i++) {
        const nine = `{{['${String.fromCharCode(97 + i)}'] | Trim}}`.padEnd(9 * 1024 * 1024, String.fromCharCode(65 + i));
        const res = await postLarge(server, '/api/v3/automations', h, JSON.stringify({ name: `Nine${i}`, actions: [start('Done'), done(nine)] }));
        // 413: past twice the definition limit, the body is refused before it is read.
        assert.equal(res.status, 413, res.text.slice(0, 300));
        assert.ok(res.text.length < 10_000);
      }

      // Just under the definition limit: read, measured and refused with 400.
      const large = await call(server, 'POST', '/api/v3/automations', h, { name: 'Large', actions: [start('Done'), done('L'.repeat(1_500_000))] });
      assert.equal(large.status, 400, large.text.slice(0, 300));
      assert.match(large.text, /ATRIUM_AUTOMATION_MAX_DEFINITION_BYTES/);

      const deep = `{{'a'${' | Trim'.repeat(10_000)}}}`;
      const res = await call(server, 'POST', '/api/v3/automations', h, { name: 'Deep', actions: [start('Done'), done(deep)] });
      assert.equal(res.status, 400, res.text.slice(0, 300));
      assert.match(res.text, /at most 100 pipes/);
    });
  });

  test('item 5: a backtracking pattern runs in linear time; a pattern RE2 cannot run is refused', async () => {
    await guarded(server, 'item 5', async () => {
      const id = await create({
        name: 'ReDoS',
        requiresAuthentication: false,
        actions: [
          start('Check'),
          {
            name: 'Check',
            type: 'ValidateJson',
            body: "{{['#HttpRequest']$.Body}}",
            schema: { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } },
            next: 'Done',
          },
          done('valid'),
        ],
      });
      const t0 = Date.now();
      const res = await call(server, 'POST', `/api/integration-workflows/${id}/execute`, {}, { name: `${'a'.repeat(33)}!` });
      assert.ok(Date.now() - t0 < 2000, `answered in ${Date.now() - t0} ms`);
      assert.equal(res.status, 500);
      assert.match(res.text, /does not match the schema/);
      const ok = await call(server, 'POST', `/api/integration-workflows/${id}/execute`, {}, { name: 'a'.repeat(100_000) });
      assert.equal(ok.status, 200, ok.text);

      const back = await create({
        name: 'Backreference',
        actions: [start('Check'), { name: 'Check', type: 'ValidateJson', body: 'x', schema: { type: 'string', pattern: '(a)\\1' }, next: 'Done' }, done()],
      });
      failedWith(await runNow(back), /not a pattern this server runs/);
    });
  });

  test('item 6: a Liquid loop of 3000 × 3000 stops at the render limit well before 5 s', async () => {
    await guarded(server, 'item 6', async () => {
      const id = await create({
        name: 'Liquid',
        actions: [
          start('T'),
          { name: 'T', type: 'ApplyTemplate', template: '{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}', next: 'Done' },
          done(),
        ],
      });
      const t0 = Date.now();
      const run = await runNow(id);
      failedWith(run, /template: .*(limit|exceeded)/i);
      assert.ok(Date.now() - t0 < 4000, `ended in ${Date.now() - t0} ms`);
    });
  });

  test('items 9 and 12: the caller credentials never reach the run, its result or its record', async () => {
    await guarded(server, 'item 9', async () => {
      const id = await create({
        name: 'Echo',
        actions: [
          start('Forward'),
          { name: 'Forward', type: 'Rest', method: 'POST', url: `${receiverUrl}/forward`, body: "{{['#HttpRequest']$.Headers}}", next: 'Done' },
          done({ headers: "{{['#HttpRequest']$.Headers}}", auth: "{{['#HttpRequest']$.Headers.authorization}}" }),
        ],
      });
      const token = await call(server, 'POST', '/api/auth/token', h);
      const bearer = typeof token.body?.accessToken === 'string' ? token.body.accessToken : 'no-token-issued';
      const res = await call(server, 'POST', `/api/integration-workflows/${id}/execute`, {
        ...h,
        authorization: `Bearer ${bearer}`,
        cookie: 'session=cookie-secret-5521',
        'x-accesstoken': bearer,
      });
      assert.equal(res.status, 200, res.text);
      answers.push(res.text);
      // #HttpRequest's header values are lists, as the platform hands them (issue 29).
      assert.deepEqual(res.body.auth, ['********']);
      assert.deepEqual(res.body.headers['x-appsecret'], ['********']);
      const runs = await call(server, 'GET', `/api/v3/automations/${id}/runs`, h);
      const full = await call(server, 'GET', `/api/v3/automations/${id}/runs/${runs.body[0].id}`, h);
      answers.push(runs.text, full.text);
      for (const text of [res.text, runs.text, full.text, received.at(-1)?.body ?? '']) {
        assert.ok(!text.includes(tenant.appSecret), 'no app secret');
        assert.ok(!text.includes(bearer), 'no bearer token');
        assert.ok(!text.includes('cookie-secret-5521'), 'no cookie');
      }
    });
  });

  test('items 10 and 12: configuration-key secrets work in credential fields and read ******** everywhere else, derived values too', async () => {
    await guarded(server, 'item 10', async () => {
      const id = await create({
        name: 'Secrets',
        requiresAuthentication: false,
        actions: [
          start('Cfg'),
          { name: 'Cfg', type: 'ConfigurationKeys', value: 'SFTP-HRFEED', next: 'Call' },
          {
            name: 'Call',
            type: 'Rest',
            method: 'POST',
            url: `${receiverUrl}/with-key`,
            requestHeaders: [
              { name: 'X-Api-Key', value: "{{['Cfg']$.apiKeySecret}}" },
              { name: 'X-Plain', value: "{{['Cfg']$.apiKeySecret}}" },
            ],
            body: { leaked: "{{['Cfg']$.ftpPassword}}", b64: "{{['Cfg']$.ftpPassword | ToBase64}}" },
            next: 'Derive',
          },
          { name: 'Derive', type: 'SetParameter', value: "user:{{['Cfg']$.ftpPassword | ToUpperCase | ToBase64}}", next: 'Done' },
          done({
            whole: "{{['Cfg']}}",
            password: "{{['Cfg']$.ftpPassword}}",
            base64: "{{['Cfg']$.ftpPassword | ToBase64}}",
            split: "{{['Cfg']$.ftpPassword | Split('-') | Join('+')}}",
            derived: "{{['Derive']}}",
            text: "pw={{['Cfg']$.ftpPassword}}",
          }),
        ],
      });
      const res = await call(server, 'POST', `/api/integration-workflows/${id}/execute`, {});
      assert.equal(res.status, 200, res.text);
      answers.push(res.text);
      assert.equal(res.body.password, '********');
      assert.equal(res.body.base64, '********');
      assert.equal(res.body.split, '********');
      assert.equal(res.body.derived, '********');
      assert.equal(res.body.text, '********');
      assert.equal(res.body.whole.ftpPassword, '********');
      assert.equal(res.body.whole.ftpUsername, 'feed');
      // The credential header carried the clear value; a header not named for credentials and the body did not.
      const sent = received.find((r) => r.headers['x-api-key'] !== undefined);
      assert.equal(sent?.headers['x-api-key'], API_KEY_SECRET);
      assert.equal(sent?.headers['x-plain'], '********');
      assert.deepEqual(JSON.parse(sent?.body ?? '{}'), { leaked: '********', b64: '********' });
      const runs = await call(server, 'GET', `/api/v3/automations/${id}/runs`, h);
      const full = await call(server, 'GET', `/api/v3/automations/${id}/runs/${runs.body[0].id}`, h);
      answers.push(runs.text, full.text);
      assert.equal(full.body.status, 'Succeeded');
      assert.equal(full.body.result.body.password, '********');
    });
  });

  test('item 15: a sub-workflow that calls itself ends Failed with the nesting limit', async () => {
    await guarded(server, 'item 15', async () => {
      const id = await create({
        name: 'Recursion',
        actions: [start('Again'), { name: 'Again', type: 'ExecuteSubWorkflow', subWorkflow: 'Self', next: 'Done' }, done()],
        subWorkflows: [
          {
            name: 'Self',
            actions: [
              { name: 'S', type: 'Start', next: 'Inner' },
              { name: 'Inner', type: 'ExecuteSubWorkflow', subWorkflow: 'Self', next: 'R' },
              { name: 'R', type: 'Result' },
            ],
          },
        ],
      });
      failedWith(await runNow(id), /sub-workflows deep .*the limit is 32/);
    });
  });

  test('item 14: a run now is recorded Running before it starts, and ends recorded', async () => {
    await guarded(server, 'item 14', async () => {
      const id = await create({ name: 'Slow', actions: [start('Wait'), { name: 'Wait', type: 'Await', duration: '1500ms', next: 'Done' }, done()] });
      const running = runNow(id);
      let seen: any = null;
      for (let i = 0; i < 40 && !seen; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const runs = await call(server, 'GET', `/api/v3/automations/${id}/runs`, h);
        seen = runs.body.find((r: any) => r.status === 'Running') ?? null;
      }
      assert.ok(seen, 'the run is listed as Running while it runs');
      const finished = await running;
      assert.equal(finished.id, seen.id);
      assert.equal(finished.status, 'Succeeded');
    });
  });

  test('item 8 and item 14: a runaway past every bound is stopped in its thread (memory, CPU); stale Running runs are swept at start-up', async () => {
    // Another process on the same database, with the bounds that would have caught these opened wide, so
    // only the containment stands between the runs and the process.
    const pgc = new pg.Client({ connectionString: db.connectionString });
    await pgc.connect();
    let stale: string;
    try {
      const auto = await create({ name: 'Crashed', actions: [start('Done'), done()] });
      const { rows } = await pgc.query(
        `insert into automation_runs (tenant_id, automation_id, version, trigger, status, started_on_utc)
         values ($1, $2, 1, 'manual', 'Running', now() - interval '2 hours') returning id`,
        [tenant.tenantId, auto],
      );
      stale = rows[0].id;
    } finally {
      await pgc.end();
    }
    const wide = await spawnAtrium({
      ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES: String(1024 * 1024 * 1024),
      ATRIUM_AUTOMATION_MAX_RUN_BYTES: String(4 * 1024 * 1024 * 1024),
      ATRIUM_AUTOMATION_MEMORY_MB: '96',
      ATRIUM_AUTOMATION_CPU_STALL: '3s',
      ATRIUM_AUTOMATION_MAX_LOOP_ITERATIONS: '100000',
      ATRIUM_AUTOMATION_TEMPLATE_TIMEOUT: '60s',
    });
    await guarded(wide, 'item 8', async () => {
      // A loop keeping 200 new strings of 4 MB each: 800 MB against a 96 MB heap.
      const memory = await create({
        name: 'Memory',
        actions: [start('Each'), { name: 'Each', type: 'Loop', body: "{{['#HttpRequest']$.Body.items}}", subWorkflow: 'Grow', next: 'Done' }, done()],
        subWorkflows: [
          {
            name: 'Grow',
            actions: [
              { name: 'S', type: 'Start', next: 'R' },
              { name: 'R', type: 'Result', httpResponse: { body: "{{['#HttpRequest']$.Body.text}}{{['#Index']}}" } },
            ],
          },
        ],
      });
      const input = { text: 'M'.repeat(4 * 1024 * 1024), items: Array.from({ length: 200 }, (_, i) => i) };
      const res = await call(wide, 'POST', `/api/v3/automations/${memory}/run`, h, { input });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      failedWith(res.body, /more memory than its limit of 96 MB/);

      const cpu = await create({
        name: 'Cpu',
        actions: [
          start('T'),
          { name: 'T', type: 'ApplyTemplate', template: '{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}', next: 'Done' },
          done(),
        ],
      });
      const t0 = Date.now();
      const r2 = await call(wide, 'POST', `/api/v3/automations/${cpu}/run`, h, { input: null });
      failedWith(r2.body, /busy for more than 3000 ms/);
      assert.ok(Date.now() - t0 < 30_000, `stopped after ${Date.now() - t0} ms`);

      // The same server still runs automations afterwards (a fresh thread).
      const fine = await create({ name: 'Fine', actions: [start('Done'), done('ok')] });
      const r3 = await call(wide, 'POST', `/api/v3/automations/${fine}/run`, h, { input: null });
      assert.equal(r3.body.status, 'Succeeded', r3.text);

      let swept: any = null;
      for (let i = 0; i < 50 && swept?.status !== 'Failed'; i++) {
        const runs = await call(
          wide,
          'GET',
          `/api/v3/automations/${(await call(wide, 'GET', '/api/v3/automations', h)).body.find((a: any) => a.name === 'Crashed').id}/runs`,
          h,
        );
        swept = runs.body.find((r: any) => r.id === stale);
        if (swept?.status !== 'Failed') await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(swept?.status, 'Failed');
      assert.match(swept.error, /stopped before it finished/);
    });
  });

  test('no secret in any answer, run record or log line', async () => {
    assert.equal(procs.length, 2, 'both server processes ran');
    const everything = [...answers, ...procs.map((p) => p.log.join(''))].join('\n');
    for (const secret of [FTP_PASSWORD, Buffer.from(FTP_PASSWORD).toString('base64'), API_KEY_SECRET, tenant.appSecret, 'cookie-secret-5521'])
      assert.ok(!everything.includes(secret), `"${secret.slice(0, 6)}…" appears nowhere`);
    for (const p of procs) assert.match(p.log.join(''), /Atrium listening/, 'the log was captured');
  });
});
