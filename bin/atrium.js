#!/usr/bin/env node
// The `atrium` command: runs src/main.ts with Node 24's native TypeScript support. Node's compile cache is
// enabled first (V8's code of each module, TypeScript already stripped, kept under node_modules/.cache), so a
// command after the first starts in about a quarter less CPU; then the import's heap bound
// (src/cli/import-heap.ts) is applied, before the CLI's modules load.
import module from 'node:module';

module.enableCompileCache?.(new URL('../node_modules/.cache/atrium/compile-cache', import.meta.url).pathname);
const { boundImportHeap } = await import('../src/cli/import-heap.ts');
boundImportHeap();
await import('../src/main.ts');
