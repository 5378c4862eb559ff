// Authentication actions: OAuth2Authentication (the platform's Authorization Code flow, RFC 6749 §4.1; Atrium's
// older client-credentials shape with `url` still runs), AzureAdAuthentication (client credentials with a
// secret) and AzureAdCertificateAuthentication (client credentials with a client assertion: a JWT signed
// with the certificate's key, RFC 7523). Every token, code and secret they see is added to the run's secrets,
// so the log, the result and every error show it as ********.
import { createHash, createPrivateKey, type KeyObject, randomBytes, randomUUID, sign, X509Certificate } from 'node:crypto';
import type Forge from 'node-forge';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { outboundUrl, send, target } from './http.ts';
import { findFile } from './run-files.ts';

/** Largest certificate file read (PFX or PEM), bytes. */
const MAX_CERTIFICATE_BYTES = 64 * 1024;
const DEFAULT_RESOURCE = 'https://graph.microsoft.com';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Masks every string the run must not show (tokens, codes, secrets) from here on. */
function secret(call: ActionCall, ...values: unknown[]): void {
  for (const v of values) if (typeof v === 'string' && v.length >= 4) call.run.secrets.add(v);
}

/** POSTs a token request (form) and answers the token endpoint's JSON, or fails with its error. */
async function tokenRequest(call: ActionCall, url: URL, form: URLSearchParams): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
  const { res, bytes } = await send(call, 'POST', url, headers, form.toString());
  let answer: unknown;
  try {
    answer = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ActionError(`the token endpoint answered ${res.status} without JSON`);
  }
  if (!isObject(answer)) throw new ActionError(`the token endpoint answered ${res.status} without a token object`);
  secret(call, answer.access_token, answer.refresh_token, answer.id_token);
  if (res.status < 200 || res.status >= 300 || typeof answer.access_token !== 'string')
    throw new ActionError(`the token endpoint answered ${res.status}: ${asText(answer.error_description ?? answer.error ?? '').slice(0, 500)}`);
  return answer;
}

/** The token answer as the result, with `Authorization` ("Bearer …") for a later Rest's requestHeaders. */
const tokenOutput = (answer: Record<string, unknown>) => ({
  ...answer,
  Authorization: `${asText(answer.token_type) || 'Bearer'} ${asText(answer.access_token)}`,
});

/**
 * OAuth2Authentication, the platform's fields: the authorization request goes to `<oauthBaseUrl>/authorize`
 * (response_type=code, client_id, redirect_uri = oauthCallbackUrl, scope, and a fresh `state`); the
 * authorization server must answer it with a redirect to oauthCallbackUrl carrying the code (a client whose
 * consent is already granted: a run has no one to sign in). The code is exchanged at `<oauthBaseUrl>/token`
 * (grant_type=authorization_code, code, redirect_uri, client_id, client_secret). With
 * OauthUseStateVerification the redirect's `state` must be the one sent.
 */
async function authorizationCode(call: ActionCall): Promise<Record<string, unknown>> {
  const base = call.text('oauthBaseUrl').replace(/\/+$/, '');
  const clientId = call.text('oauthClientId');
  const clientSecret = call.text('oauthClientSecret');
  const callback = call.text('oauthCallbackUrl');
  const scope = call.text('oauthScope');
  secret(call, clientSecret);
  for (const [f, v] of [
    ['oauthClientId', clientId],
    ['oauthClientSecret', clientSecret],
    ['oauthBaseUrl', base],
    ['oauthCallbackUrl', callback],
  ])
    if (!v) throw new ActionError(`${f} is required`);
  if (!URL.canParse(callback)) throw new ActionError(`oauthCallbackUrl is not an absolute URL: "${callback.slice(0, 200)}"`);
  const state = randomBytes(16).toString('base64url');
  const authorize = outboundUrl(call, `${base}/authorize`, 'oauthBaseUrl');
  authorize.searchParams.set('response_type', 'code');
  authorize.searchParams.set('client_id', clientId);
  authorize.searchParams.set('redirect_uri', callback);
  if (scope) authorize.searchParams.set('scope', scope);
  authorize.searchParams.set('state', state);
  const { res } = await send(call, 'GET', authorize, { accept: 'text/html,application/json' }, undefined);
  const location = res.headers.get('location');
  if (res.status < 300 || res.status > 399 || !location)
    throw new ActionError(
      `the authorization server answered ${res.status} instead of redirecting to oauthCallbackUrl with a code (it asks for an interactive sign-in, which a run cannot do: grant the client's consent first)`,
    );
  const back = new URL(location, authorize);
  const expected = new URL(callback);
  if (back.origin !== expected.origin || back.pathname !== expected.pathname)
    throw new ActionError(`the authorization server redirected elsewhere than oauthCallbackUrl (${back.origin}${back.pathname})`);
  const error = back.searchParams.get('error');
  if (error) throw new ActionError(`the authorization server refused: ${error} ${back.searchParams.get('error_description') ?? ''}`.trim());
  const code = back.searchParams.get('code');
  if (!code) throw new ActionError('the authorization server redirected without a code');
  secret(call, code);
  if (call.bool('OauthUseStateVerification') && back.searchParams.get('state') !== state)
    throw new ActionError('the state the authorization server sent back is not the one sent (OauthUseStateVerification)');
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: clientId, client_secret: clientSecret });
  return tokenRequest(call, outboundUrl(call, `${base}/token`, 'oauthBaseUrl'), form);
}

/** Atrium's older shape: a token from `url` with `grantType` client_credentials (default) or password. */
async function legacyClientCredentials(call: ActionCall): Promise<Record<string, unknown>> {
  const url = await target(call, {});
  const grant = call.text('grantType') || 'client_credentials';
  if (grant !== 'client_credentials' && grant !== 'password') throw new ActionError('grantType must be client_credentials or password');
  const form = new URLSearchParams({ grant_type: grant });
  const add = (field: string, param: string) => {
    const v = call.text(field);
    if (v) form.set(param, v);
  };
  add('clientId', 'client_id');
  add('clientSecret', 'client_secret');
  add('scope', 'scope');
  add('audience', 'audience');
  if (grant === 'password') {
    add('username', 'username');
    add('password', 'password');
  }
  return tokenRequest(call, url, form);
}

const oauth2: Handler = async (call) => {
  const answer = call.raw('oauthBaseUrl') === undefined && call.raw('url') !== undefined ? await legacyClientCredentials(call) : await authorizationCode(call);
  return { output: tokenOutput(answer) };
};

/** `<ATRIUM_AZURE_AD_AUTHORITY>/<tenantId>/oauth2/token` (the v1 endpoint, which takes `resource`). */
function azureTokenUrl(call: ActionCall): URL {
  const tenant = call.text('tenantId');
  if (!/^[A-Za-z0-9.-]{1,100}$/.test(tenant)) throw new ActionError('tenantId must be an Azure AD tenant id or domain');
  return outboundUrl(call, `${call.run.services.config.azureAdAuthority}/${encodeURIComponent(tenant)}/oauth2/token`, 'the Azure AD authority');
}

function azureForm(call: ActionCall, clientId: string): URLSearchParams {
  if (!clientId) throw new ActionError('clientId is required');
  return new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, resource: call.text('resource') || DEFAULT_RESOURCE });
}

/** The certificate and its private key from `CertificatePfx`: a file of the run, PEM text, or a PFX in Base64. */
/** node-forge (PFX reading), loaded with the first certificate it reads: ~1.5 MB of heap otherwise carried by every process. */
const loadForge = (): Promise<typeof Forge> => import('node-forge').then((m) => m.default);

function certificate(call: ActionCall, forge: typeof Forge): { key: KeyObject; der: Buffer } {
  const given = call.get('CertificatePfx');
  const password = call.text('CertificatePfxPassword');
  secret(call, password);
  const file = findFile(call.run, given);
  if (!file) secret(call, given);
  let bytes: Buffer;
  if (file) bytes = file.bytes;
  else if (typeof given === 'string' && given.includes('-----BEGIN')) bytes = Buffer.from(given, 'utf8');
  else if (typeof given === 'string' && /^[A-Za-z0-9+/=\s]+$/.test(given) && given.length > 100) bytes = Buffer.from(given.replace(/\s+/g, ''), 'base64');
  else throw new ActionError('CertificatePfx must name a file of this run, or hold the certificate (PFX in Base64, or PEM)');
  if (bytes.length > MAX_CERTIFICATE_BYTES) throw new ActionError(`CertificatePfx is ${bytes.length} bytes; the limit is ${MAX_CERTIFICATE_BYTES}`);
  const text = bytes.toString('latin1');
  try {
    if (text.includes('-----BEGIN')) {
      const cert = new X509Certificate(bytes);
      const keyPem = /-----BEGIN (?:ENCRYPTED |RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:ENCRYPTED |RSA )?PRIVATE KEY-----/.exec(text)?.[0];
      if (!keyPem) throw new ActionError('the PEM certificate holds no private key');
      return { key: createPrivateKey({ key: keyPem, passphrase: password || undefined }), der: cert.raw };
    }
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(text)), false, password);
    const keyBag =
      p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag]?.[0] ??
      p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag]?.[0];
    const certBag = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag]?.[0];
    if (!keyBag?.key || !certBag?.cert) throw new ActionError('the PFX holds no private key and certificate');
    const der = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(certBag.cert)).getBytes(), 'latin1');
    return { key: createPrivateKey(forge.pki.privateKeyToPem(keyBag.key)), der };
  } catch (err) {
    if (err instanceof ActionError) throw err;
    throw new ActionError(`CertificatePfx cannot be read (wrong CertificatePfxPassword?): ${(err as Error).message.split('\n')[0].slice(0, 200)}`);
  }
}

const b64url = (v: Buffer | string) => Buffer.from(v).toString('base64url');

/** The client assertion: RS256 over {aud: token endpoint, iss = sub = clientId, jti, nbf, exp}, x5t = the certificate's SHA-1 thumbprint. */
function clientAssertion(key: KeyObject, der: Buffer, clientId: string, audience: string): string {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: 'RS256', typ: 'JWT', x5t: b64url(createHash('sha1').update(der).digest()) };
  const claims = { aud: audience, iss: clientId, sub: clientId, jti: randomUUID(), nbf: now, iat: now, exp: now + 600 };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), key))}`;
}

async function azureWithCertificate(call: ActionCall): Promise<Record<string, unknown>> {
  const url = azureTokenUrl(call);
  const clientId = call.text('clientId');
  const form = azureForm(call, clientId);
  const { key, der } = certificate(call, await loadForge());
  const assertion = clientAssertion(key, der, clientId, url.toString());
  secret(call, assertion);
  form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  form.set('client_assertion', assertion);
  return tokenRequest(call, url, form);
}

/**
 * AzureAdAuthentication: client credentials with `clientSecret`. The platform's certificate template also
 * writes this type: with `CertificatePfx` and no `clientSecret`, the certificate is used.
 */
const azureAd: Handler = async (call) => {
  if (call.raw('clientSecret') === undefined && call.raw('CertificatePfx') !== undefined) return { output: tokenOutput(await azureWithCertificate(call)) };
  const url = azureTokenUrl(call);
  const form = azureForm(call, call.text('clientId'));
  const clientSecret = call.text('clientSecret');
  if (!clientSecret) throw new ActionError('clientSecret is required (or CertificatePfx for a certificate)');
  secret(call, clientSecret);
  form.set('client_secret', clientSecret);
  return { output: tokenOutput(await tokenRequest(call, url, form)) };
};

const azureAdCertificate: Handler = async (call) => ({ output: tokenOutput(await azureWithCertificate(call)) });

export const AUTH_HANDLERS: Record<string, Handler> = {
  OAuth2Authentication: oauth2,
  AzureAdAuthentication: azureAd,
  AzureAdCertificateAuthentication: azureAdCertificate,
};
