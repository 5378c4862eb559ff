// Demo data: comments, descriptions, history, approvals, reads, favourites and project folders; then settings.
import type { DemoContext } from './context.ts';
import { mkDay, NOW, ts } from './dates.ts';
import type { Agency } from './model.ts';
import { COMMENTS, REPLIES, type StageType } from './vocabulary.ts';

export function addCollaboration(
  ctx: DemoContext,
  a: Pick<
    Agency,
    | 'fileRng'
    | 'projectsFolder'
    | 'mainCompany'
    | 'wf'
    | 'users'
    | 'ceo'
    | 'officeManager'
    | 'projects'
    | 'jobRows'
    | 'requestRows'
    | 'estimateRows'
    | 'poRows'
    | 'billRows'
    | 'leaveApprovals'
  >,
): void {
  const { rngFor, add, audit, T } = ctx;
  const {
    fileRng: rFiles,
    projectsFolder,
    mainCompany,
    wf,
    users,
    ceo,
    officeManager,
    projects,
    jobRows,
    requestRows,
    estimateRows,
    poRows,
    billRows,
    leaveApprovals,
  } = a;
  const rCol = rngFor('collaboration');
  const stageOrder: StageType[] = ['Draft', 'In Progress', 'Completed'];
  const history = (dt: string, docId: string, created: number, modified: number, stage: StageType, wfCls: string, by: string): void => {
    const path: StageType[] = stage === 'Canceled' ? ['Draft', 'Canceled'] : stageOrder.slice(0, stageOrder.indexOf(stage) + 1);
    const step = Math.max(1, Math.floor((modified - created) / path.length));
    path.forEach((st, v) => {
      const start = created + v * step;
      const last = v === path.length - 1;
      add('document_history', {
        id: rCol.uuid(),
        document_type_id: dt,
        document_id: docId,
        version: v + 1,
        start_date: ts(start, 600 + v),
        end_date: last ? null : ts(created + (v + 1) * step, 600 + v + 1),
        user_id: by,
        action: v === 0 ? 'Created' : 'StageChanged',
        stage_id: wf(wfCls).stage[st],
        created_on_utc: ts(start, 600 + v),
      });
    });
  };
  const comment = (dt: string, docId: string, day: number, authors: string[]): void => {
    const id = rCol.uuid();
    const by = rCol.pick(authors);
    const replies = rCol.int(0, 2);
    add('comments', {
      id,
      document_type_id: dt,
      document_id: docId,
      text: rCol.pick(COMMENTS),
      is_visible_to_client: rCol.chance(0.1),
      actions: rCol.chance(0.1) ? [{ name: 'Approve', completed: rCol.chance(0.5) }] : null,
      reactions: rCol.chance(0.3) ? [{ userId: rCol.pick(authors), reaction: 'like' }] : null,
      ...audit(day, rCol.int(540, 1080), by),
    });
    for (let r = 0; r < replies; r++) {
      const replier = rCol.pick(authors);
      add('comment_replies', {
        id: rCol.uuid(),
        comment_id: id,
        text: rCol.pick(REPLIES),
        reactions: rCol.chance(0.2) ? [{ userId: by, reaction: 'like' }] : null,
        mentions: rCol.chance(0.3) ? [{ userId: by }] : null,
        ...audit(day + r + 1, rCol.int(540, 1080), replier),
      });
    }
  };
  const describe = (dt: string, docId: string, day: number, by: string, title: string, versions: number): void => {
    for (let v = 1; v <= versions; v++) {
      const text = `${title}: objective, audience and deliverables${v > 1 ? ` (revision ${v})` : ''}.`;
      add('descriptions', {
        id: rCol.uuid(),
        document_type_id: dt,
        document_id: docId,
        version: v,
        text_html: `<p><strong>${title}</strong></p><p>${text}</p>`,
        plain_text: `${title}\n${text}`,
        ...audit(day + v - 1, 600, by, day + v - 1, 620 + v),
      });
    }
  };
  const read = (userId: string, dt: string, docId: string, day: number): void =>
    add('document_reads', { id: rCol.uuid(), user_id: userId, document_type_id: dt, document_id: docId, read_on_utc: ts(day, rCol.int(540, 1080)) });
  const readKeys = new Set<string>();
  const readOnce = (userId: string, dt: string, docId: string, day: number): void => {
    const key = `${userId}:${docId}`;
    if (readKeys.has(key)) return;
    readKeys.add(key);
    read(userId, dt, docId, day);
  };
  const approval = (dt: string, docId: string, approverId: string, role: 'Approver' | 'HR', status: string, day: number): void =>
    add('approvals', {
      id: rCol.uuid(),
      document_type_id: dt,
      document_id: docId,
      approver_id: approverId,
      role,
      status,
      requested_on_utc: ts(day, 600),
      decided_on_utc: status === 'Pending' ? null : ts(Math.min(NOW - 1, day + 2), 660),
      ...audit(day, 600, null, status === 'Pending' ? day : Math.min(NOW - 1, day + 2), 660, approverId),
    });
  for (const row of jobRows) {
    const j = row.job;
    const teamIds = j.internal ? [row.by] : [...new Set([row.by, ...users.filter((u) => u.pool.includes(j)).map((u) => u.id)])];
    history(T.job, j.id, row.created, row.modified, j.stage, 'Deliverable', row.by);
    if (j.internal) continue;
    for (let k = rCol.int(0, 2); k > 0; k--) comment(T.job, j.id, j.start + rCol.int(0, 10), teamIds);
    describe(T.job, j.id, row.created, row.by, row.name, rCol.int(1, 3));
    for (const uid of teamIds) if (rCol.chance(0.6)) readOnce(uid, T.job, j.id, row.modified);
    if (j.stage === 'In Progress' && rCol.chance(0.1)) approval(T.job, j.id, j.project.managerId, 'Approver', 'Pending', row.modified);
  }
  for (const p of projects) {
    history(T.project, p.id, p.start - 10, Math.min(NOW - 1, p.end), p.stage, 'Project', p.managerId);
    comment(T.project, p.id, p.start, [p.managerId, p.client.managerId]);
    describe(T.project, p.id, p.start - 10, p.managerId, p.name, 1);
    readOnce(p.managerId, T.project, p.id, p.start);
    readOnce(p.client.managerId, T.project, p.id, p.start + 1);
  }
  for (const r of requestRows) {
    history(T.request, r.id, r.created, Math.min(NOW - 1, r.created + 15), r.stage, 'Request', r.by);
    describe(T.request, r.id, r.created, r.by, 'Request brief', rCol.int(1, 2));
    if (rCol.chance(0.5)) readOnce(r.by, T.request, r.id, r.created + 1);
  }
  for (const e of estimateRows) {
    history(T.estimate, e.id, e.created, Math.min(NOW - 1, e.created + 20), e.stage, 'Estimate', e.by);
    if (e.stage === 'In Progress') approval(T.estimate, e.id, e.approverId, 'Approver', 'Pending', e.created + 2);
    else if (e.stage === 'Completed') approval(T.estimate, e.id, e.approverId, 'Approver', 'Approved', e.created + 2);
  }
  for (const po of poRows) {
    if (po.stage === 'Draft') approval(T.po, po.id, po.approverId, 'Approver', 'Pending', po.created);
    else if (po.stage !== 'Canceled') approval(T.po, po.id, po.approverId, 'Approver', 'Approved', po.created);
    if (rCol.chance(0.5)) readOnce(po.approverId, T.po, po.id, po.created + 1);
  }
  for (const b of billRows) if (rCol.chance(0.5)) readOnce(b.by, T.bill, b.id, b.created + 1);
  for (const l of leaveApprovals) {
    const status = l.status === 'Approved' ? 'Approved' : l.status === 'Rejected' ? 'Rejected' : l.status === 'New' ? 'Pending' : null;
    if (status === null) continue;
    approval(T.leave, l.id, l.user.responsibleId ?? l.user.id, 'Approver', status, l.day);
    if (l.type === 'vac') approval(T.leave, l.id, officeManager.id, 'HR', status, l.day);
  }
  const favKeys = new Set<string>();
  for (const u of users) {
    const candidates: Array<[string, string]> = [
      ...u.pool.filter((j) => !j.internal).map((j): [string, string] => [T.job, j.id]),
      ...projects.filter((p) => p.managerId === u.id).map((p): [string, string] => [T.project, p.id]),
    ];
    for (const [dt, id] of rCol.sample(candidates, rCol.int(0, 3))) {
      if (favKeys.has(`${u.id}:${id}`)) continue;
      favKeys.add(`${u.id}:${id}`);
      add('favorites', {
        id: rCol.uuid(),
        user_id: u.id,
        document_type_id: dt,
        document_id: id,
        created_on_utc: ts(mkDay(2025, rCol.int(1, 12), rCol.int(1, 28)), 600),
      });
    }
  }
  if (requestRows.length > 0)
    add('favorites', {
      id: rCol.uuid(),
      user_id: ceo.id,
      document_type_id: T.request,
      document_id: requestRows[0].id,
      created_on_utc: ts(mkDay(2025, 3, 3), 600),
    });
  if (billRows.length > 0)
    add('favorites', { id: rCol.uuid(), user_id: ceo.id, document_type_id: T.bill, document_id: billRows[0].id, created_on_utc: ts(mkDay(2025, 3, 3), 601) });

  // Project folders with a stored brief and a link.
  for (const p of projects) {
    const folderId = rFiles.uuid();
    add('folders', {
      id: folderId,
      parent_id: projectsFolder,
      name: p.number,
      document_type_id: T.project,
      document_id: p.id,
      ...audit(p.start - 10, 600, p.managerId),
    });
    add('files', {
      id: rFiles.uuid(),
      folder_id: folderId,
      name: 'Brief.pdf',
      content_type: 'application/pdf',
      size_bytes: rFiles.int(50_000, 3_000_000),
      storage_key: `projects/${p.id}/brief.pdf`,
      link_url: null,
      ...audit(p.start - 9, 600, p.managerId),
    });
    if (rFiles.chance(0.5))
      add('files', {
        id: rFiles.uuid(),
        folder_id: folderId,
        name: 'Moodboard',
        content_type: null,
        size_bytes: null,
        storage_key: null,
        link_url: `https://boards.example.com/${p.number.toLowerCase()}`,
        ...audit(p.start - 8, 600, p.managerId),
      });
  }

  // Settings.
  add('configuration_keys', {
    id: rCol.uuid(),
    key: 'SFTP-HRFEED',
    // The password is left null: secrets are encrypted by the application, which the generator cannot do.
    value: {
      ftpHostIp: 'sftp.hr-feed.invalid',
      ftpUsername: 'hrfeed',
      ftpPassword: null,
      ftpPath: '/Data',
      ftpToPathSuccess: '/Data/Success',
      ftpToPathFailure: '/Data/Failure',
      fileNameContains: 'AD_UserAccounts',
    },
    ...audit(mkDay(2024, 2, 1), 600, ceo.id),
  });
  add('configuration_keys', {
    id: rCol.uuid(),
    key: 'NOTIFICATIONS',
    value: { errorMailbox: `it@${mainCompany.domain}` },
    ...audit(mkDay(2024, 2, 1), 601, ceo.id),
  });
  add('system_preferences', { id: rCol.uuid(), name: 'Approvals', key: 'DefaultApprover', value: ceo.id, ...audit(mkDay(2024, 2, 1), 600, ceo.id) });
  add('system_preferences', {
    id: rCol.uuid(),
    name: 'Finance',
    key: 'DefaultCurrency',
    value: mainCompany.currency,
    ...audit(mkDay(2024, 2, 1), 601, ceo.id),
  });
  add('system_preferences', { id: rCol.uuid(), name: 'Webhooks', key: 'WatchedField', value: 'Channel', ...audit(mkDay(2024, 2, 1), 602, ceo.id) });
}
