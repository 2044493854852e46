// The change feed, as the rest of the service sees it: this instance's view of the log's end
// (hub.ts), reading the log by position (read.ts), and the fan-out of new changes to the open
// streams (fan-out.ts), which writes to sinks the edge provides and frames. Nothing outside
// src/feed imports its other modules (.dependency-cruiser.cjs), and nothing outside it changes
// the hub's state: writes reach the hub through the store (ChangeLog.onWritten).
export { ChangeHub, POLL_MS } from './hub.js';
export { plantsAsOf } from './snapshot.js';
export {
  filterOf,
  listChanges,
  startingPoint,
  type ChangesInput,
  type ChangesPage,
  type Feed,
  type PlantsAsOf,
} from './read.js';
export {
  ChangeStreams,
  HEARTBEAT_MS,
  MAX_UNREAD_BYTES,
  Place,
  RECHECK_MS,
  STALL_MS,
  type Client,
  type Framing,
  type Sink,
  type StreamOptions,
} from './fan-out.js';
