#!/usr/bin/env node
// The `atrium` command: runs src/main.ts with Node 24's native TypeScript support.
import('../src/main.ts');
