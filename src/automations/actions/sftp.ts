// SFTP actions (SftpListFiles, SftpDownload, SftpUpload, SftpMoveTo) over ssh2-sftp-client, with a
// password or a private key. The host is resolved first and checked against the webhook address guard,
// and the connection goes to the checked address, so a name cannot re-resolve elsewhere in between.
import { createHash } from 'node:crypto';
import dns from 'node:dns/promises';
import path from 'node:path/posix';
import type SftpClient from 'ssh2-sftp-client';
import { blockedReason } from '../../platform/outbound.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { type FileValue, fileBytes } from './file-value.ts';
import { fileInput, findFile, keepFile, mediaTypeOf } from './run-files.ts';

interface Target {
  host: string;
  port: number;
}

function parseHost(text: string): Target {
  const m = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m?.[1]) throw new ActionError(`ftpHostIp "${text}" is not host or host:port`);
  return { host: m[1], port: m[2] ? Number(m[2]) : 22 };
}

async function address(call: ActionCall, host: string): Promise<string> {
  let found: { address: string }[];
  try {
    found = await dns.lookup(host, { all: true });
  } catch (err) {
    throw new ActionError(`ftpHostIp ${host} does not resolve: ${(err as Error).message}`);
  }
  if (call.run.services.config.webhookAllowPrivateNetworks) return found[0].address;
  const allowed = found.find((a) => blockedReason(a.address) === null);
  if (!allowed)
    throw new ActionError(
      `refused to connect to ${host}: ${blockedReason(found[0].address)} address (set ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`,
    );
  return allowed.address;
}

async function connect(call: ActionCall, host: string, port: number, username: string, password: unknown, key: unknown): Promise<SftpClient> {
  // Loaded with the first connection: ~2 MB of heap (ssh2) a process that never connects would otherwise carry.
  const { default: Client } = await import('ssh2-sftp-client');
  const sftp = new Client();
  const left = Math.max(1000, call.run.deadline - Date.now());
  try {
    await sftp.connect({
      host: await address(call, host),
      port,
      username,
      ...(typeof password === 'string' && password !== '' ? { password } : {}),
      ...(key ? { privateKey: typeof key === 'string' ? key : fileBytes(key).bytes } : {}),
      readyTimeout: Math.min(20_000, left),
    });
    return sftp;
  } catch (err) {
    await sftp.end().catch(() => {});
    throw new ActionError(`SFTP ${host}:${port}: ${(err as Error).message.replace(/^connect: /, '')}`);
  }
}

/**
 * Runs fn on a connection made with the action's credentials. The connection serves the run's later SFTP
 * actions with the same server and credentials (one handshake per run, not per action), and is closed
 * when the run ends, or at once when an action on it fails.
 */
async function withSftp<T>(call: ActionCall, fn: (sftp: SftpClient) => Promise<T>): Promise<T> {
  // ftpPrivateKeyFile: the key's text, or the name (or path) of a file of the run that holds it.
  const keyGiven = call.get('ftpPrivateKeyFile') ?? call.get('ftpPrivateKey');
  const keyFile = findFile(call.run, keyGiven);
  const server = {
    ftpHostIp: call.text('ftpHostIp'),
    ftpUsername: call.text('ftpUsername'),
    ftpPassword: call.get('ftpPassword'),
    ftpPrivateKey: keyFile ? keyFile.bytes.toString('utf8') : keyGiven,
  };
  return withSftp0(call, server, fn);
}

export interface SftpServerSettings {
  ftpHostIp: string;
  ftpUsername: string;
  ftpPassword?: unknown;
  ftpPrivateKey?: unknown;
}

/** withSftp for a built-in action that holds the server's settings itself (the user feed's configuration key). */
export async function withSftpServer<T>(call: ActionCall, server: SftpServerSettings, fn: (sftp: SftpClient) => Promise<T>): Promise<T> {
  return withSftp0(call, server, fn);
}

async function withSftp0<T>(call: ActionCall, server: SftpServerSettings, fn: (sftp: SftpClient) => Promise<T>): Promise<T> {
  const { host, port } = parseHost(server.ftpHostIp);
  const username = server.ftpUsername;
  const password = server.ftpPassword;
  const key = server.ftpPrivateKey;
  const id = `sftp\n${createHash('sha256')
    .update(JSON.stringify([host, port, username, password ?? null, key ?? null]))
    .digest('hex')}`;
  const connections = call.run.connections;
  let entry = connections.get(id);
  if (!entry) {
    const value = connect(call, host, port, username, password, key);
    entry = { value, close: async () => void (await value.then((s) => s.end()).catch(() => {})) };
    connections.set(id, entry);
  }
  let sftp: SftpClient;
  try {
    sftp = (await entry.value) as SftpClient;
  } catch (err) {
    connections.delete(id);
    throw err;
  }
  try {
    return await fn(sftp);
  } catch (err) {
    connections.delete(id);
    await entry.close();
    if (err instanceof ActionError) throw err;
    throw new ActionError(`SFTP ${host}:${port}: ${(err as Error).message}`);
  }
}

/** The directory an action names: `ftpPath`, or `filePath` (the platform's SftpListFiles template and its Loop example write it so). */
function directory(call: ActionCall): string {
  return call.text('ftpPath') || call.text('filePath') || '.';
}

/** SftpListFiles: the files of `ftpPath` whose names contain `fileNameContains` and end with `fileNameEndsWith`, by name. */
const listFiles: Handler = async (call) => {
  const dir = directory(call);
  const contains = call.text('fileNameContains');
  const endsWith = call.text('fileNameEndsWith');
  const files = await withSftp(call, (sftp) => sftp.list(dir));
  const out = files
    .filter((f) => f.type === '-' && f.name.includes(contains) && f.name.endsWith(endsWith))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((f) => ({ name: f.name, path: path.join(dir, f.name), size: f.size, modifiedOnUtc: new Date(f.modifyTime).toISOString() }));
  return { output: out };
};

/**
 * The remote file an action names: `ftpPath` + `fileName` (the platform's fields), `filePath` + `fileName`
 * (its Loop example, filePath a directory), or `filePath` alone (Atrium's older shape: the whole path).
 */
function remoteFile(call: ActionCall): string {
  const name = call.text('fileName');
  const filePath = call.text('filePath');
  if (!name) {
    if (filePath) return filePath;
    throw new ActionError('fileName (with ftpPath) is required');
  }
  if (name.includes('/')) return name.startsWith('/') ? name : path.join(directory(call), name);
  return path.join(directory(call), name);
}

/**
 * SftpDownload: the file, kept in the run; the result is its path there (`tmp/<action>/<file name>`, what
 * ReadFileData's fileName, an SftpUpload's filePath or an attachment take). `fileType` Binary keeps a
 * text-looking file binary.
 */
const download: Handler = async (call) => {
  const file = remoteFile(call);
  const binary = call.text('fileType').toLowerCase() === 'binary';
  const limit = call.run.services.config.automationMaxOutputBytes;
  const bytes = await withSftp(call, async (sftp) => {
    const st = await sftp.stat(file);
    if (st.size > limit) throw new ActionError(`${file} is ${st.size} bytes; the limit is ${limit}`);
    return (await sftp.get(file)) as Buffer;
  });
  const name = path.basename(file);
  const type = binary ? 'application/octet-stream' : mediaTypeOf(name, 'text/plain');
  const kept = keepFile(call, name, type, bytes);
  // Atrium's older shape (`filePath` alone, the whole path) keeps its older result, the file object.
  if (call.raw('fileName') === undefined) {
    const older: FileValue = { fileName: name, contentType: type, size: bytes.length, contentBase64: bytes.toString('base64') };
    if (!binary) older.text = bytes.toString('utf8');
    return { output: older };
  }
  return { output: kept.path };
};

/**
 * SftpUpload: writes `ftpPath`/`fileName` (the folder made when missing) from `filePath`, a file of the run
 * (a Download's or SftpDownload's path, a file name, the producing action's name); Atrium's older `file` or
 * `body` (any value, written as its text) still work.
 */
const upload: Handler = async (call) => {
  const dir = call.text('ftpPath') || '.';
  const name = call.text('fileName');
  if (!name || name.includes('/')) throw new ActionError('fileName is the name the file gets on the server, not a path');
  let bytes: Buffer;
  const local = call.get('filePath');
  if (local !== undefined && local !== null && local !== '') {
    const f = findFile(call.run, local);
    if (!f) throw new ActionError(`filePath names no file of this run: "${asText(local).slice(0, 200)}"`);
    bytes = f.bytes;
  } else bytes = fileInput(call.run, call.get('file') ?? call.get('body') ?? '', name).bytes;
  const target = path.join(dir, name);
  await withSftp(call, async (sftp) => {
    if (!(await sftp.exists(dir))) await sftp.mkdir(dir, true);
    await sftp.put(bytes, target);
  });
  return { output: { path: target, size: bytes.length } };
};

/**
 * SftpMoveTo: moves `fileName` from `ftpPath` into `ftpToPath` (the folder made when missing), keeping its
 * name; the Loop example's `filePath`/`toFilePath` are read as the same two folders.
 */
const moveTo: Handler = async (call) => {
  const from = remoteFile(call);
  const toDir = call.text('ftpToPath') || call.text('toFilePath');
  if (!toDir) throw new ActionError('ftpToPath is required');
  const to = path.join(toDir, asText(call.get('newFileName')) || path.basename(from));
  await withSftp(call, async (sftp) => {
    if (!(await sftp.exists(toDir))) await sftp.mkdir(toDir, true);
    if (await sftp.exists(to)) await sftp.delete(to);
    await sftp.rename(from, to);
  });
  return { output: { from, to } };
};

export const SFTP_HANDLERS: Record<string, Handler> = { SftpListFiles: listFiles, SftpDownload: download, SftpUpload: upload, SftpMoveTo: moveTo };
