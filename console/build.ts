// Builds the web console (console/src, Preact + TypeScript) into console/dist: content-hashed assets
// under dist/assets and an index.html naming them. `--if-stale` skips the build when the sources,
// this script and the bundled packages are what the last build was made from (a hash in dist/).
import { createHash } from 'node:crypto';
import { existsSync, globSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const here = import.meta.dirname;
export const CONSOLE_DIST = path.join(here, 'dist');
const STAMP = 'build-stamp.json';

function sourceHash(): string {
  const hash = createHash('sha256');
  const files = globSync('src/**/*', { cwd: here, withFileTypes: false }).sort();
  for (const f of [...files, 'build.ts']) {
    const full = path.join(here, f);
    hash.update(f);
    try {
      hash.update(readFileSync(full));
    } catch {
      // a directory
    }
  }
  for (const pkg of ['preact', 'esbuild']) hash.update(readFileSync(path.join(here, '..', 'node_modules', pkg, 'package.json')));
  return hash.digest('hex');
}

export function isStale(): boolean {
  const stamp = path.join(CONSOLE_DIST, STAMP);
  if (!existsSync(stamp)) return true;
  return (JSON.parse(readFileSync(stamp, 'utf8')) as { source: string }).source !== sourceHash();
}

export interface BuildReport {
  files: { file: string; bytes: number; gzipBytes: number }[];
  entryJsGzipBytes: number;
}

export async function buildConsole(): Promise<BuildReport> {
  const esbuild = await import('esbuild');
  const source = sourceHash();
  // Built beside dist and renamed into place, so a server reading dist never sees half a build.
  const staging = `${CONSOLE_DIST}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: [path.join(here, 'src', 'main.tsx')],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    sourcemap: false,
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: path.join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = outputs.find(([, o]) => o.entryPoint?.endsWith('main.tsx') && !o.entryPoint.endsWith('.css'));
  if (!entry) throw new Error('console build: no entry output');
  const base = (file: string) => path.basename(file);
  const css = entry[1].cssBundle ? base(entry[1].cssBundle) : null;
  // The icon is an asset like the others (content-hashed, immutable), named by the page.
  const icon = readFileSync(path.join(here, 'src', 'favicon.svg'));
  const favicon = `favicon-${createHash('sha256').update(icon).digest('hex').slice(0, 8).toUpperCase()}.svg`;
  await writeFile(path.join(staging, 'assets', favicon), icon);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/console/assets/${favicon}" type="image/svg+xml">
<title>Atrium console</title>
${css ? `<link rel="stylesheet" href="/console/assets/${css}">\n` : ''}<script type="module" src="/console/assets/${base(entry[0])}"></script>
</head>
<body>
<div id="app"><noscript>The Atrium console needs JavaScript.</noscript></div>
</body>
</html>
`;
  await writeFile(path.join(staging, 'index.html'), html);
  await writeFile(path.join(staging, STAMP), `${JSON.stringify({ source, builtAt: new Date().toISOString() })}\n`);
  const files = [];
  for (const file of [...outputs.map(([f]) => path.join('assets', base(f))), path.join('assets', favicon), 'index.html']) {
    const full = path.join(staging, file);
    const bytes = readFileSync(full);
    // Compressed once here at the highest levels, so serving a file costs a read, not a compression.
    const gz = gzipSync(bytes, { level: 9 });
    await writeFile(`${full}.gz`, gz);
    await writeFile(`${full}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    files.push({ file: base(file), bytes: bytes.length, gzipBytes: gz.length });
  }
  const old = `${CONSOLE_DIST}.${process.pid}.old`;
  if (existsSync(CONSOLE_DIST)) await rename(CONSOLE_DIST, old);
  await rename(staging, CONSOLE_DIST);
  await rm(old, { recursive: true, force: true });
  const entryJsGzipBytes = files.find((f) => f.file === base(entry[0]))?.gzipBytes ?? 0;
  return { files, entryJsGzipBytes };
}

if (import.meta.main) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && !isStale()) process.exit(0);
  await mkdir(here, { recursive: true });
  const report = await buildConsole();
  const total = report.files.filter((f) => f.file.endsWith('.js')).reduce((n, f) => n + f.gzipBytes, 0);
  process.stderr.write(
    `console built into console/dist: entry ${(report.entryJsGzipBytes / 1024).toFixed(1)} KB gzip, all JS ${(total / 1024).toFixed(1)} KB gzip\n`,
  );
}
