// Embedded clusters that had to live outside their DATA_DIR (postgres cannot reach it when we run as root)
// sit in one shared directory. Each records the DATA_DIR path it serves, so that clusters whose DATA_DIR
// is gone can be listed and removed (`atrium clusters list|prune`), and tests can remove what they made.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

export const RELOCATE_ROOT = '/var/lib/atrium-pg';
/** Inside the cluster directory; PostgreSQL ignores files it does not know. */
export const OWNER_MARKER = 'atrium-data-dir';

export interface RelocatedCluster {
  clusterDir: string;
  /** The path the cluster serves (DATA_DIR/pg, a symlink to clusterDir), or null when not recorded. */
  dataDir: string | null;
  /** The recorded path still exists. */
  ownerExists: boolean;
  /** pid of the postmaster when postmaster.pid names a live process. */
  runningPid: number | null;
  bytes: number;
}

export async function recordOwner(clusterDir: string, dataDir: string): Promise<void> {
  await fsp.writeFile(path.join(clusterDir, OWNER_MARKER), `${dataDir}\n`, { mode: 0o600 });
}

export async function listClusters(root: string = RELOCATE_ROOT): Promise<RelocatedCluster[]> {
  const entries = await fsp.readdir(root, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const clusters: RelocatedCluster[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const clusterDir = path.join(root, entry.name);
    const dataDir = (await fsp.readFile(path.join(clusterDir, OWNER_MARKER), 'utf8').catch(() => '')).trim() || null;
    const ownerExists =
      dataDir !== null &&
      (await fsp.lstat(dataDir).then(
        () => true,
        () => false,
      ));
    clusters.push({ clusterDir, dataDir, ownerExists, runningPid: runningPostmaster(clusterDir), bytes: await sizeOf(clusterDir) });
  }
  return clusters.sort((a, b) => a.clusterDir.localeCompare(b.clusterDir));
}

/** Whether the cluster may be removed: its recorded DATA_DIR is gone and no postmaster runs on it. */
export const isOrphan = (c: RelocatedCluster): boolean => c.dataDir !== null && !c.ownerExists && c.runningPid === null;

/** Removes the clusters whose DATA_DIR no longer exists; a running or unrecorded one is never touched. */
export async function pruneClusters(root: string = RELOCATE_ROOT): Promise<{ removed: RelocatedCluster[]; kept: RelocatedCluster[] }> {
  const removed: RelocatedCluster[] = [];
  const kept: RelocatedCluster[] = [];
  for (const cluster of await listClusters(root)) {
    // Checked again right before removing: a postmaster may have started since the listing.
    if (isOrphan(cluster) && runningPostmaster(cluster.clusterDir) === null) {
      await fsp.rm(cluster.clusterDir, { recursive: true, force: true });
      removed.push(cluster);
    } else kept.push(cluster);
  }
  return { removed, kept };
}

/**
 * Removes a DATA_DIR/pg and, when it is a symlink into the shared directory, the cluster it points to
 * (refused while it runs): what a test or an operator removing a DATA_DIR wants, where `rm -r` would keep the cluster.
 */
export async function removeClusterOf(dataDir: string, root: string = RELOCATE_ROOT): Promise<void> {
  const st = await fsp.lstat(dataDir).catch(() => undefined);
  if (st?.isSymbolicLink()) {
    const target = path.resolve(path.dirname(dataDir), await fsp.readlink(dataDir));
    if (path.dirname(target) === path.resolve(root)) {
      const pid = runningPostmaster(target);
      if (pid !== null) throw new Error(`the cluster of ${dataDir} (${target}) is running (postmaster ${pid}); stop it first`);
      await fsp.rm(target, { recursive: true, force: true });
    }
  }
  await fsp.rm(dataDir, { recursive: true, force: true });
}

function runningPostmaster(clusterDir: string): number | null {
  let pid: number;
  try {
    pid = Number.parseInt(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0], 10);
  } catch {
    return null;
  }
  if (!(pid > 0)) return null;
  try {
    process.kill(pid, 0);
    return pid; // a pid reused by another process also counts: when unsure, the cluster is kept
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fsp.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) total += (await fsp.lstat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
