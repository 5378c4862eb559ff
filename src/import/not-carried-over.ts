// What an import cannot bring over, because no named query (nor the Custom Tables or webhook APIs)
// exposes it, each with how to set it up in Atrium afterwards. Listed in every report, with how many
// images of the target are held by the source (to upload again).
import type { DatabaseHandle } from '../platform/db/database.ts';
import { imagesHeldBySource } from './mappings/images.ts';

export interface NotCarriedOver {
  what: string;
  why: string;
  setUp: string;
  /** How many rows of the target this concerns, where it can be counted (images to upload again). */
  count?: number;
}

export const NOT_CARRIED_OVER: NotCarriedOver[] = [
  {
    what: 'passwords and logins',
    why: 'no named query exposes a password or a login; each user gets the e-mail (else the user id) as login and no password',
    setUp: 'users sign in through SSO/SCIM, or an administrator sets passwords (Integration API or `atrium users create` for new ones)',
  },
  {
    what: 'role grants of users and apps',
    why: 'no named query lists roles; the target keeps its own apps and their roles',
    setUp: 'grant roles with the Integration API or the console; create apps with `atrium apps create --role …`',
  },
  {
    what: "transition rules (actions' settings, restrictions to job types) and team memberships",
    why: 'shown only as names joined in text (DE-Transitions), not as rows',
    setUp: 'set them up on each workflow transition in the console',
  },
  {
    what: 'images and files (users, companies, clients)',
    why:
      'queries show only whether an image exists (…HasImage), never the file: each company, user or client the source shows with an ' +
      "image points at a file row without content, in the folder 'Images held by the source (atrium import)'",
    setUp: 'upload them again through the Client API',
  },
  {
    what: 'whether a leave type counts in hours, and the user leave-day hours',
    why: "DE-Leaves shows each leave's hours, not the rule that made them",
    setUp: "leave types arrive as hourly with each leave's hours as shown; set day-based types and users' leave-day hours by hand",
  },
  {
    what: "timesheet and leave tombstones' original content",
    why: 'the *Deleted queries show only the id and the deletion time',
    setUp: 'nothing to do: deleted rows stay hidden as on the source',
  },
  {
    what: 'webhook subscription secrets',
    why: "a subscription's secret cannot be read back",
    setUp: "imported subscriptions are inactive, each with a new secret the report lists once: give it to the receiver, then set the subscription's Active",
  },
  {
    what: 'whether an expense type is mileage',
    why: 'no named query shows it (DE-ExpenseType shows the value, not what it multiplies)',
    setUp: 'mark mileage types again in the console or with the Client API',
  },
];

const IMAGES = 'images and files (users, companies, clients)';

/** The list of a finished run: the images entry says how many the target holds only as the source's. */
export async function notCarriedOverOf(db: DatabaseHandle, tenantId: string): Promise<NotCarriedOver[]> {
  const held = await db.withTenant(tenantId, (trx) => imagesHeldBySource(trx, tenantId));
  const count = held.companies + held.users + held.commercial_clients;
  return NOT_CARRIED_OVER.map((n) =>
    n.what === IMAGES
      ? {
          ...n,
          what: `${n.what}: ${count} image${count === 1 ? '' : 's'} to upload again (${held.companies} of companies, ${held.users} of users, ${held.commercial_clients} of clients)`,
          count,
        }
      : n,
  );
}
