// The budget of page rows in flight: pages beyond it wait their turn, in order, and a page larger than
// the budget still runs (alone).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_PAGE_SIZE } from '../query/query-builder.ts';
import { MAX_PAGE_ROWS_IN_FLIGHT, PageBudget, pageRowsOf } from './page-budget.ts';

const budget = new PageBudget();
const withPageBudget = <T>(rows: number, work: () => Promise<T>) => budget.run(rows, work);
const pageRowsInFlight = () => budget.inFlight();

function gate(): { open: () => void; wait: Promise<void> } {
  let open = () => {};
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

test('pages wait while the rows in flight would pass the budget, and start in order', async () => {
  const started: string[] = [];
  const first = gate();
  const second = gate();
  const a = withPageBudget(MAX_PAGE_SIZE, async () => {
    started.push('a');
    await first.wait;
  });
  const b = withPageBudget(MAX_PAGE_SIZE, async () => {
    started.push('b');
    await second.wait;
  });
  const c = withPageBudget(100, async () => started.push('c'));
  const d = withPageBudget(1, async () => started.push('d'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['a', 'b'], 'two maximum pages fill the budget; c and d wait');
  assert.equal(pageRowsInFlight(), MAX_PAGE_ROWS_IN_FLIGHT);
  first.open();
  await a;
  await Promise.all([c, d]);
  assert.deepEqual(started, ['a', 'b', 'c', 'd']);
  second.open();
  await b;
  assert.equal(pageRowsInFlight(), 0);
});

test('a failing page gives its rows back, and a page over the budget runs alone', async () => {
  await assert.rejects(
    withPageBudget(MAX_PAGE_SIZE, async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(pageRowsInFlight(), 0);
  assert.equal(await withPageBudget(MAX_PAGE_ROWS_IN_FLIGHT + 1, async () => pageRowsInFlight()), MAX_PAGE_ROWS_IN_FLIGHT + 1);
});

test('a page counts its take, or the maximum page size when it has none', () => {
  assert.equal(pageRowsOf({ queryBuilder: { take: 2000 } }), 2000);
  assert.equal(pageRowsOf({ queryBuilder: { take: 50_000 } }), MAX_PAGE_SIZE);
  assert.equal(pageRowsOf({}), MAX_PAGE_SIZE);
  assert.equal(pageRowsOf(undefined), MAX_PAGE_SIZE);
});
