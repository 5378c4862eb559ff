// Outgoing e-mail (failure notices) over SMTP with nodemailer. Without ATRIUM_SMTP_URL nothing is
// sent and the caller is told so; the tenant's mailbox is the configuration key `Notifications`.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../config.ts';
import type { Trx } from '../db/database.ts';
import { jsonObject } from '../db/schema.ts';

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  /** An HTML body besides the text (automations' Email action). */
  html?: string;
  /** Display name before the configured sender address. */
  fromName?: string;
  attachments?: { filename: string; content: Buffer; contentType: string }[];
}

export class Mailer {
  readonly #transport: Transporter | null;
  readonly #from: string;

  constructor(config: Pick<Config, 'smtpUrl' | 'smtpFrom'>) {
    this.#transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : null;
    this.#from = config.smtpFrom;
  }

  get configured(): boolean {
    return this.#transport !== null;
  }

  /** Sends one message; false when no SMTP server is configured. Errors of the server are thrown. */
  async send(mail: Mail): Promise<boolean> {
    if (!this.#transport || mail.to.length === 0) return false;
    const from = mail.fromName ? { name: mail.fromName, address: senderAddress(this.#from) } : this.#from;
    await this.#transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, attachments: mail.attachments });
    return true;
  }

  close(): void {
    this.#transport?.close();
  }
}

/** `Atrium <atrium@localhost>` → `atrium@localhost`. */
const senderAddress = (from: string): string => /<([^>]+)>/.exec(from)?.[1] ?? from;

export const NOTIFICATIONS_KEY = 'Notifications';

/** The tenant's notification mailbox: configuration key `Notifications`, property `Mailbox` (comma-separated). */
export async function notificationMailbox(trx: Trx): Promise<string[]> {
  const row = await trx.selectFrom('configuration_keys').select('value').where('key', '=', NOTIFICATIONS_KEY).executeTakeFirst();
  const value = row ? jsonObject(row.value) : null;
  const mailbox = value && (value.Mailbox ?? value.mailbox);
  if (typeof mailbox !== 'string') return [];
  return mailbox
    .split(/[,;]/)
    .map((a) => a.trim())
    .filter((a) => /^[^\s@]+@[^\s@]+$/.test(a));
}
