#!/usr/bin/env node
// The `atrium` command: runs src/main.ts with Node 24's native TypeScript support. The import's heap bound
// (src/cli/import-heap.ts) is applied first, before the CLI's modules load.
const { boundImportHeap } = await import('../src/cli/import-heap.ts');
boundImportHeap();
await import('../src/main.ts');
