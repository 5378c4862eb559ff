// Email: through the deployment's SMTP server (ATRIUM_SMTP_URL), from ATRIUM_SMTP_FROM under the
// action's fromDisplayName; a body that looks like HTML is sent as HTML with a text alternative.
import { ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { fileInput, findFile } from './run-files.ts';

const MAX_ATTACHMENTS = 20;

const ADDRESS = /^[^\s@<>,;]+@[^\s@<>,;]+$/;

function addresses(v: unknown): string[] {
  const list = Array.isArray(v) ? v.map(asText) : asText(v).split(/[,;]/);
  const out = list.map((a) => a.trim()).filter((a) => a !== '');
  const bad = out.filter((a) => !ADDRESS.test(a));
  if (bad.length) throw new ActionError(`not an e-mail address: ${bad.join(', ')}`);
  if (out.length === 0) throw new ActionError('toAddress names no address');
  if (out.length > 100) throw new ActionError('toAddress names more than 100 addresses');
  return out;
}

const email: Handler = async (call) => {
  const mailer = call.run.services.mailer;
  if (!mailer.configured) throw new ActionError('no SMTP server is configured (ATRIUM_SMTP_URL)');
  const to = addresses(call.get('toAddress'));
  const subject = call.text('subject').replace(/[\r\n]+/g, ' ');
  const body = call.text('body');
  const html = /<[a-z][\s\S]*>/i.test(body) ? body : undefined;
  const text = html ? html.replace(/<[^>]*>/g, '').trim() : body;
  // attachments: each a file of the run (its path, file name, the producing action's name or the file's
  // content, e.g. "{{['CreateCsv']}}") or a Download-like result; a name that finds no file fails the action.
  const rawAttachments = call.get('attachments') ?? call.get('attachment');
  const list =
    rawAttachments === undefined || rawAttachments === null || rawAttachments === '' ? [] : Array.isArray(rawAttachments) ? rawAttachments : [rawAttachments];
  if (list.length > MAX_ATTACHMENTS) throw new ActionError(`attachments names ${list.length} files; the limit is ${MAX_ATTACHMENTS}`);
  const attachments = list.map((a, i) => {
    if (typeof a === 'string' && !findFile(call.run, a))
      throw new ActionError(`attachments/${i} names no file of this run: "${a.slice(0, 200)}" (a file name, a file's path, or the action that made it)`);
    const f = fileInput(call.run, a, `attachment-${i + 1}`);
    return { filename: f.fileName, content: f.bytes, contentType: f.contentType };
  });
  try {
    await mailer.send({ to, subject, text, html, fromName: call.text('fromDisplayName') || undefined, attachments });
  } catch (err) {
    throw new ActionError(`the SMTP server refused the message: ${(err as Error).message}`);
  }
  return { output: { To: to, Subject: subject, Attachments: attachments.map((a) => a.filename) } };
};

export const EMAIL_HANDLERS: Record<string, Handler> = { Email: email };
