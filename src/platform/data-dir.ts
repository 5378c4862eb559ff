// What a process finds under DATA_DIR or in its environment: the database to open (DATABASE_URL or the
// embedded cluster) and the secret key. Kept apart from the server so a command that needs only these
// (`atrium import`) starts without loading the server's modules.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { type Config, decodeSecretKey } from '../config.ts';
import { startEmbeddedPostgres } from './db/embedded-postgres.ts';
import { mkdirPrivate } from './private-files.ts';

export type Log = (line: string) => void;

export interface OpenedDatabase {
  connectionString: string;
  /** Stops the embedded cluster when this process started it; a no-op otherwise. */
  stop: () => Promise<void>;
  embedded: boolean;
}

const DATABASE_NAME = 'atrium';

/** DATABASE_URL, or the embedded cluster under DATA_DIR/pg (reused when a live process already runs it). */
export async function openDatabase(config: Config, log: Log): Promise<OpenedDatabase> {
  if (config.databaseUrl) return { connectionString: config.databaseUrl, stop: async () => {}, embedded: false };
  await mkdirPrivate(config.dataDir);
  const ownerFile = path.join(config.dataDir, 'embedded-postgres.json');
  const owner = existsSync(ownerFile) ? (JSON.parse(await readFile(ownerFile, 'utf8')) as { pid: number; connectionString: string }) : null;
  if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
    log(`Using the embedded PostgreSQL of running Atrium process ${owner.pid}.`);
    return { connectionString: owner.connectionString, stop: async () => {}, embedded: true };
  }
  const handle = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'pg'), log });
  const admin = new pg.Client({ connectionString: handle.connectionString });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) await admin.query(`create database ${DATABASE_NAME}`);
  } finally {
    await admin.end();
  }
  const url = new URL(handle.connectionString);
  url.pathname = `/${DATABASE_NAME}`;
  const connectionString = url.toString();
  await writeFile(ownerFile, JSON.stringify({ pid: process.pid, connectionString }), { mode: 0o600 });
  return { connectionString, stop: () => handle.stop(), embedded: true };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** ATRIUM_SECRET_KEY, or one generated into DATA_DIR/secret.key on the first start. */
export async function loadSecretKey(config: Config, log: Log): Promise<Buffer> {
  if (config.secretKey) return decodeSecretKey(config.secretKey);
  const file = path.join(config.dataDir, 'secret.key');
  if (existsSync(file)) return decodeSecretKey((await readFile(file, 'utf8')).trim());
  await mkdirPrivate(config.dataDir);
  const key = randomBytes(32).toString('hex');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  log(`Generated ATRIUM_SECRET_KEY into ${file}; back it up, or set ATRIUM_SECRET_KEY for every process sharing this database.`);
  return decodeSecretKey(key);
}
