// Client API (second half) benchmark, two cases in alternating rounds (medians):
// 1. PUT /api/estimates/{id}/items replacing 200 items over HTTP (4 clients, each on its own estimate)
//    against the same writes by hand through pg on 4 connections, one transaction each: the estimate locked,
//    then one statement (old items deleted with their lines, 200 items and 200 item lines inserted, the
//    estimate stamped, its Updated event).
//    Both sides are checked to leave identical items and totals. Target: HTTP >= 50% of direct.
// 2. 1,000 users in one CreateMany (POST /api/v3/users) against the same users sent one by one to
//    POST /api/users with 8 clients. Target: CreateMany users/s >= 3x one by one.
// Run: npm run bench -- client-api-estimates (BENCH_CASES=items or users runs one case)
import os from 'node:os';
import pg from 'pg';
import { benchDatabase, clientApiBenchServer, fmt, median } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_DURATION ?? 8);
const CASES = (process.env.BENCH_CASES ?? 'items,users').split(',');
const CLIENTS = 4;
const ITEMS = 200;
const USERS = 1000;
const USER_CLIENTS = 8;

const db = await benchDatabase();
try {
  const { creds, server, call, client } = await clientApiBenchServer(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: CLIENTS });
  const [{ currency_id: currencyId }] = (await pool.query('select currency_id from companies where id = $1', [creds.companyId])).rows;
  const newEstimate = async (name: string) =>
    (
      await call('POST', '/api/v3/estimates', {
        OperationType: 0,
        CreateModel: { Name: name, ClientId: client.id, CurrencyId: currencyId, DepartmentId: creds.departmentId },
      })
    ).Id as string;
  const items = (round: number) =>
    Array.from({ length: ITEMS }, (_, i) => ({
      Order: i + 1,
      Description: `Line ${i}`,
      QuantityIncome: 1 + (i % 7),
      UnitPriceIncome: 10.125 + i + round,
      QuantityCost: 1 + (i % 5),
      UnitPriceCost: 4.333 + i,
      AgencyCommissionPercentage: i % 3 === 0 ? 10 : 0,
      Approved: i % 2 === 0,
    }));

  // The hand-written importer: the rows PUT items writes, as one transaction per estimate.
  const direct = async (estimateId: string, round: number) => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      await c.query('select id from estimates where id = $1 for update', [estimateId]);
      // One statement after the lock: the old items go (their lines by the foreign key's cascade), the new
      // items and their lines, the estimate's stamp and its Updated event.
      const list = items(round);
      await c.query(
        `with input as (
           select gen_random_uuid() as id, * from unnest($3::int[], $4::text[], $5::numeric[], $6::numeric[], $7::numeric[], $8::numeric[], $9::numeric[], $10::boolean[])
             as r(ord, description, qi, upi, qc, upc, acp, approved)
         ), gone as (
           delete from estimate_items where estimate_id = $2
         ), items as (
           insert into estimate_items (tenant_id, id, estimate_id, sort_order, name, description, approved, agency_commission_percentage, created_by_id, modified_by_id)
           select $1, id, $2, ord, description, description, approved, acp, $11, $11 from input returning id
         ), lines as (
           insert into estimate_item_details (tenant_id, estimate_item_id, detail_type, is_item_line, description, quantity_income, unit_price_income,
                                              quantity_cost, unit_price_cost, agency_commission_value, created_by_id, modified_by_id)
           select $1, i.id, 1, true, i.description, i.qi, i.upi, i.qc, i.upc, round(i.qi * i.upi * i.acp / 100, 2), $11, $11 from input i join items using (id)
         ), stamp as (
           update estimates set modified_on_utc = now(), modified_by_id = $11 where id = $2
         )
         insert into events (tenant_id, action_type, document_type, document_id, detail, user_id)
         values ($1, 'Updated', 'Skill.Module.BusinessObjects.Estimate', $2, $12, $11)`,
        [
          creds.tenantId,
          estimateId,
          list.map((x) => x.Order),
          list.map((x) => x.Description),
          list.map((x) => x.QuantityIncome),
          list.map((x) => x.UnitPriceIncome),
          list.map((x) => x.QuantityCost),
          list.map((x) => x.UnitPriceCost),
          list.map((x) => x.AgencyCommissionPercentage),
          list.map((x) => x.Approved),
          creds.userId,
          JSON.stringify({ Items: ITEMS, PropertyTypes: { Items: 'Int32' } }),
        ],
      );
      await c.query('commit');
    } catch (err) {
      await c.query('rollback');
      throw err;
    } finally {
      c.release();
    }
  };
  const viaHttp = (estimateId: string, round: number) => call('PUT', `/api/estimates/${estimateId}/items`, items(round));

  /** PUTs per second of `CLIENTS` loops, each on its own estimate, for SECONDS. */
  const timed = async (estimates: string[], round: number, put: (id: string, round: number) => Promise<unknown>) => {
    const until = performance.now() + SECONDS * 1000;
    let done = 0;
    const t0 = performance.now();
    await Promise.all(
      estimates.map(async (id) => {
        while (performance.now() < until) {
          await put(id, round);
          done++;
        }
      }),
    );
    return done / ((performance.now() - t0) / 1000);
  };
  const report: string[] = [];
  if (CASES.includes('items')) {
    const httpEstimates = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => newEstimate(`HTTP ${i}`)));
    const directEstimates = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => newEstimate(`Direct ${i}`)));
    const httpRates: number[] = [];
    const directRates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      httpRates.push(await timed(httpEstimates, r, viaHttp));
      directRates.push(await timed(directEstimates, r, direct));
    }
    // Identical results: the last round's items on both sides, and their totals by the one money rule.
    const a = await call('GET', `/api/v3/estimates/${httpEstimates[0]}`);
    const b = await call('GET', `/api/v3/estimates/${directEstimates[0]}`);
    const shape = (e: any) =>
      JSON.stringify({
        items: e.Items.map((i: any) => [i.Order, i.Description, i.ValueWithoutVatIncome, i.ValueWithoutVatCost, i.Approved]),
        totals: e.Totals,
      });
    if (shape(a) !== shape(b)) throw new Error('PUT items and the direct writes left different estimates');

    const h = median(httpRates);
    const d = median(directRates);
    report.push(
      `PUT /api/estimates/{id}/items (${ITEMS} items, ${CLIENTS} clients)  median ${fmt(h, 1)} PUTs/s  rounds: ${httpRates.map((x) => fmt(x, 1)).join(', ')}`,
    );
    report.push(
      `same writes directly through pg (${CLIENTS} connections)      median ${fmt(d, 1)} PUTs/s  rounds: ${directRates.map((x) => fmt(x, 1)).join(', ')}`,
    );
    report.push(`ratio HTTP / direct: ${fmt((h / d) * 100, 1)}% (target >= 50%); both sides checked to leave the same items and totals`);
  }
  if (CASES.includes('users')) {
    // Users: CreateMany of 1,000 against 1,000 single upserts with 8 clients.
    const oneByOne: number[] = [];
    const many: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: USER_CLIENTS }, async () => {
          for (let i = next++; i < USERS; i = next++) {
            await call('POST', '/api/users', {
              UserName: `single-${r}-${i}`,
              ExternalId: `S-${r}-${i}`,
              IsActive: true,
              CompanyCode: creds.companyCode,
              DepartmentExternalId: creds.departmentExternalId,
              TypologyExternalId: creds.typologyExternalId,
            });
          }
        }),
      );
      oneByOne.push(USERS / ((performance.now() - t0) / 1000));
      const t1 = performance.now();
      const created = await call('POST', '/api/v3/users', {
        Type: 'CreateMany',
        CreateManyModel: Array.from({ length: USERS }, (_, i) => ({
          UserName: `many-${r}-${i}`,
          ExternalId: `M-${r}-${i}`,
          IsActive: true,
          CompanyId: creds.companyId,
          DepartmentId: creds.departmentId,
          TypologyId: creds.typologyId,
        })),
      });
      if (created.length !== USERS) throw new Error(`CreateMany answered ${created.length} users`);
      many.push(USERS / ((performance.now() - t1) / 1000));
    }
    const check = await pool.query(
      `select count(*) filter (where user_name like 'single-%')::int as single, count(*) filter (where user_name like 'many-%')::int as many,
              count(distinct (company_id, department_id, typology_id)) filter (where user_name like 'single-%' or user_name like 'many-%')::int as shapes
         from users where tenant_id = $1`,
      [creds.tenantId],
    );
    const s = check.rows[0];
    if (s.single !== USERS * ROUNDS || s.many !== USERS * ROUNDS || s.shapes !== 1) throw new Error(`user rows differ: ${JSON.stringify(s)}`);
    const m = median(many);
    const o = median(oneByOne);
    report.push(`POST /api/v3/users CreateMany of ${USERS}              median ${fmt(m)} users/s  rounds: ${many.map((x) => fmt(x)).join(', ')}`);
    report.push(`POST /api/users one by one (${USER_CLIENTS} clients)          median ${fmt(o)} users/s  rounds: ${oneByOne.map((x) => fmt(x)).join(', ')}`);
    report.push(`ratio CreateMany / one by one: ${fmt(m / o, 2)}x (target >= 3x)`);
  }
  await pool.end();
  await server.stop();

  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const line of report) console.log(line);
} finally {
  await db.stop();
}
