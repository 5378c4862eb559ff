// Kept answers belong to one server (issue 28 item 6): two database handles in one process keep their counts
// and positions apart, and a caller without a handle keeps nothing across calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DatabaseHandle } from '../../platform/db/database.ts';
import { KeptAnswers, keptOf } from './kept-answers.ts';

test('each database handle has its own kept answers; none without a handle', async () => {
  // Handles connect lazily: nothing here opens a connection.
  const a = new DatabaseHandle('postgres://nobody@127.0.0.1:1/none');
  const b = new DatabaseHandle('postgres://nobody@127.0.0.1:1/none');
  try {
    assert.equal(keptOf(a), keptOf(a));
    assert.notEqual(keptOf(a), keptOf(b));
    keptOf(a).counts.set('k', { count: 7, snapshot: '1:1:', tables: ['timesheets'], at: Date.now() });
    assert.equal(keptOf(a).counts.get('k')?.count, 7);
    assert.equal(keptOf(b).counts.get('k'), undefined);
    assert.notEqual(keptOf(), keptOf());
    assert.equal(keptOf().counts.get('k'), undefined);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('kept answers drop the least recently used past their bound', () => {
  const kept = new KeptAnswers<{ at: number }>(2);
  const at = Date.now();
  kept.set('a', { at });
  kept.set('b', { at });
  assert.ok(kept.get('a'));
  kept.set('c', { at });
  assert.equal(kept.get('b'), undefined);
  assert.ok(kept.get('a'));
  assert.ok(kept.get('c'));
  kept.set('old', { at: at - 11 * 60_000 });
  assert.equal(kept.get('old'), undefined, 'expired after COUNT_TTL_MS');
});
