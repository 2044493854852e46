import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection.js';
import { writeOps, type WriteOp, type WriteResult } from './write-ops.js';

export type BatchReply = { results: WriteResult[] } | { error: { message: string; code: string | undefined } };

// The writer thread owns the only write connection. Each message is a batch of ops: they run
// in one transaction and share its fsync, which happens here, off the event loop of the
// thread that serves HTTP.
const db = openConnection((workerData as { path: string }).path);
const apply = writeOps(db);
const runBatch = db.transaction((ops: WriteOp[]) => ops.map(apply));

parentPort!.on('message', (ops: WriteOp[] | 'close') => {
  if (ops === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  let reply: BatchReply;
  try {
    reply = { results: runBatch.immediate(ops) };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    reply = { error: { message: e.message ?? String(err), code: e.code } };
  }
  parentPort!.postMessage(reply);
});
