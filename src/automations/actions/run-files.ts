// The files a run produces (CreateCsv, Download, SftpDownload, CreatePdfFromDocument, a binary Rest answer)
// and how later actions find them again, the way the platform hands files on: an action's result is the
// file's text (CreateCsv), its content under `Content` (Download), or the path of a temp file (SftpDownload);
// a field that takes a file (Email attachments, a Rest File body, SftpUpload filePath, ReadFileData fileName,
// CSVMap data) is given that path, the file's name, the producing action's name, or the content itself.
// The bytes stay in the run (counted in what it holds, at most MAX_FILES files) and go when it ends.
import { type ActionCall, ActionError, type RunContext } from '../engine.ts';
import { asText } from '../expressions.ts';
import { type FileValue, isTextual } from './file-value.ts';

export interface RunFile {
  /** Where the run keeps it: `tmp/<action>/<fileName>` (what SftpDownload answers, what SftpUpload filePath takes). */
  path: string;
  fileName: string;
  contentType: string;
  bytes: Buffer;
  /** What `$.Content` reads: the text of a textual file, the Base64 of any other. */
  content: string;
  /** The action that produced it. */
  action: string;
}

/** Files one run may hold at once (each also counted in ATRIUM_AUTOMATION_MAX_RUN_BYTES). */
export const MAX_FILES = 100;

const stores = new WeakMap<RunContext, Map<string, RunFile>>();

function storeOf(run: RunContext): Map<string, RunFile> {
  let s = stores.get(run);
  if (!s) {
    s = new Map();
    stores.set(run, s);
  }
  return s;
}

/** A file name safe to use as the last part of a path and a MIME attachment name. */
export function safeFileName(name: string, fallback: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f"]/g, '').trim();
  return clean === '' || clean === '.' || clean === '..' ? fallback : clean.slice(0, 200);
}

export function mediaTypeOf(fileName: string, fallback = 'application/octet-stream'): string {
  const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  const known: Record<string, string> = {
    csv: 'text/csv',
    txt: 'text/plain',
    json: 'application/json',
    xml: 'application/xml',
    html: 'text/html',
    pdf: 'application/pdf',
    png: 'image/png',
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    zip: 'application/zip',
    xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  };
  return (ext && known[ext]) ?? fallback;
}

/** Keeps a file the action produced; a file of the same path is replaced (and no longer counted). */
export function keepFile(call: ActionCall, fileName: string, contentType: string, bytes: Buffer): RunFile {
  const run = call.run;
  const store = storeOf(run);
  const action = String(call.action.name);
  const name = safeFileName(fileName, 'file');
  const path = `tmp/${safeFileName(action, 'action')}/${name}`;
  const old = store.get(path);
  if (!old && store.size >= MAX_FILES) throw new ActionError(`the run already holds ${MAX_FILES} files (the limit)`);
  if (old) run.keptBytes -= old.bytes.length;
  run.keep(bytes.length, action);
  const textual = isTextual(contentType) && !bytes.includes(0);
  const file: RunFile = { path, fileName: name, contentType, bytes, content: textual ? bytes.toString('utf8') : bytes.toString('base64'), action };
  store.delete(path);
  store.set(path, file);
  return file;
}

const isFileValue = (v: unknown): v is FileValue =>
  v !== null && typeof v === 'object' && typeof (v as FileValue).contentBase64 === 'string' && typeof (v as FileValue).fileName === 'string';

/**
 * The run's file a value refers to: its path, its file name, the producing action's name, or its content
 * (the latest file first when several match); an object with `FilePath` or `Content` (a Download result)
 * by those. Null when the value refers to no file of the run.
 */
export function findFile(run: RunContext, value: unknown): RunFile | null {
  const store = stores.get(run);
  if (!store || value === null || value === undefined) return null;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    for (const k of ['FilePath', 'filePath', 'Content'])
      if (typeof o[k] === 'string') {
        const f = findFile(run, o[k]);
        if (f) return f;
      }
    return null;
  }
  if (typeof value !== 'string') return null;
  const hit = store.get(value);
  if (hit) return hit;
  const files = [...store.values()].reverse();
  return (
    files.find((f) => f.fileName === value) ??
    files.find((f) => f.action === value) ??
    files.find((f) => f.content.length === value.length && f.content === value) ??
    null
  );
}

export interface FileInput {
  fileName: string;
  contentType: string;
  bytes: Buffer;
}

/**
 * The file a field gives: a file of the run (findFile), a file object of Atrium's older shape, an object
 * holding `Content` (its content, named by `FileName`), or else the value's own text (JSON for other values).
 */
export function fileInput(run: RunContext, value: unknown, fallbackName = 'file'): FileInput {
  const f = findFile(run, value);
  if (f) return { fileName: f.fileName, contentType: f.contentType, bytes: f.bytes };
  if (isFileValue(value))
    return { fileName: value.fileName, contentType: value.contentType || 'application/octet-stream', bytes: Buffer.from(value.contentBase64, 'base64') };
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'Content')) {
    const o = value as Record<string, unknown>;
    const name = typeof o.FileName === 'string' ? safeFileName(o.FileName, fallbackName) : fallbackName;
    const inner = fileInput(run, o.Content, name);
    return { ...inner, fileName: name, contentType: typeof o.ContentType === 'string' ? o.ContentType : inner.contentType };
  }
  if (typeof value === 'string')
    return { fileName: fallbackName, contentType: mediaTypeOf(fallbackName, 'text/plain; charset=utf-8'), bytes: Buffer.from(value, 'utf8') };
  return { fileName: fallbackName, contentType: 'application/json', bytes: Buffer.from(JSON.stringify(value ?? null), 'utf8') };
}

/** The text a field gives as a file (CSVMap data, ReadFileData): a run file's text, or the value's own text. */
export function fileTextOf(run: RunContext, value: unknown): string {
  const f = findFile(run, value);
  if (f) return f.bytes.toString('utf8');
  if (isFileValue(value)) return value.text ?? Buffer.from(value.contentBase64, 'base64').toString('utf8');
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, 'Content'))
    return fileTextOf(run, (value as Record<string, unknown>).Content);
  return typeof value === 'string' ? value : asText(value);
}
