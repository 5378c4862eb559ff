import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import type { Principal } from '../auth/principal.ts';
import { KEEP_MS, keepPrincipal, keptPrincipal, sameSecret } from './connection-principal.ts';

const principal = (appId: string): Principal => ({
  tenantId: 't',
  appId,
  userId: null,
  userName: null,
  roles: new Set(['IntegrationRead']),
  via: 'app-headers',
});
const creds = { tenantId: '00000000-0000-4000-8000-000000000001', appId: 'app-a', secret: 's3cret-of-app-a', appUser: undefined };

test('a kept principal answers only the exact credentials, generation and time it was verified for', () => {
  const socket = {} as Socket;
  const a = principal('a');
  assert.equal(keptPrincipal(socket, creds, 1, Date.now()), null, 'nothing kept yet');
  keepPrincipal(socket, creds, 1, a, 'k');
  const now = Date.now();
  assert.equal(keptPrincipal(socket, creds, 1, now)?.principal, a);
  assert.equal(keptPrincipal(socket, creds, 1, now)?.rateKey, 'k');
  assert.equal(keptPrincipal(socket, { ...creds, secret: 's3cret-of-app-b' }, 1, now), null, 'another secret of the same length');
  assert.equal(keptPrincipal(socket, { ...creds, secret: 's3cret' }, 1, now), null, 'a shorter secret');
  assert.equal(keptPrincipal(socket, { ...creds, secret: undefined }, 1, now), null, 'no secret');
  assert.equal(keptPrincipal(socket, { ...creds, appId: 'app-b' }, 1, now), null, 'another app');
  assert.equal(keptPrincipal(socket, { ...creds, tenantId: null }, 1, now), null, 'another tenant');
  assert.equal(keptPrincipal(socket, { ...creds, appUser: '00000000-0000-4000-8000-000000000002' }, 1, now), null, 'acting as a user');
  assert.equal(keptPrincipal(socket, creds, 2, now), null, 'verifications forgotten since (rotate, revoke, role change)');
  assert.equal(keptPrincipal(socket, creds, 1, now + KEEP_MS + 1), null, 'expired');
  assert.equal(keptPrincipal({} as Socket, creds, 1, now), null, 'another connection');
  assert.equal(keptPrincipal(null, creds, 1, now), null, 'no socket');
});

test('a connection keeps one principal: the last one verified on it', () => {
  const socket = {} as Socket;
  keepPrincipal(socket, creds, 1, principal('a'), 'ka');
  const other = { ...creds, appId: 'app-b', secret: 'another-secret' };
  const b = principal('b');
  keepPrincipal(socket, other, 1, b, 'kb');
  assert.equal(keptPrincipal(socket, creds, 1, Date.now()), null);
  assert.equal(keptPrincipal(socket, other, 1, Date.now())?.principal, b);
  assert.equal(Object.getOwnPropertySymbols(socket).length, 1);
});

test('secrets are compared whole: a difference anywhere, in any character, is one', () => {
  const secret = 'Zk9-secret_ÿ€😀-tail';
  assert.equal(sameSecret(secret, secret), true);
  assert.equal(sameSecret(`${secret}`.slice(0), `${secret.slice(0, 5)}${secret.slice(5)}`), true, 'equal strings built apart');
  for (let i = 0; i < secret.length; i++) {
    const changed = `${secret.slice(0, i)}${String.fromCharCode(secret.charCodeAt(i) ^ 1)}${secret.slice(i + 1)}`;
    assert.equal(sameSecret(changed, secret), false, `differs at ${i}`);
  }
  assert.equal(sameSecret(secret.slice(1), secret), false, 'shorter');
  assert.equal(sameSecret(`${secret}x`, secret), false, 'longer');
  assert.equal(sameSecret('', ''), true);
});
