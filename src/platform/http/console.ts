// Serves the web console (console/dist, built by console/build.ts) at /console: hashed assets are
// immutable for a year, index.html is revalidated on every load, and any other path under /console
// answers index.html so the single-page app's own routes survive a reload or a shared link.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { HttpProblem } from '../errors.ts';
import type { App } from './app.ts';

export const CONSOLE_DIST = path.resolve(import.meta.dirname, '../../../console/dist');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
const IMMUTABLE = 'public, max-age=31536000, immutable';
// Assets are named by esbuild's content hash: a name is letters, digits, - and _ with one extension.
const ASSET_NAME = /^[\w-]+\.(js|css|svg|png|woff2)$/;

/** The file's bytes in the best encoding the client accepts among those built (br, gzip, identity). */
async function sendFile(request: FastifyRequest, reply: FastifyReply, file: string, cacheControl: string): Promise<FastifyReply> {
  const accept = String(request.headers['accept-encoding'] ?? '');
  const encodings = [/\bbr\b/.test(accept) ? 'br' : null, /\bgzip\b/.test(accept) ? 'gzip' : null].filter((e) => e !== null);
  reply.header('cache-control', cacheControl).header('vary', 'Accept-Encoding').header('x-content-type-options', 'nosniff');
  reply.type(TYPES[path.extname(file)] ?? 'application/octet-stream');
  for (const encoding of encodings) {
    const candidate = `${file}.${encoding === 'br' ? 'br' : 'gz'}`;
    if (existsSync(candidate)) return reply.header('content-encoding', encoding).send(await readFile(candidate));
  }
  return reply.send(await readFile(file));
}

export async function consoleRoutes(app: App): Promise<void> {
  const config = { auth: 'none' as const };
  const index = path.join(CONSOLE_DIST, 'index.html');
  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!existsSync(index)) throw new HttpProblem(503, 'The console is not built: run `npm install` (or `node console/build.ts`).');
    // The page names the current assets, so it is never used without asking; the assets never change.
    reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'");
    reply.header('referrer-policy', 'no-referrer');
    return sendFile(request, reply, index, 'no-cache');
  };

  app.get('/console/assets/:file', { config, schema: { hide: true, params: Type.Object({ file: Type.String() }) } }, async (request, reply) => {
    const { file } = request.params;
    const full = path.join(CONSOLE_DIST, 'assets', file);
    if (!ASSET_NAME.test(file) || !existsSync(full)) throw new HttpProblem(404, `No console asset ${file}.`);
    return sendFile(request, reply, full, IMMUTABLE);
  });
  app.get('/console', { config, schema: { hide: true } }, sendIndex);
  app.get('/console/*', { config, schema: { hide: true } }, sendIndex);
}
