// Preloaded into a benchmarked server (node --import): measures its event-loop delay and
// reports it over the IPC channel when the benchmark asks, so the server itself has no bench code.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
process.on('message', (m) => {
  if (m === 'eld-reset') h.reset();
  if (m === 'eld-report') {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    process.send?.({ eld: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) } });
  }
});
// The IPC channel must not keep a server alive that was asked to stop.
process.channel?.unref();
