// Demo data: teams, workflows with their stages and transitions, business-object types and briefing templates.
import type { DemoContext } from './context.ts';
import { mkDay } from './dates.ts';
import type { Agency, Workflow } from './model.ts';
import { STAGE_TYPE_NAMES, type StageType, TRANSITIONS, WORKFLOW_STAGES } from './vocabulary.ts';

export function addWorkflows(ctx: DemoContext): Pick<Agency, 'team' | 'workflows' | 'wf' | 'bot' | 'briefing'> {
  const { rngFor, add, audit, docType, stageTypeId, existingWorkflows, existingStages, existingTransitions } = ctx;
  const rWf = rngFor('workflows');
  const teamNames = ['Account Manager', 'Project Manager', 'Creative', 'Producer', 'Approver', 'Client Contact'];
  const team: Record<string, string> = {};
  for (const name of teamNames) {
    team[name] = rWf.uuid();
    add('teams', { id: team[name], name, external_id: `TEAM-${name.replace(/\s+/g, '').toUpperCase()}`, ...audit(mkDay(2024, 1, 4), 600, null) });
  }
  const workflows = new Map<string, Workflow>();
  for (const [cls, names] of Object.entries(WORKFLOW_STAGES)) {
    const existing = existingWorkflows.find((w) => w.class_name === cls);
    let wf: Workflow;
    if (existing) {
      const stage = {} as Record<StageType, string>;
      for (const st of STAGE_TYPE_NAMES) {
        const s = existingStages.find((r) => r.workflow_id === existing.id && r.stage_type_id === stageTypeId(st));
        if (!s) throw new Error(`default workflow of ${cls} has no ${st} stage`);
        stage[st] = s.id;
      }
      wf = { id: existing.id, stage, transitions: existingTransitions.filter((t) => t.workflow_id === existing.id).map((t) => ({ id: t.id, name: t.name })) };
    } else {
      const id = rWf.uuid();
      add('workflows', {
        id,
        document_type_id: docType(cls),
        name: `${cls.replace(/([a-z])([A-Z])/g, '$1 $2')} Workflow`,
        is_default: true,
        external_id: `WF-${cls.toUpperCase()}`,
        ...audit(mkDay(2024, 1, 4), 610, null),
      });
      const stage = {} as Record<StageType, string>;
      STAGE_TYPE_NAMES.forEach((st, i) => {
        stage[st] = rWf.uuid();
        add('workflow_stages', {
          id: stage[st],
          workflow_id: id,
          stage_type_id: stageTypeId(st),
          name: names[i],
          color: ['#9E9E9E', '#2196F3', '#4CAF50', '#F44336'][i],
          sort_order: i,
          is_initial: i === 0,
          // The stage's own Delayed flag (DE-Jobs/DE-Projects IsDelayed): work in progress can be late, a draft cannot.
          delayed: st === 'In Progress',
          external_id: `${cls.toUpperCase()}-${i + 1}`,
          ...audit(mkDay(2024, 1, 4), 611, null),
        });
      });
      const transitions: Workflow['transitions'] = [];
      TRANSITIONS.forEach(([name, from, to], i) => {
        const tid = rWf.uuid();
        transitions.push({ id: tid, name });
        add('workflow_transitions', {
          id: tid,
          workflow_id: id,
          from_stage_id: stage[from],
          to_stage_id: stage[to],
          name: `${name}`,
          external_id: `${cls.toUpperCase()}-T${i + 1}`,
          sort_order: i,
          request_confirmation: to === 'Canceled',
          must_send_notification: to !== 'Canceled',
          comment_required: name === 'Cancel' || name === 'Reopen',
          hours_required: cls === 'Deliverable' && to === 'Completed',
          file_upload_required: cls === 'Bill' && to === 'Completed',
          file_upload_folder: cls === 'Bill' && to === 'Completed' ? 'Receipts' : null,
          query_validation:
            cls === 'Estimate' && to === 'Completed' ? 'select count(*) = 0 from estimate_items where estimate_id = @Id and quantity <= 0' : null,
          motives: to === 'Canceled' ? ['Client canceled', 'Budget cut', 'Duplicate'] : [],
          actions: to === 'Completed' ? [{ type: 'SendEmail', to: 'Team' }] : [],
          roles: name === 'Reopen' ? ['Administrator'] : ['Administrator', 'Producer'],
          ...audit(mkDay(2024, 1, 4), 612, null),
        });
      });
      wf = { id, stage, transitions };
    }
    workflows.set(cls, wf);
    for (const st of ['Draft', 'In Progress'] as const) {
      for (const tn of ['Account Manager', 'Project Manager']) add('workflow_stage_write_teams', { id: rWf.uuid(), stage_id: wf.stage[st], team_id: team[tn] });
    }
  }
  const wf = (cls: string): Workflow => workflows.get(cls)!;

  const botRows: Array<[string, string, boolean, unknown]> = [
    ['Deliverable', 'Standard Job', true, null],
    ['Deliverable', 'Retainer Job', false, { requiresContract: true }],
    ['Project', 'Standard Project', true, null],
    ['Request', 'Creative Request', true, { defaultPriority: 1 }],
    ['Estimate', 'Standard Estimate', true, { showMargins: true }],
    ['Contract', 'Standard Contract', true, null],
  ];
  const bot = new Map<string, string>();
  for (const [cls, name, isDefault, configuration] of botRows) {
    const id = rWf.uuid();
    bot.set(name, id);
    add('business_object_types', { id, document_type_id: docType(cls), name, is_default: isDefault, configuration, ...audit(mkDay(2024, 1, 4), 620, null) });
  }
  const briefing = [rWf.uuid(), rWf.uuid()];
  add('briefing_templates', {
    id: briefing[0],
    name: 'Creative Brief',
    content_html: '<h2>Objective</h2><p></p><h2>Audience</h2><p></p><h2>Deliverables</h2><p></p>',
    ...audit(mkDay(2024, 1, 4), 630, null),
  });
  add('briefing_templates', {
    id: briefing[1],
    name: 'Digital Brief',
    content_html: '<h2>Goal</h2><p></p><h2>Channels</h2><p></p><h2>KPIs</h2><p></p>',
    ...audit(mkDay(2024, 1, 4), 631, null),
  });
  return { team, workflows, wf, bot, briefing };
}
