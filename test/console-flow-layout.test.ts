// The automation diagram's layout without a browser: layers from Start, loops drawn as back edges,
// every arrow labelled, both key spellings (actionType and type), and references to missing actions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BOX_H, BOX_W, layoutWorkflow } from '../console/src/pages/flow-layout.ts';
import { FLOW } from './console-flow-fixtures.ts';

test('layers follow the longest path from Start; boxes of a layer sit side by side, none overlapping', () => {
  const l = layoutWorkflow(FLOW.actions);
  const layer = Object.fromEntries(l.nodes.map((n) => [n.name, n.layer]));
  assert.deepEqual(layer, { Start: 0, Prepare: 1, Route: 2, Each: 3, Shape: 3, Tally: 4, Check: 5, Recover: 6, Done: 7 });
  for (const a of l.nodes)
    for (const b of l.nodes)
      if (a !== b) assert.ok(a.x + BOX_W <= b.x || b.x + BOX_W <= a.x || a.y + BOX_H <= b.y || b.y + BOX_H <= a.y, `${a.name} and ${b.name} overlap`);
  assert.ok(l.nodes.every((n) => n.x >= 0 && n.y >= 0 && n.x + BOX_W <= l.width && n.y + BOX_H <= l.height));
  assert.equal(l.edges.length, 10);
  assert.ok(l.edges.every((e) => !e.back));
  assert.equal(l.nodes.find((n) => n.name === 'Each')?.runs, 'PerItem');
});

test('a loop back (nextOnError to an earlier action) is a back edge along the side; layers stay finite', () => {
  const l = layoutWorkflow([
    { name: 'Start', actionType: 'Start', next: 'Fetch' },
    { name: 'Fetch', actionType: 'Rest', next: 'Done', nextOnError: 'Wait' },
    { name: 'Wait', actionType: 'Await', next: 'Fetch' },
    { name: 'Done', actionType: 'Result' },
  ]);
  assert.deepEqual(
    l.nodes.map((n) => [n.name, n.type, n.layer]),
    [
      ['Start', 'Start', 0],
      ['Fetch', 'Rest', 1],
      ['Wait', 'Await', 2],
      ['Done', 'Result', 2],
    ],
  );
  const back = l.edges.filter((e) => e.back);
  assert.deepEqual(
    back.map((e) => `${e.from}>${e.to}`),
    ['Wait>Fetch'],
  );
  assert.ok(l.width > Math.max(...l.nodes.map((n) => n.x + BOX_W)), 'room on the right for the lane');
  assert.deepEqual(
    l.edges.map((e) => `${e.from}>${e.to} ${e.label}`),
    ['Start>Fetch next', 'Fetch>Done next', 'Fetch>Wait on error', 'Wait>Fetch next'],
  );
});

test('an action naming a missing action is reported, not drawn; a self-loop and a long chain lay out', () => {
  const l = layoutWorkflow([
    { name: 'Start', type: 'Start', next: 'Nowhere' },
    { name: 'Again', type: 'Await', next: 'Again' },
  ]);
  assert.deepEqual(l.dangling, [{ from: 'Start', to: 'Nowhere', kind: 'next' }]);
  assert.equal(l.edges.length, 1);
  assert.ok(l.edges[0].back);
  // 1,000 actions (the server's limit) in a chain: no recursion to overflow, one per layer.
  const chain = Array.from({ length: 1000 }, (_, i) => ({ name: `A${i}`, type: i ? 'SetParameter' : 'Start', next: i < 999 ? `A${i + 1}` : null }));
  const big = layoutWorkflow(chain);
  assert.equal(big.nodes[999].layer, 999);
});
