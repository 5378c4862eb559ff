// A real SMTP server on 127.0.0.1 for tests that send mail: every message received, with its envelope.
import { SMTPServer } from 'smtp-server';

export interface Smtp {
  mails: { from: string; to: string[]; body: string }[];
  port: number;
  close: () => Promise<void>;
}

export async function startSmtp(): Promise<Smtp> {
  const mails: Smtp['mails'] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let body = '';
      stream.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      stream.on('end', () => {
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), body });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  return { mails, port: (smtp.server.address() as { port: number }).port, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}
