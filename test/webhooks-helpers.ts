// A real webhook receiver on loopback that verifies every request with the standardwebhooks library,
// and small helpers shared by the webhook tests.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { TestServer } from './helpers.ts';

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  payload: any;
  /** standardwebhooks verified the signature with the subscription's Secret. */
  verified: boolean;
  verifyError: string | null;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Never answer (until the receiver closes). */
  hold?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The Secret requests are verified with (set after the subscription is created). */
  secret: string;
  answer: (req: Received, index: number) => Answer;
  waitFor: (count: number, timeoutMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
}

export function verifier(secret: string): Webhook {
  // whsec_ secrets are base64 keys; any other Secret is its UTF-8 bytes (the libraries' "raw" format).
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    secret: '',
    answer: () => ({ status: 200, body: 'ok' }),
    waitFor: async (count, timeoutMs = 20_000) => {
      const until = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > until) throw new Error(`receiver got ${receiver.received.length} of ${count} requests in ${timeoutMs} ms`);
        await sleep(20);
      }
      return receiver.received;
    },
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let verified = false;
    let verifyError: string | null = null;
    try {
      verifier(receiver.secret).verify(body, req.headers as Record<string, string>);
      verified = true;
    } catch (err) {
      verifyError = (err as Error).message;
    }
    let payload: unknown = null;
    try {
      payload = JSON.parse(body);
    } catch {}
    const entry: Received = { at: Date.now(), path: req.url ?? '', headers: req.headers, body, payload, verified, verifyError };
    const index = receiver.received.push(entry) - 1;
    const answer = receiver.answer(entry, index);
    if (answer.hold) {
      held.push(res);
      return;
    }
    if (answer.delayMs) await sleep(answer.delayMs);
    if (res.destroyed) return;
    res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...(answer.headers ?? {}) });
    res.end(answer.body ?? 'ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

export const USER_TYPE = 'Skill.Module.BusinessObjects.User';
export const DELIVERABLE_TYPE = 'Skill.Module.BusinessObjects.Deliverable';

export async function createSubscription(server: TestServer, headers: Record<string, string>, body: Record<string, unknown>): Promise<any> {
  const res = await server.request('POST', '/api/webhook-subscriptions', { headers, json: { Name: 'Hook', Active: true, ...body } });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

export async function raiseEvent(
  server: TestServer,
  headers: Record<string, string>,
  actionType: string,
  detail: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await server.request('POST', '/api/v3/events', {
    headers,
    json: { actionType, documentType: DELIVERABLE_TYPE, documentId: crypto.randomUUID(), detail, ...extra },
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

export async function history(server: TestServer, headers: Record<string, string>, subscriptionId: string, query = ''): Promise<any[]> {
  const res = await server.request('GET', `/api/webhook-subscriptions/${subscriptionId}/invocation-history${query}`, { headers });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Polls the history until `done` holds for it. */
export async function waitForHistory(
  server: TestServer,
  headers: Record<string, string>,
  subscriptionId: string,
  done: (items: any[]) => boolean,
  timeoutMs = 20_000,
): Promise<any[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const items = await history(server, headers, subscriptionId);
    if (done(items)) return items;
    if (Date.now() > until) throw new Error(`history never reached the expected state: ${JSON.stringify(items).slice(0, 2000)}`);
    await sleep(25);
  }
}
