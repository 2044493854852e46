// Preloaded into a benchmarked server (node --import): measures its event-loop delay and its
// garbage collections, and reports them over the IPC channel when the benchmark asks, so the
// server itself has no bench code. The collections are the state's signature: a server in the
// slow state of docs/performance.md ("Why a start drew one of two states") takes full
// collections every few hundred milliseconds under load, one in the fast state almost none.
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
const gc = { scavenges: 0, scavengeMs: 0, fullCollections: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.fullCollections++;
    else if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.scavenges++;
      gc.scavengeMs += e.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });
process.on('message', (m) => {
  if (m === 'eld-reset') {
    h.reset();
    Object.assign(gc, { scavenges: 0, scavengeMs: 0, fullCollections: 0 });
  }
  if (m === 'eld-report') {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    process.send?.({ eld: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) }, gc: { ...gc } });
  }
});
// The IPC channel must not keep a server alive that was asked to stop.
process.channel?.unref();
