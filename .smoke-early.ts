import net from 'node:net';
import { startEmbeddedPostgres } from '/work/main/src/platform/db/embedded-postgres.ts';
const b = net.createServer(); await new Promise<void>((r) => b.listen(0, '127.0.0.1', r));
const port = (b.address() as net.AddressInfo).port;
const t0 = Date.now();
try { await startEmbeddedPostgres({ dataDir: '/tmp/tmp.b7guTBONqi/pg', port, fast: true, log: (l) => console.log(Date.now() - t0, l) }); } catch (e) { console.log(Date.now() - t0, (e as Error).message); }
b.close();
