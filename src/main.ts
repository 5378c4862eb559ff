// The `atrium` CLI: serve (default), migrate, tenants, apps, users, clusters.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import type { AppContext } from './platform/context.ts';
import { isOrphan, listClusters, pruneClusters, RELOCATE_ROOT, type RelocatedCluster } from './platform/db/clusters.ts';
import { DatabaseHandle } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { HttpProblem } from './platform/errors.ts';
import { startupLog } from './platform/log.ts';
import { createContext, loadSecretKey, openDatabase, startServer } from './server.ts';
import { createApp, createTenant, createUser, listTenants, revokeApp, rotateApp } from './tenancy/service.ts';

const USAGE = `Usage: atrium [command] [options]

Commands:
  serve                                   start the server (default)
  migrate                                 apply database migrations and exit
  tenants create --name N [--slug S] [--demo] [--scale S] [--json]
  tenants list [--json]
  apps create --tenant T --name N [--role R ...]
  apps rotate --tenant T --app A
  apps revoke --tenant T --app A
  users create --tenant T --username U [--password P] [--name N] [--email E] [--role R ...]
  clusters list [--dir D] [--json]        embedded clusters kept outside their DATA_DIR (running as root)
  clusters prune [--dir D] [--json]       remove those whose DATA_DIR no longer exists (never a running one)

Configuration comes from the environment (see README): PORT, HOST, DATABASE_URL, DATA_DIR,
ATRIUM_ADMIN_TOKEN, ATRIUM_SECRET_KEY, LOG_LEVEL, ATRIUM_ROLE, ATRIUM_PUBLIC_URL, ATRIUM_TENANT_HOST_PATTERN.`;

const err = (line: string) => process.stderr.write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      slug: { type: 'string' },
      demo: { type: 'boolean', default: false },
      scale: { type: 'string' },
      json: { type: 'boolean', default: false },
      tenant: { type: 'string' },
      app: { type: 'string' },
      role: { type: 'string', multiple: true },
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      dir: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command = 'serve', sub] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'clusters') return clusters(sub, values.dir ?? RELOCATE_ROOT, values.json);
  const config = loadConfig();
  if (command === 'serve') return serve(config);

  const need = (v: string | undefined, flag: string): string => {
    if (!v) throw new UsageError(`--${flag} is required`);
    return v;
  };
  const action = `${command}${sub ? ` ${sub}` : ''}`;
  const known = ['migrate', 'tenants create', 'tenants list', 'apps create', 'apps rotate', 'apps revoke', 'users create'];
  if (!known.includes(action)) throw new UsageError(`unknown command "${action}"`);
  return withContext(config, async (ctx) => {
    const print = (obj: unknown, text: string) => process.stdout.write(`${values.json ? JSON.stringify(obj, null, 2) : text}\n`);
    switch (action) {
      case 'migrate':
        print({ migrated: true }, 'Migrations are up to date.');
        return 0;
      case 'tenants create': {
        const scale = values.scale === undefined ? 1 : Number(values.scale);
        if (!Number.isFinite(scale) || scale <= 0) throw new UsageError('--scale must be a positive number');
        const creds = await createTenant(ctx, { name: need(values.name, 'name'), slug: values.slug, demoData: values.demo, scale, log: err });
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
      case 'apps create': {
        const app = await createApp(ctx, need(values.tenant, 'tenant'), { name: need(values.name, 'name'), roles: values.role ?? [] });
        print(app, `appId: ${app.appId}\nappSecret: ${app.appSecret}  (shown once)`);
        return 0;
      }
      case 'apps rotate': {
        const app = await rotateApp(ctx, need(values.tenant, 'tenant'), need(values.app, 'app'));
        print(app, `appId: ${app.appId}\nappSecret: ${app.appSecret}  (shown once)`);
        return 0;
      }
      case 'apps revoke': {
        const res = await revokeApp(ctx, need(values.tenant, 'tenant'), need(values.app, 'app'));
        print(res, `Revoked ${res.appId}.`);
        return 0;
      }
      default: {
        const user = await createUser(ctx, need(values.tenant, 'tenant'), {
          userName: need(values.username, 'username'),
          password: values.password,
          name: values.name,
          email: values.email,
          roles: values.role ?? [],
        });
        print(user, `userId: ${user.userId}\nusername: ${user.username}\npassword: ${user.password}`);
        return 0;
      }
    }
  });
}

class UsageError extends Error {}

/** No database needed: the clusters are read from the directory that holds them. */
async function clusters(sub: string | undefined, dir: string, json: boolean): Promise<number> {
  const describe = (c: RelocatedCluster) => {
    const state =
      c.runningPid !== null ? `running (pid ${c.runningPid})` : c.dataDir === null ? 'owner not recorded' : c.ownerExists ? 'in use' : 'DATA_DIR gone';
    return `${c.clusterDir}  ${(c.bytes / 1024 / 1024).toFixed(1)} MB  ${state}  ${c.dataDir ?? ''}`.trimEnd();
  };
  const out = (obj: unknown, text: string) => process.stdout.write(`${json ? JSON.stringify(obj, null, 2) : text}\n`);
  if (sub === 'list') {
    const all = await listClusters(dir);
    out(
      all.map((c) => ({ ...c, orphan: isOrphan(c) })),
      all.length ? all.map(describe).join('\n') : `No clusters in ${dir}.`,
    );
    return 0;
  }
  if (sub === 'prune') {
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
  throw new UsageError(`unknown command "clusters${sub ? ` ${sub}` : ''}"`);
}

async function withContext(config: ReturnType<typeof loadConfig>, fn: (ctx: AppContext) => Promise<number>): Promise<number> {
  const opened = await openDatabase(config, err);
  const db = new DatabaseHandle(opened.connectionString, { poolSize: 4 });
  try {
    await migrateToLatest(db.kysely);
    return await fn(createContext(config, db, await loadSecretKey(config, err)));
  } finally {
    await db.close();
    await opened.stop();
  }
}

async function serve(config: ReturnType<typeof loadConfig>): Promise<number> {
  const say = startupLog(config);
  const runtime = await startServer(config, say);
  say(runtime.address ? `Atrium listening on ${runtime.address} (role ${config.role})` : `Atrium worker running (role ${config.role})`);
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ConfigError || e instanceof UsageError) {
      err(e instanceof UsageError ? `atrium: ${e.message}\n\n${USAGE}` : e.message);
      process.exit(2);
    }
    // A refused value (a taken or malformed slug, an unknown role) is a message, not a crash.
    if (e instanceof HttpProblem) {
      err(`atrium: ${e.message}`);
      process.exit(1);
    }
    err(`atrium: ${(e as Error).stack ?? String(e)}`);
    process.exit(1);
  },
);
