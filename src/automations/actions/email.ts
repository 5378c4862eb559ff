// Email: through the deployment's SMTP server (ATRIUM_SMTP_URL), from ATRIUM_SMTP_FROM under the
// action's fromDisplayName; a body that looks like HTML is sent as HTML with a text alternative.
import { ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { fileBytes } from './file-value.ts';

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
  const rawAttachments = call.get('attachments');
  const list = rawAttachments === undefined || rawAttachments === null ? [] : Array.isArray(rawAttachments) ? rawAttachments : [rawAttachments];
  const attachments = list.map((a, i) => {
    const f = fileBytes(a, `attachment-${i + 1}.txt`);
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
