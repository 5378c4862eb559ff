// Leaves' approvers by name (DE-Leaves `Approvers`): splitting the shown text into names, and choosing a
// user for each, deterministically where names are shared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approverNames, resolveApprovers, type TargetUser } from './leave-approvers.ts';

const user = (id: string, name: string, active = true, companyId: string | null = 'c1'): TargetUser => ({ id, name, active, companyId });
const index = (users: TargetUser[]) => {
  const m = new Map<string, TargetUser[]>();
  for (const u of users) m.set(u.name, [...(m.get(u.name) ?? []), u]);
  return m;
};

test('approverNames: names holding ", " are kept whole where the known names allow it; else the text is split', () => {
  const known = new Set(['Ana Lima', 'Smith, John', 'Smith', 'Bo']);
  assert.deepEqual(
    approverNames('Ana Lima, Smith, John', (n) => known.has(n)),
    ['Ana Lima', 'Smith, John'],
  );
  // "Smith" alone is known too, but "John" is not: the only whole split takes "Smith, John".
  assert.deepEqual(
    approverNames('Bo, Smith, John, Smith', (n) => known.has(n)),
    ['Bo', 'Smith, John', 'Smith'],
  );
  // A name shown twice (two approvals by namesakes) stays twice.
  assert.deepEqual(
    approverNames('Bo, Bo', (n) => known.has(n)),
    ['Bo', 'Bo'],
  );
  // Not wholly known: split on every ", " (the unknown parts are reported by the caller).
  assert.deepEqual(
    approverNames('Ana Lima, Zed', (n) => known.has(n)),
    ['Ana Lima', 'Zed'],
  );
});

test('resolveApprovers: a current approver first, then active, then the leave’s company, then the smallest id; unknown names apart', () => {
  const users = [user('b', 'Bo', true, 'c2'), user('a', 'Bo', false, 'c1'), user('d', 'Bo', true, 'c1'), user('c', 'Cy')];
  const byName = index(users);
  assert.deepEqual(resolveApprovers(['Bo'], byName, new Set(), 'c1'), { userIds: ['d'], unresolved: [] });
  assert.deepEqual(resolveApprovers(['Bo'], byName, new Set(), 'c9'), { userIds: ['b'], unresolved: [] });
  assert.deepEqual(resolveApprovers(['Bo'], byName, new Set(['a']), 'c1'), { userIds: ['a'], unresolved: [] });
  // Shown twice: two different namesakes.
  assert.deepEqual(resolveApprovers(['Bo', 'Bo'], byName, new Set(), 'c1'), { userIds: ['d', 'b'], unresolved: [] });
  assert.deepEqual(resolveApprovers(['Cy', 'Zed'], byName, new Set(), null), { userIds: ['c'], unresolved: ['Zed'] });
  // The order the users were loaded in does not change the choice.
  assert.deepEqual(resolveApprovers(['Bo'], index([...users].reverse()), new Set(), 'c9'), { userIds: ['b'], unresolved: [] });
});
