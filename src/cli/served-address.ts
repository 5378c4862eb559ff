// Where the server of this data directory listens, for the CLI: `atrium tenants list` run in another shell
// (without the server's PORT) prints base URLs the server really answers on. The server records its address
// in DATA_DIR when it listens; ATRIUM_PUBLIC_URL, or PORT given to the CLI, still wins.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';

const FILE = 'served-address.json';

export async function recordServedAddress(config: Config, address: string): Promise<void> {
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(path.join(config.dataDir, FILE), `${JSON.stringify({ address, pid: process.pid })}\n`);
}

/** The config with publicUrl from the served address, unless ATRIUM_PUBLIC_URL or PORT says otherwise. */
export function withServedAddress(config: Config, env: NodeJS.ProcessEnv = process.env): Config {
  const file = path.join(config.dataDir, FILE);
  if (config.publicUrlExplicit || env.PORT || !existsSync(file)) return config;
  try {
    const { address } = JSON.parse(readFileSync(file, 'utf8')) as { address?: unknown };
    if (typeof address === 'string' && /^https?:\/\/[^/]+$/.test(address)) return { ...config, publicUrl: address };
  } catch {
    // An unreadable record: the configured address stands.
  }
  return config;
}
