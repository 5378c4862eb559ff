// The user feed's counters: a run counts once by outcome, its rows by outcome, and a file processed before
// (its summary re-reads stored outcomes) adds no rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { observeUserFeedRun, userFeedRows, userFeedRuns } from './metrics.ts';

const value = async (counter: typeof userFeedRows, labels: Record<string, string>) =>
  (await counter.get()).values.find((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))?.value ?? 0;

test('observeUserFeedRun counts runs and rows by outcome, not rows of files processed before', async () => {
  const file = { alreadyProcessed: false, created: 2, updated: 1, deactivated: 0, unchanged: 3, skipped: 0, failed: 1 };
  observeUserFeedRun(true, false, [file, { ...file, alreadyProcessed: true }]);
  observeUserFeedRun(false, true, [file]);
  assert.equal(await value(userFeedRuns, { outcome: 'failed', dry_run: 'false' }), 1);
  assert.equal(await value(userFeedRuns, { outcome: 'succeeded', dry_run: 'true' }), 1);
  assert.equal(await value(userFeedRows, { outcome: 'created', dry_run: 'false' }), 2);
  assert.equal(await value(userFeedRows, { outcome: 'unchanged', dry_run: 'false' }), 3);
  assert.equal(await value(userFeedRows, { outcome: 'failed', dry_run: 'true' }), 1);
  assert.equal(await value(userFeedRows, { outcome: 'deactivated', dry_run: 'false' }), 0);
});
