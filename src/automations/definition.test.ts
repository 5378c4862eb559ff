import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionTypeOf, validateDefinition } from './definition.ts';
import { evaluateTemplate, parseTemplate, type Scope } from './expressions.ts';

test('actionType is the type key, its value in any case; type is read as a synonym and stored as actionType', () => {
  const { definition, errors } = validateDefinition({
    name: 'Platform',
    actions: [
      { actionType: 'Start', name: 'Start', next: 'Make' },
      { actionType: 'createList', name: 'Make', listName: 'L', listValues: [], next: 'Old' },
      { type: 'SetParameter', name: 'Old', parameterName: 'P', value: 1, next: 'End' },
      { ACTIONTYPE: 'RESULT', name: 'End' },
    ],
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(
    definition?.actions.map((a) => [a.actionType, Object.hasOwn(a, 'type')]),
    [
      ['Start', false],
      ['CreateList', false],
      ['SetParameter', false],
      ['Result', false],
    ],
  );
  assert.equal(actionTypeOf({ actionType: 'addToList' }), 'AddToList');
  const bad = validateDefinition({ name: 'x', actions: [{ name: 'S', actionType: 'Frobnicate' }, { name: 'T' }] });
  assert.ok(bad.errors.some((e) => e.path === '/actions/0/actionType' && /unknown action type "Frobnicate"/.test(e.message)));
  assert.ok(bad.errors.some((e) => e.path === '/actions/1/actionType' && /is required/.test(e.message)));
});

test('the top-level sub-workflow array may be spelled subWorkflow (the Loop example) or subWorkflows', () => {
  const sub = {
    name: 'ImportFileData',
    actions: [
      { actionType: 'Start', name: 'Start', next: 'R' },
      { actionType: 'Result', name: 'R' },
    ],
  };
  const main = [
    { actionType: 'Start', name: 'Start', next: 'Loop' },
    { actionType: 'Loop', name: 'Loop', body: [1], subWorkflow: 'ImportFileData', next: 'End' },
    { actionType: 'Result', name: 'End' },
  ];
  for (const key of ['subWorkflow', 'subWorkflows']) {
    const { definition, errors } = validateDefinition({ name: 'x', actions: main, [key]: [sub] });
    assert.deepEqual(errors, [], key);
    assert.deepEqual(
      definition?.subWorkflows.map((w) => w.name),
      ['ImportFileData'],
    );
  }
});

test("['X'].path without $ reads as ['X']$.path", () => {
  const values: Record<string, unknown> = { '#HttpRequest': { Body: { Name: 'Apollo', Items: [{ Id: 7 }] } }, ImportUser: { Content: { userName: 'ada' } } };
  const scope: Scope = (n) => (Object.hasOwn(values, n) ? { found: true, value: values[n] } : { found: false, value: undefined });
  const ev = (s: string) => evaluateTemplate(parseTemplate(s), scope);
  assert.equal(ev("{{['#HttpRequest'].Body.Name}}"), 'Apollo');
  assert.equal(ev("{{['#HttpRequest']$.Body.Name}}"), 'Apollo');
  assert.equal(ev("{{['#HttpRequest'].Body.Items[0].Id}}"), 7);
  assert.equal(ev("{{['#HttpRequest']['Body'].Name | ToUpperCase}}"), 'APOLLO');
  assert.equal(ev("User {{['ImportUser'].Content.userName}} imported"), 'User ada imported');
});

test('every action type validation knows has a handler, and every handler is a type validation knows', async () => {
  const { HANDLERS } = await import('./handlers.ts');
  const { ACTION_TYPES } = await import('./definition.ts');
  assert.deepEqual(Object.keys(ACTION_TYPES).sort(), Object.keys(HANDLERS).sort());
});
