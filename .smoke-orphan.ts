import { startEmbeddedPostgres } from '/work/main/src/platform/db/embedded-postgres.ts';
const h = await startEmbeddedPostgres({ dataDir: process.argv[2], fast: true, log: () => {} });
console.log(JSON.stringify({ port: h.port, pid: h.pid, sigterm: process.listenerCount('SIGTERM') }));
setInterval(() => {}, 1e6);
