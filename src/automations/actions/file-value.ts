// How actions pass files to each other (Download, SftpDownload, CreateCsv → Email attachments, SftpUpload,
// a Rest File body): a JSON object with the name, the media type and the bytes in base64, plus the text
// when the content is text, so that expressions can read it.

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

export function fileValue(fileName: string, contentType: string, bytes: Buffer, withText = isTextual(contentType)): FileValue {
  const f: FileValue = { fileName, contentType, size: bytes.length, contentBase64: bytes.toString('base64') };
  if (withText) f.text = bytes.toString('utf8');
  return f;
}

const isFile = (v: unknown): v is FileValue =>
  v !== null && typeof v === 'object' && typeof (v as FileValue).contentBase64 === 'string' && typeof (v as FileValue).fileName === 'string';

/** Bytes of a value an action was given as a file: a file object, text, or any JSON (serialised). */
export function fileBytes(v: unknown, fallbackName = 'file'): { fileName: string; contentType: string; bytes: Buffer } {
  if (isFile(v)) return { fileName: v.fileName, contentType: v.contentType || 'application/octet-stream', bytes: Buffer.from(v.contentBase64, 'base64') };
  if (typeof v === 'string') return { fileName: fallbackName, contentType: 'text/plain; charset=utf-8', bytes: Buffer.from(v, 'utf8') };
  return { fileName: fallbackName, contentType: 'application/json', bytes: Buffer.from(JSON.stringify(v ?? null), 'utf8') };
}

/** A file object's text (or a string as it is): what CSVMap and similar read. */
export function fileText(v: unknown): string {
  if (isFile(v)) return v.text ?? Buffer.from(v.contentBase64, 'base64').toString('utf8');
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}
