// Where export files live (scheduled-run files, user-feed copies): a local directory (ATRIUM_EXPORTS_DIR,
// the default) or S3-compatible object storage (ATRIUM_EXPORTS_URL=s3://bucket/prefix, decision 0028),
// so that any API process on any machine serves a file any worker wrote. Keys are relative paths
// (tenant/schedule/run.ext); a file appears whole or not at all.
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config.ts';
import { mkdirPrivate, PRIVATE_FILE_MODE } from './private-files.ts';

export type ExportBody = AsyncIterable<Buffer | string>;

export interface StoredFile {
  stream: Readable;
  size: number;
}

export interface ExportStore {
  /** Streams body to key; published only once complete (a failure or abort leaves nothing). */
  put(key: string, body: ExportBody, signal: AbortSignal): Promise<void>;
  /** The file's bytes and size, or null when it is not there. */
  get(key: string): Promise<StoredFile | null>;
  /** Deletes the files; missing ones are no error. */
  delete(keys: string[]): Promise<void>;
}

/** A relative key of ours (never from a request): no absolute path, no `..` segment. */
function checkKey(key: string): string {
  const parts = key.split(/[\\/]/);
  if (key === '' || path.isAbsolute(key) || parts.some((p) => p === '..' || p === '')) throw new Error(`invalid export key ${key}`);
  return parts.join('/');
}

export class LocalExportStore implements ExportStore {
  readonly #root: string;
  constructor(root: string) {
    this.#root = root;
  }

  async put(key: string, body: ExportBody, signal: AbortSignal): Promise<void> {
    const final = path.join(this.#root, checkKey(key));
    const part = `${final}.part`;
    await mkdirPrivate(path.dirname(final), this.#root);
    try {
      await pipeline(body, createWriteStream(part, { flags: 'wx', mode: PRIVATE_FILE_MODE }), { signal });
      // The rename that publishes the file must not come before its bytes are on disk.
      const handle = await open(part, 'r');
      try {
        await handle.chmod(PRIVATE_FILE_MODE); // whatever the umask left of the mode given at creation
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(part, final);
    } catch (err) {
      await rm(part, { force: true }).catch(() => {});
      throw err;
    }
  }

  async get(key: string): Promise<StoredFile | null> {
    const file = path.join(this.#root, checkKey(key));
    const info = await stat(file).catch(() => null);
    if (!info) return null;
    return { stream: createReadStream(file), size: info.size };
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) await rm(path.join(this.#root, checkKey(key)), { force: true }).catch(() => {});
  }
}

/** Parts of a multipart upload: S3's minimum; one part at a time in flight besides the one being filled. */
const PART_SIZE = 5 * 1024 * 1024;

/**
 * The AWS SDK, loaded with the first S3 store's first call: ~6 MB of heap a process without
 * ATRIUM_EXPORTS_URL would otherwise carry (and mark on every full garbage collection).
 */
const awsSdk = () => Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => ({ ...s3, Upload: storage.Upload }));
type AwsSdk = Awaited<ReturnType<typeof awsSdk>>;

export class S3ExportStore implements ExportStore {
  #sdk: Promise<{ aws: AwsSdk; client: S3Client }> | undefined;
  readonly #bucket: string;
  readonly #prefix: string;

  /** url: s3://bucket/prefix; endpoint, region and credentials come from the standard AWS variables. */
  constructor(url: string) {
    const u = new URL(url);
    this.#bucket = u.hostname;
    this.#prefix = u.pathname.replace(/^\/+|\/+$/g, '');
  }

  /** The SDK and this store's client (one per store, so its sockets are shared). */
  #load(): Promise<{ aws: AwsSdk; client: S3Client }> {
    this.#sdk ??= awsSdk().then((aws) => ({
      aws,
      // A custom endpoint (MinIO, Ceph, s3rver) is addressed by path: it rarely has a DNS name per bucket.
      client: new aws.S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL) }),
    }));
    return this.#sdk;
  }

  #key(key: string): string {
    return this.#prefix ? `${this.#prefix}/${checkKey(key)}` : checkKey(key);
  }

  async put(key: string, body: ExportBody, signal: AbortSignal): Promise<void> {
    const { aws, client } = await this.#load();
    const upload = new aws.Upload({
      client,
      params: { Bucket: this.#bucket, Key: this.#key(key), Body: Readable.from(body) },
      partSize: PART_SIZE,
      queueSize: 2,
      // A failed upload must not leave parts behind (they are billed and invisible).
      leavePartsOnError: false,
    });
    const abort = () => {
      upload.abort().catch(() => {});
    };
    signal.throwIfAborted();
    signal.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } finally {
      signal.removeEventListener('abort', abort);
    }
    signal.throwIfAborted();
  }

  async get(key: string): Promise<StoredFile | null> {
    const { aws, client } = await this.#load();
    try {
      const out = await client.send(new aws.GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
      return { stream: out.Body as Readable, size: Number(out.ContentLength ?? 0) };
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async delete(keys: string[]): Promise<void> {
    const { aws, client } = await this.#load();
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await client.send(new aws.DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: batch.map((k) => ({ Key: this.#key(k) })), Quiet: true } }));
    }
  }
}

const stores = new WeakMap<object, ExportStore>();

/** The store the configuration names; one per configuration object, so its S3 client and sockets are shared. */
export function exportStore(config: Pick<Config, 'exportsDir' | 'exportsUrl'>): ExportStore {
  let store = stores.get(config);
  if (!store) {
    store = config.exportsUrl ? new S3ExportStore(config.exportsUrl) : new LocalExportStore(config.exportsDir);
    stores.set(config, store);
  }
  return store;
}
