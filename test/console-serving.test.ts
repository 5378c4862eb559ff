// How the server serves the console: index.html revalidated, hashed assets immutable and
// precompressed, client routes answered with index.html, and the first load's JavaScript small.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { ensureConsoleBuilt } from './console-browser.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** A GET whose body arrives as sent (fetch would decompress it). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);

test('index.html at /console and every client route under it, never cached without revalidation', async () => {
  const tenant = await server.createTenant('Console Serving');
  const routes = ['/console', '/console/', '/console/webhooks/0b7e6c6e-0000-4000-8000-000000000000', '/console/custom-tables/Budgets'];
  for (const path of [...routes, `/t/${tenant.slug}/console/explorer`]) {
    const res = await server.request('GET', path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.text, /<div id="app">/);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  }
});

test('hashed assets are immutable for a year, served compressed when asked, and unknown ones are 404', async () => {
  const html = (await server.request('GET', '/console/')).text;
  const assets = assetsOf(html);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), html);
  for (const asset of assets) {
    const plain = await server.request('GET', asset, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(plain.headers.get('content-encoding'), null);
    const type = { js: /^text\/javascript/, css: /^text\/css/, svg: /^image\/svg\+xml$/ }[asset.split('.').pop() as 'js' | 'css' | 'svg'];
    assert.match(plain.headers.get('content-type') ?? '', type, asset);
    const res = await rawGet(`${server.baseUrl}${asset}`, { 'accept-encoding': 'gzip, br' });
    assert.equal(res.headers['content-encoding'], 'br');
    assert.equal(res.headers.vary, 'Accept-Encoding');
    assert.equal(brotliDecompressSync(res.body).toString(), plain.text);
  }
  assert.equal((await server.request('GET', '/console/assets/main-NOTAHASH.js')).status, 404);
  assert.equal((await server.request('GET', '/console/assets/..%2F..%2Fpackage.json')).status, 404);
});

test('the first page load needs at most 120 KB of JavaScript, gzip-compressed: the entry and every chunk it imports statically', async () => {
  const html = (await server.request('GET', '/console/')).text;
  const queue = assetsOf(html).filter((a) => a.endsWith('.js'));
  const seen = new Set<string>();
  let total = 0;
  while (queue.length) {
    const asset = queue.shift() as string;
    if (seen.has(asset)) continue;
    seen.add(asset);
    const res = await rawGet(`${server.baseUrl}${asset}`, { 'accept-encoding': 'gzip' });
    assert.equal(res.headers['content-encoding'], 'gzip');
    total += res.body.length;
    // Static imports load with the page (esbuild's shared chunks); import("…") ones load on demand and are not counted.
    const text = (await server.request('GET', asset, { headers: { 'accept-encoding': 'identity' } })).text;
    for (const m of text.matchAll(/(?:^|[;}\s])import\s*(?:[\w$*{},\s]+from\s*)?"\.\/([\w-]+\.js)"/g)) queue.push(`/console/assets/${m[1]}`);
  }
  assert.ok(total > 0 && total <= 120 * 1024, `${total} bytes of JavaScript (gzip) on the first load, from ${[...seen].join(', ')}`);
});
