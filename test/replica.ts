// A PostgreSQL primary and a streaming replica made from it, for tests. The embedded binaries have no
// pg_basebackup, so the base backup uses the low-level API (PostgreSQL docs, "Making a Base Backup Using
// the Low Level API"): pg_backup_start, a copy of the data directory without the files the docs exclude,
// pg_backup_stop, whose label becomes backup_label; standby.signal and primary_conninfo make it a standby
// that streams the WAL it needs from the primary (wal_level replica and the replication entries of
// pg_hba.conf are initdb's defaults).
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { removeClusterOf } from '../src/platform/db/clusters.ts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/platform/db/embedded-postgres.ts';

/** Directories whose contents a base backup leaves out (they are rebuilt or streamed). */
const EMPTIED = ['pg_wal', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans'];
const LEFT_OUT = ['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'standby.signal', 'recovery.signal'];

export interface ReplicatedCluster {
  primary: EmbeddedPostgresHandle;
  replica: EmbeddedPostgresHandle;
  /** postgres://… of `database` on each. */
  primaryUrl: string;
  replicaUrl: string;
  /** Stops the replica only (a test of reads falling back to the primary). */
  stopReplica: () => Promise<void>;
  /** Stops both and removes every file. */
  close: () => Promise<void>;
}

const withDatabase = (url: string, database: string) => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

export async function startReplicatedCluster(database: string): Promise<ReplicatedCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-replica-'));
  // Readable by the OS user PostgreSQL runs as when we are root, so the clusters stay inside it.
  await chmod(dir, 0o755);
  const quiet = () => {};
  const primary = await startEmbeddedPostgres({ dataDir: path.join(dir, 'primary'), fast: true, log: quiet });
  let replica: EmbeddedPostgresHandle | null = null;
  const cleanup = async () => {
    await replica?.stop();
    await primary.stop();
    for (const d of ['primary', 'replica']) await removeClusterOf(path.join(dir, d)).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const admin = new pg.Client({ connectionString: primary.connectionString });
    await admin.connect();
    try {
      await admin.query(`create database ${database}`);
      await admin.query(`select pg_backup_start('atrium-test-replica', true)`);
      const replicaDir = path.join(dir, 'replica');
      // cp -a keeps the owner (the postgres user, when we are root) and the modes PostgreSQL insists on.
      const copied = spawnSync('cp', ['-a', primary.clusterDir, replicaDir], { encoding: 'utf8' });
      if (copied.status !== 0) throw new Error(`copying the data directory failed: ${copied.stderr}`);
      for (const name of LEFT_OUT) await rm(path.join(replicaDir, name), { force: true });
      for (const name of EMPTIED) {
        const sub = path.join(replicaDir, name);
        for (const entry of await readdir(sub).catch(() => [] as string[])) {
          // pg_wal/archive_status stays (empty): PostgreSQL expects the directory.
          if (name === 'pg_wal' && entry === 'archive_status') continue;
          await rm(path.join(sub, entry), { recursive: true, force: true });
        }
      }
      const { rows } = await admin.query<{ labelfile: string; spcmapfile: string }>('select labelfile, spcmapfile from pg_backup_stop(true)');
      const owner = await stat(replicaDir);
      const write = async (name: string, text: string) => {
        const file = path.join(replicaDir, name);
        await writeFile(file, text, { mode: 0o600 });
        await chown(file, owner.uid, owner.gid);
      };
      await write('backup_label', rows[0].labelfile);
      if (rows[0].spcmapfile) await write('tablespace_map', rows[0].spcmapfile);
      await write('standby.signal', '');
      const p = new URL(primary.connectionString);
      const conninfo = `host=127.0.0.1 port=${primary.port} user=${p.username} password=${decodeURIComponent(p.password)} application_name=atrium-test-replica`;
      const auto = path.join(replicaDir, 'postgresql.auto.conf');
      await writeFile(auto, `primary_conninfo = '${conninfo}'\n`, { flag: 'a' });
    } finally {
      await admin.end();
    }
    replica = await startEmbeddedPostgres({ dataDir: path.join(dir, 'replica'), fast: true, log: quiet });
  } catch (err) {
    await cleanup();
    throw err;
  }
  const running = replica;
  return {
    primary,
    replica: running,
    primaryUrl: withDatabase(primary.connectionString, database),
    replicaUrl: withDatabase(running.connectionString, database),
    stopReplica: () => running.stop(),
    close: cleanup,
  };
}
