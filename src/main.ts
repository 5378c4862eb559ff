// The `atrium` CLI: serve, migrate, tenants, apps, users, clusters. Mistakes on the command line are one
// line and the usage (exit 2); refusals (unknown tenant, taken slug) one line (exit 1); Ctrl-C 130. With
// --json, results are JSON on stdout and an error is one JSON object on stderr, with the same exit codes.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { type Command, parseCommandLine, USAGE, UsageError, type Values } from './cli/args.ts';
import { boundImportHeap } from './cli/import-heap.ts';
import { progressReporter } from './cli/progress.ts';
import { recordServedAddress, withServedAddress } from './cli/served-address.ts';
import { ConfigError, loadConfig } from './config.ts';
import { importCommand } from './import/cli.ts';
import { ImportError } from './import/client.ts';
import { SecretBox } from './platform/auth/hashing.ts';
import { AuthService } from './platform/auth/service.ts';
import type { AppContext } from './platform/context.ts';
import { loadSecretKey, openDatabase } from './platform/data-dir.ts';
import { isOrphan, listClusters, pruneClusters, RELOCATE_ROOT, type RelocatedCluster } from './platform/db/clusters.ts';
import { DatabaseHandle, isUuid } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { HttpProblem } from './platform/errors.ts';
import { SLUG_RE } from './platform/http/tenant-address.ts';
import { startupLog } from './platform/log.ts';

// The server's and the tenancy's modules are loaded by the commands that use them: `import` starts without
// them, in a third of the memory (decision 0067).
type Tenancy = typeof import('./tenancy/service.ts');
let tenancy: Tenancy | undefined;
const loadTenancy = async (): Promise<Tenancy> => (tenancy ??= await import('./tenancy/service.ts'));

const err = (line: string) => process.stderr.write(`${line}\n`);

/** --json anywhere on the line: errors too are JSON (decided before parsing, so a usage error is JSON as well). */
const jsonErrors = process.argv.slice(2).includes('--json');

/** A refusal the user chose (a deletion not confirmed): one line, exit 1. */
class NotConfirmed extends Error {}

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/** Ctrl-C while a command runs: aborts it (rolled back) rather than killing the process mid-transaction. */
const interrupt = new AbortController();

async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.version) {
    process.stdout.write(`atrium ${VERSION}\n`);
    return 0;
  }
  const { command, values } = parsed;
  if (command === 'clusters list' || command === 'clusters prune') return clusters(command, values.dir ?? RELOCATE_ROOT, values.json ?? false);
  const config = loadConfig();
  if (command === 'serve') return serve(config);
  if (command === 'import') {
    boundImportHeap();
    return withDatabase(config, async (db, key) => {
      const box = new SecretBox(key);
      const into = await resolveTenant({ db, auth: new AuthService(db, box, config) }, values.into!);
      return importCommand(values, into, db, { box, allowPrivateNetworks: config.webhookAllowPrivateNetworks });
    });
  }
  return withContext(withServedAddress(config), (ctx) => run(ctx, command, values));
}

async function run(ctx: AppContext, command: Exclude<Command, 'serve' | 'clusters list' | 'clusters prune' | 'import'>, values: Values): Promise<number> {
  // The options each command requires are there: parseCommandLine checked them.
  const { createApp, createTenant, createUser, listApps, listTenants, listUsersWithRoles, revokeApp, rotateApp } = await loadTenancy();
  const print = (obj: unknown, text: string) => process.stdout.write(`${values.json ? JSON.stringify(obj, null, 2) : text}\n`);
  const tenant = () => resolveTenant(ctx, values.tenant!);
  switch (command) {
    case 'migrate':
      print({ migrated: true }, 'Migrations are up to date.');
      return 0;
    case 'tenants create': {
      const scale = values.scale === undefined ? 1 : Number(values.scale);
      const reporter = progressReporter({ write: (t) => process.stderr.write(t), tty: process.stderr.isTTY === true });
      const showProgress = values.progress ?? process.stderr.isTTY === true;
      const creds = await createTenant(ctx, {
        name: values.name!,
        slug: values.slug,
        demoData: values.demo ?? false,
        scale,
        log: reporter.log,
        progress: showProgress ? reporter.progress : undefined,
        signal: interrupt.signal,
      });
      print(
        creds,
        Object.entries(creds)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      );
      return 0;
    }
    case 'tenants list': {
      const tenants = await listTenants(ctx);
      print(tenants, tenants.map((t) => `${t.id}  ${t.slug}  ${t.name}`).join('\n'));
      return 0;
    }
    case 'tenants delete': {
      const id = await tenant();
      if (!values.yes) await confirmDeletion(ctx, id);
      const { deleteTenant } = await import('./tenancy/delete-tenant.ts');
      const deleted = await deleteTenant(ctx, id);
      const total = Object.values(deleted.rows).reduce((a, b) => a + b, 0);
      print(
        deleted,
        `Deleted tenant ${deleted.slug} (${deleted.tenantId}): ${total} rows in ${Object.keys(deleted.rows).length} tables, ${deleted.customTables.length} custom tables, ${deleted.jobs} queued jobs.`,
      );
      return 0;
    }
    case 'apps list': {
      const apps = await ctx.db.withTenant(await tenant(), (trx) => listApps(trx));
      print(
        apps,
        apps.length
          ? apps.map((a) => `${a.appId}  ${a.name}  ${a.revokedOnUtc ? 'revoked' : 'active'}  ${a.roles.join(',')}`.trimEnd()).join('\n')
          : 'No apps.',
      );
      return 0;
    }
    case 'users list': {
      const { users } = await ctx.db.withTenant(await tenant(), (trx) => listUsersWithRoles(trx));
      print(
        users,
        users.length
          ? users.map((u) => `${u.id}  ${u.userName}  ${u.isActive ? 'active' : 'inactive'}  ${u.roles.join(',')}`.trimEnd()).join('\n')
          : 'No users.',
      );
      return 0;
    }
    case 'apps create': {
      const app = await createApp(ctx, await tenant(), { name: values.name!, roles: values.role ?? [] });
      print(app, `appId: ${app.appId}\nappSecret: ${app.appSecret}  (shown once)`);
      return 0;
    }
    case 'apps rotate': {
      const app = await rotateApp(ctx, await tenant(), values.app!);
      print(app, `appId: ${app.appId}\nappSecret: ${app.appSecret}  (shown once)`);
      return 0;
    }
    case 'apps revoke': {
      const res = await revokeApp(ctx, await tenant(), values.app!);
      print(res, `Revoked ${res.appId}.`);
      return 0;
    }
    case 'users create': {
      const user = await createUser(ctx, await tenant(), {
        userName: values.username!,
        password: values.password,
        name: values.name,
        email: values.email,
        roles: values.role ?? [],
      });
      print(user, `userId: ${user.userId}\nusername: ${user.username}\npassword: ${user.password}`);
      return 0;
    }
  }
}

/** --tenant takes an id or a slug, as X-AppTenant does; neither naming a tenant is a refusal of one line. */
async function resolveTenant(ctx: Pick<AppContext, 'db' | 'auth'>, given: string): Promise<string> {
  const id = isUuid(given)
    ? ((await ctx.db.kysely.selectFrom('tenants').select('id').where('id', '=', given.toLowerCase()).executeTakeFirst())?.id ?? null)
    : SLUG_RE.test(given)
      ? await ctx.auth.tenantIdForSlug(given)
      : null;
  if (!id) throw new HttpProblem(404, `no tenant "${given}" (neither a tenant id nor a slug of one; see \`atrium tenants list\`)`);
  return id;
}

/** Without --yes, the user types the tenant's slug on a terminal; with no terminal to ask, --yes is required. */
async function confirmDeletion(ctx: AppContext, tenantId: string): Promise<void> {
  if (!process.stdin.isTTY) throw new UsageError('tenants delete asks for confirmation on a terminal; without one, pass --yes');
  const t = await ctx.db.asOwner((trx) => trx.selectFrom('tenants').select(['name', 'slug']).where('id', '=', tenantId).executeTakeFirstOrThrow());
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(
      `This deletes tenant "${t.name}" (${t.slug}, ${tenantId}) and every row of it; it cannot be undone.\nType its slug to confirm: `,
    );
    if (answer.trim() !== t.slug) throw new NotConfirmed(`not confirmed ("${answer.trim().slice(0, 100)}" is not ${t.slug}); nothing was deleted`);
  } finally {
    rl.close();
  }
}

/** No database needed: the clusters are read from the directory that holds them. */
async function clusters(command: 'clusters list' | 'clusters prune', dir: string, json: boolean): Promise<number> {
  const describe = (c: RelocatedCluster) => {
    const state =
      c.runningPid !== null ? `running (pid ${c.runningPid})` : c.dataDir === null ? 'owner not recorded' : c.ownerExists ? 'in use' : 'DATA_DIR gone';
    return `${c.clusterDir}  ${(c.bytes / 1024 / 1024).toFixed(1)} MB  ${state}  ${c.dataDir ?? ''}`.trimEnd();
  };
  const out = (obj: unknown, text: string) => process.stdout.write(`${json ? JSON.stringify(obj, null, 2) : text}\n`);
  if (command === 'clusters list') {
    const all = await listClusters(dir);
    out(
      all.map((c) => ({ ...c, orphan: isOrphan(c) })),
      all.length ? all.map(describe).join('\n') : `No clusters in ${dir}.`,
    );
    return 0;
  }
  {
    const { removed, kept } = await pruneClusters(dir);
    const freed = removed.reduce((sum, c) => sum + c.bytes, 0);
    out(
      { removed, kept },
      [
        ...removed.map((c) => `removed ${describe(c)}`),
        `Removed ${removed.length} cluster(s), ${(freed / 1024 / 1024).toFixed(1)} MB; kept ${kept.length}.`,
      ].join('\n'),
    );
    return 0;
  }
}

async function withContext(config: ReturnType<typeof loadConfig>, fn: (ctx: AppContext) => Promise<number>): Promise<number> {
  const { createContext } = await import('./server.ts');
  return withDatabase(config, (db, key) => fn(createContext(config, db, key)));
}

/** The database opened and migrated, and the secret key, for one command; closed once it has unwound. */
async function withDatabase(config: ReturnType<typeof loadConfig>, fn: (db: DatabaseHandle, key: Buffer) => Promise<number>): Promise<number> {
  const opened = await openDatabase(config, err);
  const db = new DatabaseHandle(opened.connectionString, { poolSize: 4 });
  let deadline: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) process.exit(130);
    err(`${signal}: stopping; what was under way is rolled back`);
    interrupt.abort();
    // A step that cannot be cancelled must not keep the process: nothing uncommitted survives its exit.
    deadline = setTimeout(() => process.exit(130), 1500).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await migrateToLatest(db.kysely);
    return await fn(db, await loadSecretKey(config, err));
  } finally {
    // The command has unwound: closing the pool and stopping an embedded PostgreSQL may take their time.
    clearTimeout(deadline);
    await db.close();
    await opened.stop();
  }
}

async function serve(config: ReturnType<typeof loadConfig>): Promise<number> {
  const say = startupLog(config);
  const { startServer } = await import('./server.ts');
  const runtime = await startServer(config, say);
  say(runtime.address ? `Atrium listening on ${runtime.address} (role ${config.role})` : `Atrium worker running (role ${config.role})`);
  // Not awaited: the signal handlers below must be in place as soon as the banner is out.
  if (runtime.address && config.role !== 'worker') recordServedAddress(config, runtime.address).catch(() => {});
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        process.stderr.write(`${signal} again: exiting now\n`);
        process.exit(1);
      }
      stopping = true;
      say(`${signal}: shutting down (draining requests, stopping workers and PostgreSQL)`);
      runtime.close().then(
        () => resolve(0),
        (e: unknown) => {
          err(`shutdown failed: ${(e as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
}

/** Writes the error (one line, or one JSON object with --json) and exits with its code. */
function fail(message: string, exitCode: number, extra: { usage?: boolean; code?: string } = {}): never {
  if (jsonErrors) err(JSON.stringify({ error: { message, exitCode, ...(extra.code ? { code: extra.code } : {}) } }));
  else err(extra.usage ? `atrium: ${message}\n\n${USAGE}` : message);
  process.exit(exitCode);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) fail(e.message, 2, { usage: true });
    if (e instanceof ConfigError) fail(e.message, 2);
    if (tenancy && e instanceof tenancy.TenantCreationAborted) fail(jsonErrors ? e.message : `atrium: ${e.message}`, 130);
    // A refused value (a taken or malformed slug, an unknown role) is a message, not a crash.
    if (e instanceof HttpProblem || e instanceof NotConfirmed || e instanceof ImportError) fail(jsonErrors ? e.message : `atrium: ${e.message}`, 1);
    // The database refusing or unreachable (a SQLSTATE, or ECONNREFUSED and its kind) is its message, not a crash.
    const code = (e as { code?: unknown }).code ?? ((e as Error).cause as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && /^([0-9A-Z]{5}|E[A-Z]+)$/.test(code)) {
      fail(jsonErrors ? (e as Error).message || code : `atrium: ${(e as Error).message || code} (${code})`, 1, { code });
    }
    fail(jsonErrors ? String((e as Error).message ?? e) : `atrium: ${(e as Error).stack ?? String(e)}`, 1);
  },
);
