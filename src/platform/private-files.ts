// Files holding tenant data (exports, the data dir) are readable by the server's user only: directories
// 0700 and files 0600, set explicitly since the process umask may be anything.
import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` and any missing parents as private directories. Existing directories below `root` are ours
 * and made private too; `root` and its parents keep their mode unless this call created them, since an
 * operator may have chosen it.
 */
export async function mkdirPrivate(dir: string, root: string = dir): Promise<void> {
  const target = path.resolve(dir);
  const base = path.resolve(root);
  const first = await mkdir(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  const created = first === undefined ? null : path.resolve(first);
  const dirs = new Set<string>();
  for (let d = target; ; d = path.dirname(d)) {
    const ours = d !== base && isWithin(d, base);
    const madeNow = created !== null && isWithin(d, created);
    if (!ours && !madeNow) break;
    dirs.add(d);
    if (d === path.dirname(d)) break;
  }
  for (const d of dirs) await chmod(d, PRIVATE_DIR_MODE);
}

const isWithin = (child: string, parent: string): boolean => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};
