// The Client API's workflow: the document type's workflows, the transitions open to a user, the refusals
// (409 naming the current stage, 422 for a missing comment, 403 for a role), and StageUpdated delivered
// to a real receiver with every detail field of the spec (no WorkflowStageTransition* when set directly).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture, defaultWorkflow } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let wf: Awaited<ReturnType<typeof defaultWorkflow>>;
let projectId: string;

before(async () => {
  f = await clientApiFixture('Workflow Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, {
    Url: receiver.url,
    ActionType: 'StageUpdated',
    DocumentType: 'Skill.Module.BusinessObjects.Deliverable',
  });
  receiver.secret = sub.secret;
  wf = await defaultWorkflow(f, 'Deliverable');
  projectId = (
    await f.send('POST', '/api/v3/projects', {
      OperationType: 0,
      CreateModel: { Name: 'Workflow project', CompanyId: f.tenant.companyId, ClientId: f.clientId },
    })
  ).Id;
});
after(async () => {
  await receiver.close();
  await f.close();
});

const newJob = async (name: string): Promise<any> =>
  f.send('POST', '/api/v3/jobs', { OperationType: 0, CreateModel: { Name: name, ProjectId: projectId, DepartmentId: f.tenant.departmentId } });

const move = (jobId: string, transition: Record<string, string | null>, text = '', headers = f.h) =>
  f.server.request('POST', '/api/posts', { headers, json: { DocumentId: jobId, DocumentTypeName: 'Job', Text: text, Actions: { Transition: transition } } });

test('GET workflows with expandTransitions: stages with stage types and colours, transitions with their flags', async () => {
  const res = await f.server.request('GET', '/api/v3/document-types/Deliverable/workflows?expandTransitions=true', { headers: f.h });
  assert.equal(res.status, 200, res.text);
  const [w] = res.body;
  assert.equal(w.Name, 'Default Job Workflow');
  assert.deepEqual(
    w.Stages.map((s: any) => [s.Name, s.StageType, s.Color, s.IsInitial]),
    [
      ['Draft', 'Draft', '#9E9E9E', true],
      ['In Progress', 'In Progress', '#2196F3', false],
      ['Completed', 'Completed', '#4CAF50', false],
      ['Canceled', 'Canceled', '#F44336', false],
    ],
  );
  const cancel = w.Transitions.find((t: any) => t.Name === 'Cancel');
  assert.equal(cancel.FromStage, 'In Progress');
  assert.equal(cancel.ToStage, 'Canceled');
  assert.equal(cancel.CommentRequired, true);
  // By the document type's id too, and without transitions unless asked.
  const [dt] = await f.sql(`select id from document_types where tenant_id = $1 and class_name = 'Deliverable'`, [f.tenant.tenantId]);
  const [plain] = await f.send('GET', `/api/v3/document-types/${dt.id}/workflows`);
  assert.equal(plain.Id, w.Id);
  assert.equal(plain.Transitions, undefined);
});

test('a transition moves the job: stage everywhere, DE-History, StageUpdated with every detail field', async () => {
  const job = await newJob('Moving job');
  const open = await f.send('GET', `/api/workflowStateTransitions?documentTypeName=Job&documentId=${job.Id}`);
  assert.deepEqual(open.map((t: any) => t.Name).sort(), ['Discard', 'Start']);
  const res = await move(job.Id, { TransitionId: wf.transition.Start, StatusId: wf.stage['In Progress'] });
  assert.equal(res.status, 201, res.text);
  const [row] = await f.rowsOf('DE-Jobs', ['JobId', '=', job.Id]);
  assert.equal(row.Stage, 'In Progress');
  assert.equal(row.StageType, 'In Progress');
  assert.equal((await f.send('GET', `/api/v3/jobs/${job.Id}`)).StageType, 'In Progress');
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', job.Id]);
  assert.deepEqual(history.map((h) => [h.Version, h.Stage, h.StageType]).sort(), [
    [1, 'Draft', 'Draft'],
    [2, 'In Progress', 'In Progress'],
  ]);
  const [got] = await receiver.waitFor(1);
  assert.equal(got.verified, true);
  assert.equal(got.payload.document.id, job.Id);
  assert.equal(got.payload.actionType, 'StageUpdated');
  assert.deepEqual(got.payload.detail, {
    WorkflowStageTransitionId: wf.transition.Start,
    WorkflowStageTransitionName: 'Start',
    WorkflowStageTransitionLocalizedName: 'Start',
    FromWorkflowStageId: wf.stage.Draft,
    FromWorkflowStageName: 'Draft',
    FromWorkflowStageLocalizedName: 'Draft',
    ToWorkflowStageId: wf.stage['In Progress'],
    ToWorkflowStageName: 'In Progress',
    ToWorkflowStageLocalizedName: 'In Progress',
    WorkflowId: wf.id,
    WorkflowName: 'Default Job Workflow',
    DepartmentId: f.tenant.departmentId,
  });

  // Set directly by StatusId: the same move rules, and no WorkflowStageTransition* in the event.
  const direct = await move(job.Id, { StatusId: wf.stage.Completed });
  assert.equal(direct.status, 201, direct.text);
  const [, second] = await receiver.waitFor(2);
  assert.equal(second.payload.detail.ToWorkflowStageName, 'Completed');
  assert.equal('WorkflowStageTransitionId' in second.payload.detail, false);
  assert.equal('WorkflowStageTransitionName' in second.payload.detail, false);
});

test('refusals: 409 naming the current stage, 422 when a comment is required, 403 for a role the transition names', async () => {
  const job = await newJob('Refused job');
  const wrongStage = await move(job.Id, { TransitionId: wf.transition.Complete });
  assert.equal(wrongStage.status, 409, wrongStage.text);
  assert.equal(wrongStage.body.currentStage, 'Draft');
  assert.equal(wrongStage.body.currentStageId, wf.stage.Draft);
  assert.match(wrongStage.body.detail, /stage "Draft"/);
  const noPath = await move(job.Id, { StatusId: wf.stage.Completed });
  assert.equal(noPath.status, 409, noPath.text);
  assert.equal(noPath.body.currentStage, 'Draft');

  assert.equal((await move(job.Id, { TransitionId: wf.transition.Start })).status, 201);
  const silent = await move(job.Id, { TransitionId: wf.transition.Cancel });
  assert.equal(silent.status, 422, silent.text);
  assert.equal(silent.body.errors[0].path, '/body/Text');
  const [still] = await f.rowsOf('DE-Jobs', ['JobId', '=', job.Id]);
  assert.equal(still.Stage, 'In Progress');

  await f.sql(`update workflow_transitions set roles = '["Producer"]' where id = $1`, [wf.transition.Cancel]);
  try {
    const writer = await f.userWith(['JobWrite']);
    const forbidden = await move(job.Id, { TransitionId: wf.transition.Cancel }, 'Client withdrew', writer.headers);
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal(forbidden.body.requiredRole, 'Producer');
  } finally {
    await f.sql(`update workflow_transitions set roles = '[]' where id = $1`, [wf.transition.Cancel]);
  }
  const withComment = await move(job.Id, { TransitionId: wf.transition.Cancel }, 'Client withdrew');
  assert.equal(withComment.status, 201, withComment.text);
  const [canceled] = await f.rowsOf('DE-Jobs', ['JobId', '=', job.Id]);
  assert.equal(canceled.StageType, 'Canceled');
});

test('write teams: only members of the stage’s teams may move or change the job (409 / 403), others not even see the transition', async () => {
  const job = await newJob('Team job');
  const [team] = await f.sql(`insert into teams (tenant_id, name) values ($1, 'Producer') returning id`, [f.tenant.tenantId]);
  await f.sql(`insert into workflow_stage_write_teams (tenant_id, stage_id, team_id) values ($1, $2, $3)`, [f.tenant.tenantId, wf.stage.Draft, team.id]);
  try {
    const writer = await f.userWith(['JobWrite', 'JobRead']);
    const open = await f.send('GET', `/api/workflowStateTransitions?documentTypeName=Deliverable&documentId=${job.Id}`, undefined, writer.headers);
    assert.deepEqual(open, []);
    const refused = await move(job.Id, { TransitionId: wf.transition.Start }, '', writer.headers);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.currentStage, 'Draft');
    const patch = await f.server.request('PATCH', `/api/jobs/${job.Id}`, { headers: writer.headers, json: { Subject: { value: 'x' } } });
    assert.equal(patch.status, 403, patch.text);
    assert.deepEqual(patch.body.requiredTeams, ['Producer']);

    // The published assignment body puts the writer on the team; then the move is theirs to make.
    await f.send('POST', '/api/assignments/batch', {
      AssignmentPostModels: [
        {
          User: writer.id,
          DocumentType: 'Skill.Module.BusinessObjects.Deliverable',
          DocumentOid: job.Id,
          AssignmentType: 'Producer',
          Workload: 0,
          Priority: 0,
        },
      ],
      AssignmentDeleteModels: [],
    });
    const moved = await move(job.Id, { TransitionId: wf.transition.Start }, '', writer.headers);
    assert.equal(moved.status, 201, moved.text);
    assert.equal(moved.body.CreatedById, writer.id);
  } finally {
    await f.sql(`delete from workflow_stage_write_teams where stage_id = $1`, [wf.stage.Draft]);
  }
});

test('a post creating a job and moving it: written in its destination stage with both history periods; refused moves create nothing', async () => {
  const post = (name: string, transition: Record<string, string>) =>
    f.server.request('POST', '/api/posts', {
      headers: f.h,
      json: {
        DocumentId: '00000000-0000-0000-0000-000000000000',
        DocumentTypeName: 'Job',
        Text: `${name} opened`,
        Actions: {
          Transition: transition,
          Document: { DocumentType: 'Job', DocumentActionType: 'Post', Job: { Name: name, ProjectId: projectId, DepartmentId: f.tenant.departmentId } },
        },
      },
    });
  const res = await post('Born moving', { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.Actions.Transition, { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start });
  const jobId = res.body.DocumentId;
  const [row] = await f.rowsOf('DE-Jobs', ['JobId', '=', jobId]);
  assert.equal(row.Stage, 'In Progress');
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', jobId]);
  assert.deepEqual(history.map((h) => [h.Version, h.Action, h.Stage, h.EndDate === null]).sort(), [
    [1, 'Created', 'Draft', false],
    [2, 'StageChanged', 'In Progress', true],
  ]);
  const until = Date.now() + 20_000;
  while (!receiver.received.some((r) => r.payload?.document?.id === jobId) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  const event = receiver.received.find((r) => r.payload?.document?.id === jobId);
  assert.equal(event?.payload.detail.WorkflowStageTransitionName, 'Start');
  assert.equal(event?.payload.detail.FromWorkflowStageName, 'Draft');
  assert.equal(event?.payload.detail.DepartmentId, f.tenant.departmentId);

  const refused = await post('Never born', { TransitionId: wf.transition.Complete });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.body.currentStage, 'Draft');
  assert.equal((await f.rowsOf('DE-Jobs', ['Job', '=', 'Never born'])).length, 0);
});

// Such a post writes its own row in the statement that creates the job: the answer, the stored post and a
// refusal found after the move was planned (an unknown user to notify) must be what they were as separate steps.
test('a post creating and moving a job answers the stored post; a bad notification creates nothing', async () => {
  const body = (name: string, userId: string) => ({
    DocumentId: '00000000-0000-0000-0000-000000000000',
    DocumentTypeName: 'Job',
    Text: `${name} opened`,
    IsVisibleToClient: true,
    Actions: {
      Transition: { TransitionId: wf.transition.Start },
      Motive: { Id: wf.transition.Start },
      Notifications: [{ UserId: userId }],
      Document: { DocumentType: 'Job', DocumentActionType: 'Post', Job: { Name: name, ProjectId: projectId, DepartmentId: f.tenant.departmentId } },
    },
  });
  const res = await f.server.request('POST', '/api/posts', { headers: f.h, json: body('Born noticed', f.tenant.userId) });
  assert.equal(res.status, 201, res.text);
  const jobId = res.body.DocumentId;
  assert.equal(res.body.IsVisibleToClient, true);
  assert.deepEqual(res.body.Actions, {
    Document: { DocumentType: 'Job', DocumentActionType: 'Post', Id: jobId },
    Transition: { StatusId: wf.stage['In Progress'], TransitionId: wf.transition.Start },
    Motive: { Id: wf.transition.Start },
    Notifications: [{ UserId: f.tenant.userId, UserName: 'Administrator' }],
  });
  const listed = await f.server.request('GET', `/api/posts?documentId=${jobId}`, { headers: f.h });
  assert.deepEqual(listed.body, [res.body]);
  assert.equal((await f.rowsOf('DE-Jobs', ['JobId', '=', jobId]))[0].Stage, 'In Progress');

  const refused = await f.server.request('POST', '/api/posts', { headers: f.h, json: body('Never noticed', crypto.randomUUID()) });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.errors[0].path, '/body/Actions/Notifications/0/UserId');
  assert.equal((await f.rowsOf('DE-Jobs', ['Job', '=', 'Never noticed'])).length, 0);
});
