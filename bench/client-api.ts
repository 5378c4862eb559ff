// Client API benchmark: POST /api/posts creating a job (Actions.Document Post) and moving it along its
// workflow (Actions.Transition Start) over HTTP (autocannon, 8 connections), against the same rows written
// by hand directly through pg on 8 connections: the job's number drawn from the tenant's JOB counter as the
// service draws it (decision 0068: one statement committed on its own, before the transaction, like nextval),
// then in one transaction the job (in its new stage), its folder, its two history rows, its Created and
// StageUpdated events and the post. Both sides are checked to leave the same rows per job and distinct
// numbers from the one counter. Alternating rounds, medians. Target: HTTP rate >= 80% of the direct rate (issue 32).
// The server runs as ATRIUM_ROLE=api: both sides leave their events in the outbox undispatched, so neither side's CPU
// figures include a worker dispatching the other side's events.
// BENCH_BASELINE_TREE=<checkout>: a second server from that tree (e.g. a worktree of main before a change) on the same
// database and tenant, its posts measured in the same rounds, alternating, and reported beside this tree's.
// Run: npm run bench -- client-api   (or: npx node bench/client-api.ts)
import { readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchDatabase, clientApiBenchServer, fmt, median } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);

const db = await benchDatabase();
try {
  const baselineTree = process.env.BENCH_BASELINE_TREE;
  const { creds, server, baseline, headers, call, client } = await clientApiBenchServer(db.url, { ATRIUM_ROLE: 'api' }, baselineTree);
  const servers = [{ name: 'this tree', server }, ...(baseline ? [{ name: `baseline (${baselineTree})`, server: baseline }] : [])];
  const project = await call('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Bench project', CompanyId: creds.companyId, ClientId: client.id },
  });
  const [wf] = await call('GET', '/api/v3/document-types/Deliverable/workflows?expandTransitions=true');
  const start = wf.Transitions.find((t: any) => t.Name === 'Start');

  let n = 0;
  const postBody = (i: number) => ({
    DocumentId: '00000000-0000-0000-0000-000000000000',
    DocumentTypeName: 'Job',
    Text: `Job ${i} opened`,
    Actions: {
      Transition: { StatusId: start.ToStageId, TransitionId: start.Id },
      Document: { DocumentType: 'Job', DocumentActionType: 'Post', Job: { Name: `Bench job ${i}`, ProjectId: project.Id, DepartmentId: creds.departmentId } },
    },
  });
  // CPU seconds a server process has used (utime + stime), to show what one post costs it.
  const serverCpu = (k: number) => {
    const fields = readFileSync(`/proc/${servers[k].server.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  const cpuPerPost: number[][] = servers.map(() => []);
  // CPU seconds of this database's PostgreSQL backends (the server's pools and the direct clients alike), to show
  // what a post costs PostgreSQL on each side. Backends that come and go within a round are not counted.
  const procCpu = (pid: number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };
  const watcher = new pg.Client({ connectionString: db.url });
  await watcher.connect();
  const backendsCpu = async () => {
    const { rows } = await watcher.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return new Map(rows.map((r) => [r.pid, procCpu(r.pid)]));
  };
  const pgCpuSince = async (before: Map<number, number>) => {
    let sum = 0;
    for (const [pid, cpu] of await backendsCpu()) if (before.has(pid)) sum += cpu - (before.get(pid) ?? 0);
    return sum;
  };
  const pgCpuPerPost: { http: number[][]; direct: number[] } = { http: servers.map(() => []), direct: [] };
  const httpRound = async (k: number, seconds: number) => {
    const cpu0 = serverCpu(k);
    const pg0 = await backendsCpu();
    const r = await autocannon({
      url: `${servers[k].server.baseUrl}/api/posts`,
      connections: CONNECTIONS,
      duration: seconds,
      method: 'POST',
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(postBody(n++)) }) }],
    });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`HTTP round: ${r.non2xx} non-2xx, ${r.errors} errors`);
    cpuPerPost[k].push(((serverCpu(k) - cpu0) * 1000) / r.requests.total);
    pgCpuPerPost.http[k].push(((await pgCpuSince(pg0)) * 1000) / r.requests.total);
    return r.requests.total / seconds;
  };

  // The same rows by hand: ids and names looked up once, as a hand-written importer would.
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  const one = async (text: string, values: unknown[] = []) => (await owner.query(text, values)).rows[0];
  const dt = (await one(`select id from document_types where tenant_id = $1 and class_name = 'Deliverable'`, [creds.tenantId])).id;
  const workflowName = (await one('select name from workflows where id = $1', [wf.Id])).name;
  await owner.end();
  const t = creds.tenantId;
  const detailOf = (id: string, name: string, number: string) =>
    JSON.stringify({
      Id: id,
      Name: name,
      Number: number,
      ProjectId: project.Id,
      DepartmentId: creds.departmentId,
      PropertyTypes: { Name: 'String', Number: 'String', ProjectId: 'Guid', DepartmentId: 'Guid' },
    });
  const stageDetail = () =>
    JSON.stringify({
      WorkflowStageTransitionId: start.Id,
      WorkflowStageTransitionName: start.Name,
      WorkflowStageTransitionLocalizedName: start.Name,
      FromWorkflowStageId: start.FromStageId,
      FromWorkflowStageName: start.FromStage,
      FromWorkflowStageLocalizedName: start.FromStage,
      ToWorkflowStageId: start.ToStageId,
      ToWorkflowStageName: start.ToStage,
      ToWorkflowStageLocalizedName: start.ToStage,
      WorkflowId: wf.Id,
      WorkflowName: workflowName,
      DepartmentId: creds.departmentId,
    });
  const clients = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      return c;
    }),
  );
  const directRound = async (seconds: number) => {
    const pg0 = await backendsCpu();
    const until = Date.now() + seconds * 1000;
    let done = 0;
    await Promise.all(
      clients.map(async (c) => {
        while (Date.now() < until) {
          const i = n++;
          const name = `Direct job ${i}`;
          // The number: the tenant's JOB counter, past the highest JOB number in use (decision 0044), committed
          // on its own without waiting for its WAL flush, as the service's draw is.
          const { number } = (
            await c.query(
              `with n as (
                 insert into document_numbers as dn (tenant_id, prefix, last_value)
                 values ($1, 'JOB', (select coalesce(max(substring(number from '^JOB-([0-9]{1,18})$')::bigint), 0) + 1
                                       from jobs where tenant_id = $1 and number ~ '^JOB-([0-9]{1,18})$'))
                 on conflict (tenant_id, prefix) do update set last_value = greatest(dn.last_value + 1, excluded.last_value)
                 returning 'JOB-' || lpad(dn.last_value::text, 6, '0') as number)
               select number, set_config('synchronous_commit', 'off', true) from n`,
              [t],
            )
          ).rows[0];
          await c.query('begin');
          const job = (
            await c.query(
              `insert into jobs (tenant_id, project_id, department_id, workflow_id, stage_id, number, name, created_by_id, modified_by_id)
               values ($1, $2, $3, $4, $5, $6, $7, $8, $8) returning id, number`,
              [t, project.Id, creds.departmentId, wf.Id, start.ToStageId, number, name, creds.userId],
            )
          ).rows[0];
          await c.query(
            `with f as (insert into folders (tenant_id, name, document_type_id, document_id, created_by_id, modified_by_id) values ($1, $4, $2, $3, $5, $5))
             insert into document_history (tenant_id, document_type_id, document_id, version, start_date, end_date, user_id, action, stage_id)
             values ($1, $2, $3, 1, now(), now(), $5, 'Created', $6), ($1, $2, $3, 2, now(), null, $5, 'StageChanged', $7)`,
            [t, dt, job.id, job.number, creds.userId, start.FromStageId, start.ToStageId],
          );
          await c.query(
            `insert into events (tenant_id, action_type, document_type, document_id, detail, user_id) values
               ($1, 'Created', 'Skill.Module.BusinessObjects.Deliverable', $2, $3, $5), ($1, 'StageUpdated', 'Skill.Module.BusinessObjects.Deliverable', $2, $4, $5)`,
            [t, job.id, detailOf(job.id, name, job.number), stageDetail(), creds.userId],
          );
          await c.query(
            `insert into comments (tenant_id, document_type_id, document_id, text, is_visible_to_client, actions, created_by_id, modified_by_id)
             values ($1, $2, $3, $4, false, $5, $6, $6)`,
            [
              t,
              dt,
              job.id,
              `Job ${i} opened`,
              JSON.stringify({
                Document: { DocumentType: 'Job', DocumentActionType: 'Post', Id: job.id },
                Transition: { StatusId: start.ToStageId, TransitionId: start.Id },
              }),
              creds.userId,
            ],
          );
          await c.query('commit');
          done++;
        }
      }),
    );
    pgCpuPerPost.direct.push(((await pgCpuSince(pg0)) * 1000) / done);
    return done / seconds;
  };

  for (const k of servers.keys()) await httpRound(k, 2);
  await directRound(2);
  // The warm-up's CPU figures are not the rounds'.
  for (const a of [...cpuPerPost, ...pgCpuPerPost.http, pgCpuPerPost.direct]) a.length = 0;
  const http: number[][] = servers.map(() => []);
  const direct: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(os.loadavg()[0]);
    // Alternate the order, so no side always runs on the machine another just warmed.
    const sides = [
      ...servers.map((_, k) => async () => {
        http[k].push(await httpRound(k, DURATION));
      }),
      async () => {
        direct.push(await directRound(DURATION));
      },
    ];
    for (const side of round % 2 ? sides.reverse() : sides) await side();
  }
  // Same rows per job on both sides: stage, history, events, post, folder.
  // Grouped joins: the owner connection has no tenant binding, so per-row subqueries would not use the (tenant_id, document_id) indexes.
  const shape = async (c: pg.Client, like: string) =>
    (
      await c.query(
        `with js as (select id, stage_id, number from jobs where name like $1),
              h as (select document_id, count(*) as n from document_history where document_id in (select id from js) group by 1),
              e as (select document_id, count(*) as n from events where document_id in (select id from js) group by 1),
              m as (select document_id, count(*) as n from comments where document_id in (select id from js) group by 1),
              f as (select document_id, count(*) as n from folders where document_id in (select id from js) group by 1)
         select count(*)::int as jobs, count(*) filter (where js.stage_id = $2)::int as in_stage, count(distinct js.number) filter (where js.number ~ '^JOB-[0-9]+$')::int as numbers,
                coalesce(sum(h.n), 0)::int as history, coalesce(sum(e.n), 0)::int as events,
                coalesce(sum(m.n), 0)::int as posts, coalesce(sum(f.n), 0)::int as folders
           from js left join h on h.document_id = js.id left join e on e.document_id = js.id
                   left join m on m.document_id = js.id left join f on f.document_id = js.id`,
        [like, start.ToStageId],
      )
    ).rows[0];
  const [c0] = clients;
  const viaHttp = await shape(c0, 'Bench job %');
  const byHand = await shape(c0, 'Direct job %');
  await Promise.all([...clients, watcher].map((c) => c.end()));
  for (const s of servers) await s.server.stop();
  for (const [side, s] of [
    ['HTTP', viaHttp],
    ['direct', byHand],
  ] as const) {
    if (s.in_stage !== s.jobs || s.numbers !== s.jobs || s.history !== 2 * s.jobs || s.events !== 2 * s.jobs || s.posts !== s.jobs || s.folders !== s.jobs) {
      throw new Error(
        `${side} rows differ from one JOB-numbered job with its own number, one folder, two history rows, two events and one post per job: ${JSON.stringify(s)}`,
      );
    }
  }

  const directRps = median(direct);
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`1-minute load average at the start of each round: ${loads.map((l) => fmt(l, 2)).join(', ')}`);
  console.log(
    `${CONNECTIONS} connections; ${DURATION} s x ${ROUNDS} rounds; rows per job checked on both sides (${viaHttp.jobs} via HTTP, ${byHand.jobs} by hand)`,
  );
  console.log(`same rows directly through pg         median ${fmt(directRps)} posts/s  rounds: ${direct.map((r) => fmt(r)).join(', ')}`);
  console.log(`PostgreSQL CPU per post by hand: median ${fmt(median(pgCpuPerPost.direct), 2)} ms`);
  const rows: string[] = [];
  for (const [k, { name }] of servers.entries()) {
    const httpRps = median(http[k]);
    console.log(`\nPOST /api/posts (job + transition), ${name}: median ${fmt(httpRps)} posts/s  rounds: ${http[k].map((r) => fmt(r)).join(', ')}`);
    console.log(`  server process CPU per post: median ${fmt(median(cpuPerPost[k]), 2)} ms (rounds: ${cpuPerPost[k].map((c) => fmt(c, 2)).join(', ')})`);
    console.log(`  PostgreSQL CPU per post (all backends of the database): median ${fmt(median(pgCpuPerPost.http[k]), 2)} ms`);
    console.log(`  ratio HTTP / direct: ${fmt((httpRps / directRps) * 100, 1)}% (target >= 80%)`);
    rows.push(
      `| ${name} | ${fmt(httpRps)} | ${fmt(directRps)} | **${fmt((httpRps / directRps) * 100, 1)} %** | ${fmt(median(cpuPerPost[k]), 2)} | ` +
        `${fmt(median(pgCpuPerPost.http[k]), 2)} vs ${fmt(median(pgCpuPerPost.direct), 2)} |`,
    );
  }
  console.log('\n| posts/s | HTTP | direct | HTTP / direct | server CPU ms/post | PostgreSQL CPU ms/post: HTTP vs direct |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  await db.stop();
}
