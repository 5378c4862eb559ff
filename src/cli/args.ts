// The `atrium` command line: which commands exist, the options each takes, and parsing that turns every
// mistake (an unknown or misspelt option or command, a missing value) into a UsageError of one line.
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

const OPTIONS = {
  name: { type: 'string' },
  slug: { type: 'string' },
  demo: { type: 'boolean' },
  scale: { type: 'string' },
  progress: { type: 'boolean' },
  json: { type: 'boolean' },
  tenant: { type: 'string' },
  app: { type: 'string' },
  role: { type: 'string', multiple: true },
  username: { type: 'string' },
  password: { type: 'string' },
  email: { type: 'string' },
  dir: { type: 'string' },
  from: { type: 'string' },
  'app-id': { type: 'string' },
  'app-secret': { type: 'string' },
  user: { type: 'string' },
  into: { type: 'string' },
  since: { type: 'string' },
  only: { type: 'string' },
  merge: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

type OptionName = keyof typeof OPTIONS;

/** Each command with the options it takes (beyond --help); the usage text is written from this table. */
export const COMMANDS = {
  serve: { options: [], usage: 'serve', about: 'start the server (what `npm start` runs)' },
  migrate: { options: ['json'], usage: 'migrate', about: 'apply database migrations and exit' },
  'tenants create': {
    options: ['name', 'slug', 'demo', 'scale', 'progress', 'json'],
    required: ['name'],
    usage: 'tenants create --name N [--slug S] [--demo [--scale S] [--[no-]progress]] [--json]',
  },
  'tenants list': { options: ['json'], usage: 'tenants list [--json]' },
  'tenants delete': {
    options: ['tenant', 'yes', 'json'],
    required: ['tenant'],
    usage: 'tenants delete --tenant T [--yes] [--json]',
    about: 'delete the tenant and every row of it (asks to type its slug unless --yes)',
  },
  'apps create': {
    options: ['tenant', 'name', 'role', 'json'],
    required: ['tenant', 'name'],
    usage: 'apps create --tenant T --name N [--role R ...] [--json]',
  },
  'apps rotate': { options: ['tenant', 'app', 'json'], required: ['tenant', 'app'], usage: 'apps rotate --tenant T --app A [--json]' },
  'apps revoke': { options: ['tenant', 'app', 'json'], required: ['tenant', 'app'], usage: 'apps revoke --tenant T --app A [--json]' },
  'apps list': { options: ['tenant', 'json'], required: ['tenant'], usage: 'apps list --tenant T [--json]' },
  'users create': {
    options: ['tenant', 'username', 'password', 'name', 'email', 'role', 'json'],
    required: ['tenant', 'username'],
    usage: 'users create --tenant T --username U [--password P] [--name N] [--email E] [--role R ...] [--json]',
  },
  'users list': {
    options: ['tenant', 'json'],
    required: ['tenant'],
    usage: 'users list --tenant T [--json]',
    about: 'the first 1000 by user name, with roles',
  },
  import: {
    options: ['from', 'tenant', 'app-id', 'app-secret', 'user', 'into', 'since', 'only', 'merge', 'json'],
    required: ['from', 'tenant', 'app-id', 'into'],
    usage: 'import --from URL --tenant T --app-id A [--app-secret S] [--user U] --into T [--since ISO] [--only Q,…] [--merge] [--json]',
    about:
      'copy a tenant from a platform (or Atrium) Data Extraction API into a tenant here (docs/import.md); the secret may come from ATRIUM_IMPORT_APP_SECRET',
  },
  'clusters list': {
    options: ['dir', 'json'],
    usage: 'clusters list [--dir D] [--json]',
    about: 'embedded clusters kept outside their DATA_DIR (running as root)',
  },
  'clusters prune': {
    options: ['dir', 'json'],
    usage: 'clusters prune [--dir D] [--json]',
    about: 'remove those whose DATA_DIR no longer exists (never a running one)',
  },
} as const satisfies Record<string, { options: readonly OptionName[]; required?: readonly OptionName[]; usage: string; about?: string }>;

export type Command = keyof typeof COMMANDS;

const commandLines = Object.values(COMMANDS)
  .map((c) => {
    const about = 'about' in c ? c.about : '';
    return `  ${about ? c.usage.padEnd(40) : c.usage}${about ? ` ${about}` : ''}`;
  })
  .join('\n');

export const USAGE = `Usage: atrium <command> [options]
       atrium --version

Commands:
${commandLines}

  T is a tenant id or slug. --progress shows rows, rate and ETA of long table loads (default: on when
  stderr is a terminal). Exit status: 0 done, 1 refused or failed (unknown tenant or app, taken slug,
  database error, deletion not confirmed), 2 usage or configuration error, 130 interrupted (Ctrl-C;
  nothing half-created). With --json, output is JSON on stdout and an error is one JSON object on stderr:
  {"error": {"message": ..., "exitCode": ...}}.

Configuration comes from the environment (the README lists every variable), e.g. PORT, HOST, DATABASE_URL,
DATA_DIR, ATRIUM_ADMIN_TOKEN, ATRIUM_SECRET_KEY, LOG_LEVEL, LOG_FORMAT, ATRIUM_ROLE, ATRIUM_PUBLIC_URL,
ATRIUM_TENANT_HOST_PATTERN, ATRIUM_TRUST_PROXY, ATRIUM_CORS_ORIGINS.`;

export type Values = {
  [K in OptionName]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

export type Parsed = { help: true } | { version: true; help: false } | { help: false; version?: false; command: Command; values: Values };

/** `atrium` alone and `--help` anywhere ask for help; anything not in COMMANDS is a UsageError. */
export function parseCommandLine(argv: string[]): Parsed {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; allowNegative: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, allowNegative: true, strict: true });
  } catch (e) {
    throw new UsageError(describeParseError(e as Error & { code?: string }, argv));
  }
  const { values, positionals } = parsed;
  if (values.version && positionals.length === 0) return { version: true, help: false };
  if (values.version) throw new UsageError('--version takes no command');
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { help: true };
  const [first, second] = positionals;
  const command = (first in COMMANDS ? first : `${first} ${second ?? ''}`.trim()) as Command;
  if (!(command in COMMANDS)) {
    const subs = Object.keys(COMMANDS).filter((c) => c.startsWith(`${first} `));
    if (subs.length && second === undefined) throw new UsageError(`"${first}" needs a subcommand: ${subs.map((c) => c.split(' ')[1]).join(', ')}`);
    throw new UsageError(unknownCommand(positionals.slice(0, 2).join(' ')));
  }
  const used = command.split(' ').length;
  if (positionals.length > used) throw new UsageError(`unexpected argument "${positionals[used]}" after "${command}"`);
  const allowed = COMMANDS[command].options as readonly string[];
  for (const key of Object.keys(values)) {
    if (key !== 'help' && !allowed.includes(key)) throw new UsageError(`option --${key} does not apply to "${command}"`);
  }
  // Checked before anything opens the database, so a mistake costs no start of PostgreSQL.
  const { required = [] } = COMMANDS[command] as { required?: readonly OptionName[] };
  for (const key of required) {
    if (!values[key]) throw new UsageError(`--${key} is required for "${command}"`);
  }
  if (values.scale !== undefined) {
    const scale = Number(values.scale);
    if (!values.demo) throw new UsageError('--scale applies with --demo only');
    if (!Number.isFinite(scale) || scale <= 0 || scale > 200) throw new UsageError('--scale must be a number above 0 and at most 200');
  }
  return { help: false, command, values: values as Values };
}

function describeParseError(e: Error & { code?: string }, argv: string[]): string {
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /'([^']+)'/.exec(e.message)?.[1] ?? '';
    const name = given.replace(/^-+/, '').split('=')[0];
    const near = nearest(name, Object.keys(OPTIONS));
    return `unknown option ${given}${near ? ` (did you mean --${near}?)` : ''}`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // Node's message names the option and what it takes; its first sentence is the line a user needs.
    return e.message.split('\n')[0].replace(/\.$/, '');
  }
  return `${e.message.split('\n')[0]} (in: ${argv.join(' ')})`;
}

function unknownCommand(given: string): string {
  const near = nearest(given, Object.keys(COMMANDS));
  return `unknown command "${given}"${near ? ` (did you mean "${near}"?)` : ''}`;
}

/** The candidate a typo most likely meant: within two edits (or one for short words), else none. */
export function nearest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= (word.length <= 4 ? 1 : 2) ? best : null;
}

/** Edits (insert, delete, substitute, swap two neighbours) from a to b: a swap is the commonest typo. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
