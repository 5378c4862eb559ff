// The import's heap bound (decision 0075). It imports nothing, so bin/atrium.js can apply it before the
// CLI's modules load (they would otherwise load twice).

/**
 * The import's heap limit (MB). It keeps 30–45 MB live, but the pages it parses and the batches it serialises
 * are garbage V8 lets grow the heap by a few hundred MB before collecting; a bound keeps the process's peak
 * RSS near 210–220 MB. ATRIUM_IMPORT_HEAP_MB overrides it (0: no bound).
 */
const IMPORT_HEAP_MB = 128;

/**
 * When `args` are the `import` command and Node was started without --max-old-space-size, replaces this
 * process (same pid, stdio and environment) with the same command plus the bound: `npm run atrium` serves
 * every command, and `tenants create --demo` needs a large heap. Returns only when nothing is to be done.
 */
export function boundImportHeap(args: readonly string[] = process.argv.slice(2)): void {
  if (args.find((a) => !a.startsWith('-')) !== 'import') return;
  const mb = Number(process.env.ATRIUM_IMPORT_HEAP_MB ?? IMPORT_HEAP_MB);
  if (!Number.isInteger(mb) || mb <= 0 || typeof process.execve !== 'function') return;
  if (process.execArgv.some((a) => a.startsWith('--max-old-space-size'))) return;
  process.execve(process.execPath, [process.execPath, ...process.execArgv, `--max-old-space-size=${mb}`, ...process.argv.slice(1)], process.env);
}
