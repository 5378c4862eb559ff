// Automation definitions the console's browser tests and screenshots draw: a 12-action flow with a
// sub-workflow, every kind of arrow, and a small one whose run fails.
/** 12 actions: 9 in the main workflow (a Case with two branches, a Loop, a ValidateJson with nextOnError), 3 in a sub-workflow. */
export const FLOW = {
  name: 'Twelve steps',
  logLevelType: 'Info',
  actions: [
    { name: 'Start', type: 'Start', next: 'Prepare' },
    { name: 'Prepare', type: 'SetParameter', value: "{{['#HttpRequest']$.Body.items}}", next: 'Route' },
    {
      name: 'Route',
      type: 'Case',
      value: "{{['#HttpRequest']$.Body.mode}}",
      nextActions: [
        { value: 'each', name: 'Each' },
        { default: true, value: '', name: 'Shape' },
      ],
    },
    { name: 'Each', type: 'Loop', body: "{{['Prepare']}}", subWorkflow: 'PerItem', next: 'Tally' },
    { name: 'Tally', type: 'SetParameter', value: "{{['Each']}}", next: 'Check' },
    { name: 'Shape', type: 'SetParameter', value: { shaped: true }, next: 'Check' },
    {
      name: 'Check',
      type: 'ValidateJson',
      body: "{{['#HttpRequest']$.Body}}",
      schema: { type: 'object', required: ['mode'] },
      next: 'Done',
      nextOnError: 'Recover',
    },
    { name: 'Recover', type: 'SetParameter', value: 'recovered', next: 'Done' },
    { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { ok: true } } },
  ],
  subWorkflows: [
    {
      name: 'PerItem',
      actions: [
        { name: 'ItemStart', type: 'Start', next: 'Double' },
        { name: 'Double', type: 'SetParameter', value: "{{['#Item']}}", next: 'ItemDone' },
        { name: 'ItemDone', type: 'Result', httpResponse: { body: "{{['Double']}}" } },
      ],
    },
  ],
};
export const MAIN_EDGES = [
  'Start>Prepare next',
  'Prepare>Route next',
  'Route>Each nextActions = "each"',
  'Route>Shape nextActions default',
  'Each>Tally next',
  'Tally>Check next',
  'Shape>Check next',
  'Check>Done next',
  'Check>Recover nextOnError on error',
  'Recover>Done next',
];

/** Fails the run at Check: no nextOnError, so the invalid body ends it. */
export const FAILS = {
  name: 'Strict intake',
  actions: [
    { name: 'Start', type: 'Start', next: 'Check' },
    { name: 'Check', type: 'ValidateJson', body: "{{['#HttpRequest']$.Body}}", schema: { type: 'object', required: ['customer'] }, next: 'Done' },
    { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { ok: true } } },
  ],
};
