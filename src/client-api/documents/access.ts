// What the acting user may do to a document: its type's Read/Write role, and, while the document sits
// in a stage that names write teams, membership of the document's team in one of them. Administrator
// (and an app without X-AppUser holding it) passes both.
import { sql } from 'kysely';
import { hasRole, isAdministrator, type Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { forbidden, HttpProblem } from '../../platform/errors.ts';
import type { DocumentDef } from './registry.ts';

export function requireRead(actor: Principal, def: Pick<DocumentDef, 'roles'>): void {
  if (!hasRole(actor, def.roles.read) && !hasRole(actor, def.roles.write)) throw forbidden([def.roles.read, def.roles.write]);
}

export function requireWrite(actor: Principal, def: Pick<DocumentDef, 'roles'>): void {
  if (!hasRole(actor, def.roles.write)) throw forbidden(def.roles.write);
}

export interface StageWrite {
  allowed: boolean;
  /** The teams that may write in the stage (empty: anyone with the Write role). */
  teams: string[];
}

/** Whether the actor may write in the document's stage: no write teams, Administrator, or on the document's team in one of them. */
export async function stageWrite(trx: Trx, actor: Principal, documentId: string, stageId: string | null): Promise<StageWrite> {
  if (!stageId) return { allowed: true, teams: [] };
  const { rows } = await sql<{ name: string; member: boolean }>`
    select t.name, exists (select 1 from assignments a where a.document_id = ${documentId} and a.team_id = t.id and a.user_id = ${actor.userId}) as member
      from workflow_stage_write_teams w join teams t on t.tenant_id = w.tenant_id and t.id = w.team_id
     where w.stage_id = ${stageId}
     order by t.name`.execute(trx);
  const teams = rows.map((r) => r.name);
  return { allowed: rows.length === 0 || isAdministrator(actor) || rows.some((r) => r.member), teams };
}

/** 403 naming the teams when the actor may not change the document in its current stage. */
export async function requireStageWrite(trx: Trx, actor: Principal, documentId: string, stage: { id: string | null; name: string | null }): Promise<void> {
  const access = await stageWrite(trx, actor, documentId, stage.id);
  if (access.allowed) return;
  throw new HttpProblem(403, `In stage "${stage.name}" only members of the document's team ${access.teams.map((t) => `"${t}"`).join(' or ')} may change it.`, {
    extra: { requiredTeams: access.teams, currentStageId: stage.id, currentStage: stage.name },
  });
}
