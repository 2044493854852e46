import { startService } from './processes.ts';
import { load } from './load.ts';
const t = setTimeout(() => {
  console.log('timeout');
  process.exit(1);
}, 20000);
const tok = 'pst_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const s = await startService({ DATABASE_URL: 'sqlite:/tmp/dbg2/x.db', PLANT_STORE_TOKEN: tok });
console.log('ready', s.url, s.readyMs);
let n = 1;
const r = await load(s, {
  method: 'POST',
  headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' },
  next: () => ({ path: '/plants', body: `{"id":${n++},"name":"x"}` }),
  seconds: 2,
  connections: 10,
});
console.log(r);
await s.stop();
clearTimeout(t);
