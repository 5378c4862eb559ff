// Named queries over collaboration on any document: teams (assignments), feed comments and replies,
// description versions and document history. DocumentType is the full type name the platform stores
// (Skill.Module.BusinessObjects.Deliverable), except in DE-Assignments, whose statement shortens it (Deliverable).
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { userName } from '../fragments.ts';

export const collaboration: NamedQueryDefinition[] = [
  {
    name: 'DE-Assignments',
    key: ['DocumentId', 'TeamId', 'UserId'],
    // The assignment's own columns, for keys and counts: team_id and user_id are NOT NULL foreign keys, so TeamId
    // (the team's id) is the assignment's team_id, and the key's order is the unique index (document, team, user).
    narrow: [
      {
        columns: ['DocumentId', 'TeamId', 'UserId', 'ModifiedOnUtc', 'ModifiedById'],
        source: (ctx) => sql`
          select a.document_id as "DocumentId", a.team_id as "TeamId", a.user_id as "UserId",
                 a.modified_on_utc as "ModifiedOnUtc", a.modified_by_id as "ModifiedById"
            from assignments a
           where a.tenant_id = ${ctx.tenantId}`,
      },
    ],
    // DocumentSubType: the business object type of the document's type (jobs, requests, estimates and
    // contracts have a job_types "type"; other documents have none).
    source: (ctx) => sql`
      select a.document_id as "DocumentId", dt.class_name as "DocumentType",
             (select bot.name
                from job_types jt
                join business_object_types bot on bot.tenant_id = jt.tenant_id and bot.id = jt.business_object_type_id
               where jt.tenant_id = a.tenant_id
                 and jt.id = case dt.class_name
                   when 'Deliverable' then (select x.job_type_id from jobs x where x.tenant_id = a.tenant_id and x.id = a.document_id)
                   when 'Request' then (select x.type_id from requests x where x.tenant_id = a.tenant_id and x.id = a.document_id)
                   when 'Estimate' then (select x.type_id from estimates x where x.tenant_id = a.tenant_id and x.id = a.document_id)
                   when 'Contract' then (select x.type_id from contracts x where x.tenant_id = a.tenant_id and x.id = a.document_id)
                 end) as "DocumentSubType",
             tm.id as "TeamId", tm.name as "Team", a.user_id as "UserId", ${userName('u')} as "User",
             a.modified_on_utc as "ModifiedOnUtc", a.modified_by_id as "ModifiedById", ${userName('mb')} as "ModifiedBy"
        from assignments a
        left join document_types dt on dt.tenant_id = a.tenant_id and dt.id = a.document_type_id
        left join teams tm on tm.tenant_id = a.tenant_id and tm.id = a.team_id
        left join users u on u.tenant_id = a.tenant_id and u.id = a.user_id
        left join users mb on mb.tenant_id = a.tenant_id and mb.id = a.modified_by_id
       where a.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Comments',
    key: ['CommentsId'],
    source: (ctx) => sql`
      select cm.id as "CommentsId", dt.full_name as "DocumentType", cm.document_id as "DocumentId",
             cm.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy", cb.image_file_id is not null as "CreatedByHasImage",
             cm.created_on_utc as "CreatedOnUtc", cm.modified_on_utc as "ModifiedOnUtc", cm.text as "Text",
             cm.is_visible_to_client as "IsVisibleToClient", cm.actions::text as "Actions", cm.reactions::text as "Reactions",
             exists (select 1 from comment_replies r where r.tenant_id = cm.tenant_id and r.comment_id = cm.id) as "HasReplies"
        from comments cm
        left join document_types dt on dt.tenant_id = cm.tenant_id and dt.id = cm.document_type_id
        left join users cb on cb.tenant_id = cm.tenant_id and cb.id = cm.created_by_id
       where cm.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-CommentsReplies',
    key: ['ReplyId'],
    source: (ctx) => sql`
      select r.id as "ReplyId", cm.id as "CommentsId", cm.document_id as "DocumentId", dt.full_name as "DocumentType",
             r.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy", cb.image_file_id is not null as "CreatedByHasImage",
             r.text as "Text", r.created_on_utc as "CreatedOnUtc", r.modified_on_utc as "ModifiedOnUtc",
             r.reactions::text as "Reactions", r.mentions::text as "Mentions"
        from comment_replies r
        join comments cm on cm.tenant_id = r.tenant_id and cm.id = r.comment_id
        left join document_types dt on dt.tenant_id = cm.tenant_id and dt.id = cm.document_type_id
        left join users cb on cb.tenant_id = r.tenant_id and cb.id = r.created_by_id
       where r.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Descriptions',
    key: ['DescriptionId'],
    // LatestVersion: the highest version of the same document (the unique (tenant, document, version) index answers it).
    source: (ctx) => sql`
      select ds.id as "DescriptionId", ds.plain_text as "Description", ds.text_html as "DescriptionHtml", ds.version as "Version",
             lv.version as "LatestVersion", ds.version = lv.version as "IsLastVersion",
             ds.document_id as "DocumentId", dt.full_name as "Document",
             ds.created_on_utc as "CreatedOn", ds.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy",
             ds.modified_on_utc as "ModifiedOn"
        from descriptions ds
        cross join lateral (select max(x.version) as version from descriptions x
                             where x.tenant_id = ds.tenant_id and x.document_id = ds.document_id) lv
        left join document_types dt on dt.tenant_id = ds.tenant_id and dt.id = ds.document_type_id
        left join users cb on cb.tenant_id = ds.tenant_id and cb.id = ds.created_by_id
       where ds.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-History',
    key: ['HistoryId'],
    // The history row's own columns, for keys and counts that read nothing else (index-only counts).
    narrow: [
      {
        columns: ['HistoryId', 'DocumentId', 'Version', 'StartDate', 'EndDate', 'UserId', 'Action', 'CreatedOnUtc'],
        source: (ctx) => sql`
          select h.id as "HistoryId", h.document_id as "DocumentId", h.version as "Version", h.start_date as "StartDate",
                 h.end_date as "EndDate", h.user_id as "UserId", h.action as "Action", h.created_on_utc as "CreatedOnUtc"
            from document_history h
           where h.tenant_id = ${ctx.tenantId}`,
      },
    ],
    source: (ctx) => sql`
      select h.id as "HistoryId", dt.full_name as "DocumentType", h.document_id as "DocumentId", h.version as "Version",
             h.start_date as "StartDate", h.end_date as "EndDate", h.user_id as "UserId", ${userName('u')} as "User",
             u.image_file_id is not null as "UserHasImage", h.action as "Action",
             st.id as "StageId", st.name as "Stage", st.color as "StageColor",
             sty.id as "StageTypeId", sty.name as "StageType", sty.color as "StageTypeColor",
             h.created_on_utc as "CreatedOnUtc"
        from document_history h
        left join document_types dt on dt.tenant_id = h.tenant_id and dt.id = h.document_type_id
        left join users u on u.tenant_id = h.tenant_id and u.id = h.user_id
        left join workflow_stages st on st.tenant_id = h.tenant_id and st.id = h.stage_id
        left join workflow_stage_types sty on sty.tenant_id = st.tenant_id and sty.id = st.stage_type_id
       where h.tenant_id = ${ctx.tenantId}`,
  },
];
