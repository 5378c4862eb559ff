// What the user-feed tests share: an SFTP-HRFEED key pointing at the test's sshd, the feed's CSV rows, and
// reads of the files the feed leaves on the server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type FeedRecord, RECORD_FIELDS } from '../src/user-feed/records.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from './sftp-server.ts';

/** The header row of a feed file: the spec's record fields, as the feed reads them. */
export const HEADER = RECORD_FIELDS;

export type FeedRow = FeedRecord;

const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
export const csv = (rows: FeedRow[]): string => `${[HEADER.join(','), ...rows.map((r) => HEADER.map((h) => cell(r[h] ?? '')).join(','))].join('\r\n')}\r\n`;

export interface FeedFolders {
  data: string;
  success: string;
  failure: string;
}

export async function configureFeed(server: TestServer, h: Record<string, string>, sftp: SftpServer, name: string): Promise<FeedFolders> {
  const data = path.join(sftp.root, name, 'Data');
  await mkdir(data, { recursive: true });
  const folders = { data, success: path.join(data, 'Success'), failure: path.join(data, 'Failure') };
  const key = await server.request('PUT', '/api/configuration-keys/SFTP-HRFEED', {
    headers: h,
    json: {
      ftpHostIp: sftp.address,
      ftpUsername: sftp.username,
      ftpPrivateKey: sftp.privateKey,
      ftpPath: folders.data,
      ftpToPathSuccess: folders.success,
      ftpToPathFailure: folders.failure,
      fileNameContains: 'AD_UserAccounts_',
    },
  });
  assert.ok(key.status === 200 || key.status === 201, key.text);
  return folders;
}

export const put = (folder: string, name: string, content: string) => writeFile(path.join(folder, name), content);
export const list = async (folder: string): Promise<string[]> => (existsSync(folder) ? (await readdir(folder)).sort() : []);
export const readJson = async (folder: string, name: string) => JSON.parse(await readFile(path.join(folder, name), 'utf8'));

/** What a user-feed test starts with: a real sshd, a server, a tenant whose SFTP-HRFEED key points at it, a database client. */
export interface FeedFixture {
  server: TestServer;
  sftp: SftpServer;
  db: pg.Client;
  tenant: TenantCredentials;
  h: Record<string, string>;
  folders: FeedFolders;
  /** The fields every row of the tenant's files carries (its company and department, active, permanent). */
  base: FeedRow;
  close: () => Promise<void>;
}

export async function startFeedFixture(opts: { env: Record<string, string>; tenantName: string; folder: string }): Promise<FeedFixture> {
  assert.ok(existsSync(SSHD), 'openssh-server is installed (.ci/run installs it)');
  const sftp = await startSftpServer();
  const server = await startTestServer({ ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...opts.env });
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  const tenant = await server.createTenant(opts.tenantName);
  const h = appHeaders(tenant);
  const folders = await configureFeed(server, h, sftp, opts.folder);
  const base: FeedRow = { companyCode: tenant.companyCode, departmentid: tenant.departmentExternalId, userType: 'Regular/Permanent', isActive: 'true' };
  const close = async () => {
    await db.end();
    await server.close();
    await sftp.close();
  };
  return { server, sftp, db, tenant, h, folders, base, close };
}

/** A feed row of `base` for one user: externalId, name and username from the id, then `extra`. */
export const feedRow = (base: FeedRow, externalId: string, extra: FeedRow = {}): FeedRow => ({
  ...base,
  externalId,
  name: `User ${externalId}`,
  username: externalId.toLowerCase(),
  ...extra,
});
