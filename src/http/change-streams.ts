import type { IncomingMessage, ServerResponse } from 'node:http';
import { plantPasses, type Change, type ChangeFilter } from '../domain/change.js';
import { plantJson, type PlantRecord } from '../domain/plant.js';
import type { Client, Framing, PlantsAsOf, Sink } from '../feed/index.js';
import { answersLate } from './connections.js';

/** A change as a Server-Sent Event: its position is the event's id, its type the event's name. */
export const sseFraming: Framing = {
  event: (c: Change) => `id: ${c.position}\nevent: ${c.type}\ndata: ${c.json}\n\n`,
  // A comment line: it keeps proxies from closing an idle stream.
  heartbeat: ': keep-alive\n\n',
  // An event with an id and no data: EventSource takes the id as its last and dispatches nothing.
  bookmark: (position) => `id: ${position}\n\n`,
};

/** A plant of a snapshot (`snapshot=true`): no `id:`, so a reconnect before `synced` starts the snapshot again. */
const plantEvent = (p: PlantRecord) => `event: plant\ndata: {"type":"plant","id":${p.id},"plant":${plantJson(p)}}\n\n`;

/**
 * Writes the plants of `snapshot` that pass `filter`, a page at a time and only as fast as the
 * client reads them, then `synced` at its position; resolves to that position, or to undefined
 * when `stillWanted` says to stop (the client left, the server is closing). The snapshot is closed.
 */
export async function sendSnapshot(
  sink: Sink,
  snapshot: PlantsAsOf,
  filter: ChangeFilter,
  stillWanted: () => boolean,
): Promise<bigint | undefined> {
  try {
    for await (const page of snapshot.pages()) {
      let text = '';
      for (const plant of page) if (plantPasses(plant, filter)) text += plantEvent(plant);
      if (text && !sink.write(text)) await sink.drained();
      if (!stillWanted()) return undefined;
    }
    const { position } = snapshot;
    sink.write(`id: ${position}\nevent: synced\ndata: {"type":"synced","position":${position}}\n\n`);
    return position;
  } finally {
    await snapshot.close();
  }
}

/** The first bytes of a stream: a reader that loses it comes back after a second (a browser waits 3 s by default). */
export const SSE_PREAMBLE = ': following the changes\nretry: 1000\n\n';

/**
 * A request of the feed as the fan-out sees it: the client a place is held for, and the sink its
 * stream writes to. One object with its methods on the prototype rather than closures: an idle
 * stream holds it for hours, and 10,000 of them are the feed's budget (docs/performance.md).
 */
export class FeedResponse implements Client, Sink {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  /** The response's close covers a request answered or a socket closed once it owns it. */
  get gone(): boolean {
    return this.res.destroyed || this.req.socket.destroyed;
  }

  /**
   * A client that leaves while its request waits is noticed by the socket's close, never by a
   * write: a filtered stream may never be written to. The socket's close covers a request queued
   * behind another on the same connection.
   */
  onLeave(leave: () => void): () => void {
    const { req, res } = this;
    // `on`, not `once`: each closes once, `leave` may be called twice, and once's wrappers would
    // be two more objects an idle stream keeps.
    res.on('close', leave);
    req.socket.on('close', leave);
    // Its connection is read while it waits, though requests wait behind it: else the client's
    // leaving would not be seen.
    answersLate(res);
    return () => {
      res.off('close', leave);
      req.socket.off('close', leave);
    };
  }

  write(text: string): boolean {
    return this.res.write(text);
  }

  get buffered(): number {
    return this.res.writableLength;
  }

  drained(): Promise<void> {
    const { res } = this;
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    });
  }

  close(now: boolean): void {
    if (now) this.res.destroy();
    else this.res.end();
  }
}
