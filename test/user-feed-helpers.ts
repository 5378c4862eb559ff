// What the user-feed tests share: an SFTP-HRFEED key pointing at the test's sshd, the feed's CSV rows, and
// reads of the files the feed leaves on the server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type FeedRecord, RECORD_FIELDS } from '../src/user-feed/records.ts';
import type { TestServer } from './helpers.ts';
import type { SftpServer } from './sftp-server.ts';

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
