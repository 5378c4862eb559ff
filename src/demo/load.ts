// Demo data: the load. Tables are copied in LOAD_ORDER with per-row foreign-key triggers bypassed when the
// role may, then analysed, and the keys verified set-wise.
import type { DemoContext } from './context.ts';
import type { Agency } from './model.ts';
import { BULK_TABLES, copyInto, type Db, LOAD_ORDER, type TableName, TIMESHEET_COLS } from './sink.ts';
import type { Timesheets } from './timesheets.ts';

/**
 * Per-row FK triggers cost more than the insert itself (each check locks the parent row), so the load runs
 * with session_replication_role = replica when the role may set it (it also keeps other triggers, e.g.
 * event capture, from firing for generated rows). Returns whether the bypass is on; SET LOCAL ends with
 * the caller's transaction at the latest.
 */
async function bypassFkTriggers(db: Db): Promise<boolean> {
  try {
    await db.query('savepoint atrium_demo_fk');
    await db.query('set local session_replication_role = replica');
    await db.query('release savepoint atrium_demo_fk');
    return true;
  } catch {
    await db.query('rollback to savepoint atrium_demo_fk').catch(() => {});
    return false;
  }
}

/**
 * The set-based equivalent of the skipped FK triggers: per table, one scan left-joined to the parents of up
 * to six foreign keys at a time, counting child rows (with all key columns set) that found no parent.
 */
async function verifyForeignKeys(db: Db, tenantId: string, tables: readonly string[]): Promise<void> {
  const fks = await db.query<{ name: string; child: string; parent: string; child_cols: string[]; parent_cols: string[] }>(
    `select c.conname as name, c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent,
            array(select a.attname::text from unnest(c.conkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.o) as child_cols,
            array(select a.attname::text from unnest(c.confkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.o) as parent_cols
       from pg_constraint c
      where c.contype = 'f' and c.conrelid = any($1::regclass[]) and c.confrelid <> 'tenants'::regclass
      order by 2, 1`,
    [tables],
  );
  const byChild = new Map<string, typeof fks.rows>();
  for (const fk of fks.rows) byChild.set(fk.child, [...(byChild.get(fk.child) ?? []), fk]);
  for (const [child, list] of byChild) {
    for (let start = 0; start < list.length; start += 6) {
      const group = list.slice(start, start + 6);
      const counts = group.map((fk, i) => {
        const set = fk.child_cols.map((col) => `c.${col} is not null`).join(' and ');
        return `count(*) filter (where ${set} and p${i}.${fk.parent_cols[0]} is null) as v${i}`;
      });
      const joins = group.map(
        (fk, i) => `left join ${fk.parent} p${i} on ${fk.child_cols.map((col, k) => `p${i}.${fk.parent_cols[k]} = c.${col}`).join(' and ')}`,
      );
      const res = await db.query<Record<string, string>>(`select ${counts.join(', ')} from ${child} c ${joins.join(' ')} where c.tenant_id = $1`, [tenantId]);
      group.forEach((fk, i) => {
        const bad = Number(res.rows[0][`v${i}`]);
        if (bad > 0) throw new Error(`demo data violates ${fk.name} (${child} -> ${fk.parent}): ${bad} rows`);
      });
    }
  }
}

/** Hands the chunks on to COPY, reporting after each how far the table has got. */
async function* reporting(
  table: string,
  chunks: Iterable<string>,
  progress: DemoContext['progress'],
  measure: (chunk: string) => { rows: number; fraction: number },
  signal: AbortSignal | undefined,
): AsyncGenerator<string> {
  for (const chunk of chunks) {
    // A turn of the event loop per chunk: while PostgreSQL keeps up, the socket takes every write at once and
    // the pipeline runs from one nextTick to the next, so a SIGINT's handler waited seconds on a busy machine.
    await new Promise(setImmediate);
    // Failing the source fails the COPY, which PostgreSQL then aborts without waiting for a cancel.
    signal?.throwIfAborted();
    yield chunk;
    if (progress) progress({ table, ...measure(chunk) });
  }
}

function countLines(chunk: string): number {
  let n = 0;
  for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) n++;
  return n;
}

export async function loadDemoData(
  ctx: DemoContext,
  timesheets: Timesheets,
  a: Pick<Agency, 'companies' | 'companyImages'>,
  started: number,
): Promise<{ rows: Record<string, number> }> {
  const { db, tenantId, tables, log, progress, signal } = ctx;
  const { companies, companyImages } = a;
  const rows: Record<string, number> = {};
  const bypassing = await bypassFkTriggers(db);
  log(
    bypassing
      ? 'foreign-key triggers bypassed during the load; keys are verified set-wise at the end'
      : 'foreign keys checked row by row (role may not set session_replication_role)',
  );
  const loadTable = async (name: TableName): Promise<void> => {
    const t0 = Date.now();
    const bulk = (BULK_TABLES as readonly string[]).includes(name);
    if (name === 'timesheets') {
      const measure = () => ({ rows: timesheets.count(), fraction: timesheets.progress() });
      await copyInto(db, 'timesheets', TIMESHEET_COLS, reporting('timesheets', timesheets.chunks(), progress, measure, signal));
      rows.timesheets = timesheets.count();
      // Fresh statistics now: loading workloads and verifying their keys join this table.
      await db.query('analyze timesheets');
      timesheets.addFutureWorkloads();
      log(`timesheets: ${rows.timesheets} rows in ${Date.now() - t0} ms`);
      return;
    }
    const t = tables.get(name)!;
    const chunks = t.drain();
    let sent = 0;
    const measure = (chunk: string) => {
      sent += countLines(chunk);
      return { rows: sent, fraction: sent / t.count };
    };
    if (t.cols && t.count > 0) await copyInto(db, name, t.cols, reporting(name, chunks, progress, measure, signal));
    rows[name] = t.count;
    if (name === 'services') {
      // Companies point at their default articles, which only exist now.
      await db.query(
        `update companies c
            set article_id = v.article_id, project_article_id = v.project_article_id,
                timesheet_start = coalesce(c.timesheet_start, date '2024-01-01'),
                image_file_id = coalesce(c.image_file_id, v.image_file_id)
           from unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[]) as v(id, article_id, project_article_id, image_file_id)
          where c.tenant_id = $1 and c.id = v.id`,
        [
          tenantId,
          companies.map((c) => c.id),
          companies.map((c) => c.services['Creative Hours']),
          companies.map((c) => c.services['Project Management']),
          companies.map((c) => companyImages.get(c.id) ?? null),
        ],
      );
    }
    if (bulk) await db.query(`analyze ${name}`);
    log(`${name}: ${rows[name]} rows in ${Date.now() - t0} ms`);
  };
  for (const name of LOAD_ORDER) {
    signal?.throwIfAborted();
    await loadTable(name);
  }
  if (bypassing) await db.query('set local session_replication_role = origin');

  let t0 = Date.now();
  const rest = LOAD_ORDER.filter((t) => !(BULK_TABLES as readonly string[]).includes(t));
  await db.query(`analyze ${rest.join(', ')}, document_types, workflow_stage_types, user_types`);
  log(`analyze: ${Date.now() - t0} ms`);
  t0 = Date.now();
  if (bypassing) {
    await verifyForeignKeys(db, tenantId, LOAD_ORDER);
    log(`foreign keys verified in ${Date.now() - t0} ms`);
  }
  log(`total ${Date.now() - started} ms`);
  return { rows };
}
