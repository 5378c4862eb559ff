// Atrium's older file object ({fileName, contentType, size, contentBase64, text}), still accepted wherever a
// file is taken (a definition that kept one in a SetParameter, an SFTP key given so); files made in a run
// now travel as the platform hands them on (run-files.ts).

export interface FileValue {
  fileName: string;
  contentType: string;
  size: number;
  contentBase64: string;
  text?: string;
}

const TEXTUAL = /^(text\/|application\/(json|xml|csv|x-ndjson|javascript)|[^;]*\+(json|xml))/i;

export function isTextual(contentType: string): boolean {
  return TEXTUAL.test(contentType);
}

const isFile = (v: unknown): v is FileValue =>
  v !== null && typeof v === 'object' && typeof (v as FileValue).contentBase64 === 'string' && typeof (v as FileValue).fileName === 'string';

/** Bytes of a value an action was given as a file: a file object, text, or any JSON (serialised). */
export function fileBytes(v: unknown, fallbackName = 'file'): { fileName: string; contentType: string; bytes: Buffer } {
  if (isFile(v)) return { fileName: v.fileName, contentType: v.contentType || 'application/octet-stream', bytes: Buffer.from(v.contentBase64, 'base64') };
  if (typeof v === 'string') return { fileName: fallbackName, contentType: 'text/plain; charset=utf-8', bytes: Buffer.from(v, 'utf8') };
  return { fileName: fallbackName, contentType: 'application/json', bytes: Buffer.from(JSON.stringify(v ?? null), 'utf8') };
}
