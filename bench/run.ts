// `npm run bench -- <name>` runs bench/<name>.ts; without a name it lists them.
import { readdirSync } from 'node:fs';
import path from 'node:path';

const names = readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(f))
  .map((f) => f.slice(0, -3));
const name = process.argv[2];
if (!name || !names.includes(name)) {
  console.log(`Usage: npm run bench -- <${names.join('|')}>`);
  process.exit(name ? 2 : 0);
}
await import(path.join(import.meta.dirname, `${name}.ts`));
