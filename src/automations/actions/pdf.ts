// CreatePdfFromDocument: a document of the Client API (read as the saving app, with its Read role) rendered
// to a real PDF by pdf-lib: a title, then each of the document's fields with its value, on as many A4 pages
// as it takes. Atrium has no layout designer: every `layoutId` renders this one layout, and the PDF records
// the layoutId in its Subject. The file is kept in the run (default name document.pdf) for an Email's
// attachments or an upload.
import { PDFDocument, type PDFFont, StandardFonts } from 'pdf-lib';
import { HttpProblem } from '../../platform/errors.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { keepFile } from './run-files.ts';

const PAGE: [number, number] = [595.28, 841.89];
const MARGIN = 50;
const SIZE = 10;
const LINE = 14;
/** Characters of one value written (a longer one is cut), and pages of one PDF. */
const MAX_VALUE_CHARS = 4000;
const MAX_PAGES = 50;

/** Text the standard font can write (WinAnsi): any other character becomes "?". */
function printable(font: PDFFont, text: string): string {
  const set = new Set(font.getCharacterSet());
  let out = '';
  for (const ch of text.replace(/\r\n?|\t/g, ' ')) out += ch === '\n' || set.has(ch.codePointAt(0) as number) ? ch : '?';
  return out;
}

/** Lines of at most `width` points. */
function wrap(font: PDFFont, text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(' ')) {
      const next = line ? `${line} ${word}` : word;
      if (font.widthOfTextAtSize(next, SIZE) <= width) line = next;
      else {
        if (line) lines.push(line);
        // A word wider than the line is cut where it must be.
        let w = word;
        while (font.widthOfTextAtSize(w, SIZE) > width && w.length > 1) {
          let n = w.length;
          while (n > 1 && font.widthOfTextAtSize(w.slice(0, n), SIZE) > width) n--;
          lines.push(w.slice(0, n));
          w = w.slice(n);
        }
        line = w;
      }
    }
    lines.push(line);
  }
  return lines;
}

function display(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : asText(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

export async function documentPdf(documentType: string, document: Record<string, unknown>, layoutId: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const title = printable(bold, `${documentType} ${display(document.Number ?? document.Name ?? document.Id)}`.trim());
  pdf.setTitle(title);
  pdf.setSubject(`layout ${layoutId}`);
  pdf.setCreator('Atrium');
  pdf.setProducer('Atrium (pdf-lib)');
  let page = pdf.addPage(PAGE);
  let y = PAGE[1] - MARGIN;
  page.drawText(title, { x: MARGIN, y, size: 16, font: bold });
  y -= 30;
  const labelWidth = 150;
  const valueWidth = PAGE[0] - 2 * MARGIN - labelWidth;
  for (const [key, value] of Object.entries(document)) {
    const lines = wrap(font, printable(font, display(value)), valueWidth);
    for (let i = 0; i < lines.length; i++) {
      if (y < MARGIN) {
        if (pdf.getPageCount() >= MAX_PAGES) throw new ActionError(`the document needs more than ${MAX_PAGES} pages`);
        page = pdf.addPage(PAGE);
        y = PAGE[1] - MARGIN;
      }
      if (i === 0) page.drawText(printable(bold, key).slice(0, 40), { x: MARGIN, y, size: SIZE, font: bold });
      page.drawText(lines[i], { x: MARGIN + labelWidth, y, size: SIZE, font });
      y -= LINE;
    }
  }
  return Buffer.from(await pdf.save());
}

async function readDocument(call: ActionCall, documentType: string, documentId: string): Promise<Record<string, unknown>> {
  const { tenantId, runAsAppId } = call.run.automation;
  if (!runAsAppId) throw new ActionError('this action needs the automation to be saved by an app (it reads the document as that app)');
  try {
    return await call.run.services.documentView(tenantId, runAsAppId, documentType, documentId);
  } catch (err) {
    if (err instanceof HttpProblem) throw new ActionError(`${documentType} ${documentId}: ${err.message}`);
    throw err;
  }
}

/** The result: Content (the PDF in Base64), FileName, ContentType, Size, FilePath (like a Download). */
const createPdfFromDocument: Handler = async (call) => {
  const documentType = call.text('documentType');
  const documentId = call.text('documentId');
  const layoutId = call.text('layoutId');
  const document = await readDocument(call, documentType, documentId);
  const bytes = await documentPdf(documentType, document, layoutId);
  const file = keepFile(call, call.text('fileName') || 'document.pdf', 'application/pdf', bytes);
  return { output: { Content: file.content, FileName: file.fileName, ContentType: file.contentType, Size: bytes.length, FilePath: file.path } };
};

export const PDF_HANDLERS: Record<string, Handler> = { CreatePdfFromDocument: createPdfFromDocument };
