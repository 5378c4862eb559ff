// A real OpenSSH SFTP server for tests: its own sshd on a loopback port, with its own host key, config and
// authorized key in a temp dir, serving internal-sftp to the user running the tests (key authentication
// only). close() stops it and removes the temp dir. Needs /usr/sbin/sshd (openssh-server; .ci/run installs it).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const SSHD = '/usr/sbin/sshd';

export interface SftpServer {
  host: string;
  port: number;
  /** `127.0.0.1:port`, as ftpHostIp takes it. */
  address: string;
  username: string;
  /** The client's private key (OpenSSH format), authorized for username. */
  privateKey: string;
  /** A directory of the temp dir the tests may use as their remote root. */
  root: string;
  close: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function listening(port: number, until: number): Promise<void> {
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`sshd did not listen on ${port}`);
}

export async function startSftpServer(): Promise<SftpServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-sftp-'));
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { stdio: 'ignore' });
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'client_key'));
  await writeFile(path.join(dir, 'authorized_keys'), await readFile(path.join(dir, 'client_key.pub')), { mode: 0o600 });
  const root = path.join(dir, 'data');
  mkdirSync(root);
  const username = os.userInfo().username;
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${path.join(dir, 'host_key')}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    // Root may log in to this test server only, and only with the key above.
    'PermitRootLogin prohibit-password',
    `AllowUsers ${username}`,
    'StrictModes no',
    'UsePAM no',
    'Subsystem sftp internal-sftp',
  ].join('\n');
  await writeFile(path.join(dir, 'sshd_config'), `${config}\n`);
  // Run as root, sshd wants its privilege-separation directory.
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755, recursive: true });
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  try {
    await Promise.race([
      listening(port, Date.now() + 10_000),
      new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`sshd exited (${code}): ${stderr}`)))),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    host: '127.0.0.1',
    port,
    address: `127.0.0.1:${port}`,
    username,
    privateKey: await readFile(path.join(dir, 'client_key'), 'utf8'),
    root,
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(3000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
