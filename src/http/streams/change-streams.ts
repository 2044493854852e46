import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import { plantPasses, type Change, type ChangeFilter } from '../../domain/change.js';
import { plantJson, type PlantRecord } from '../../domain/plant.js';
import type { Framing, PlantsAsOf, Sink } from '../../feed/index.js';

/** A change as a Server-Sent Event: its position is the event's id, its type the event's name. */
export const sseFraming: Framing = {
  event: (c: Change) => `id: ${c.position}\nevent: ${c.type}\ndata: ${c.json}\n\n`,
  // A comment line: it keeps proxies from closing an idle stream.
  heartbeat: ': keep-alive\n\n',
  // An event with an id and no data: EventSource takes the id as its last and dispatches nothing.
  bookmark: (position) => `id: ${position}\n\n`,
};

/** A snapshot's items as a stream or a JSON answer writes them (`snapshot=true`). */
export interface SnapshotFraming {
  /** Before the first plant. */
  readonly opening: string;
  /** The plant, and whether it is the first written. */
  plant(p: PlantRecord, first: boolean): string;
  /** After the last plant: `synced` at `position` (and, in JSON, the array's end). */
  synced(position: bigint, none: boolean): string;
}

const plantItem = (p: PlantRecord) => `{"type":"plant","id":${p.id},"plant":${plantJson(p)}}`;
const syncedItem = (position: bigint) => `{"type":"synced","position":${position}}`;

/** As events: a plant has no `id:`, so a reconnect before `synced` starts the snapshot again. */
export const sseSnapshot: SnapshotFraming = {
  opening: '',
  plant: (p) => `event: plant\ndata: ${plantItem(p)}\n\n`,
  synced: (position) => `id: ${position}\nevent: synced\ndata: ${syncedItem(position)}\n\n`,
};

/** As one JSON array: the plants, then `synced`; the changes after it are the pages from `after=P`. */
export const jsonSnapshot: SnapshotFraming = {
  opening: '[',
  plant: (p, first) => (first ? plantItem(p) : `,${plantItem(p)}`),
  synced: (position, none) => `${none ? '' : ','}${syncedItem(position)}]`,
};

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
  framing: SnapshotFraming = sseSnapshot,
): Promise<bigint | undefined> {
  try {
    let none = true;
    let text = framing.opening;
    for await (const page of snapshot.pages()) {
      for (const plant of page) {
        if (!plantPasses(plant, filter)) continue;
        text += framing.plant(plant, none);
        none = false;
      }
      if (text && !sink.write(text)) await sink.drained();
      text = '';
      if (!stillWanted()) return undefined;
    }
    const { position } = snapshot;
    sink.write(text + framing.synced(position, none));
    return position;
  } finally {
    await snapshot.close();
  }
}

/**
 * A snapshot as JSON (`snapshot=true`, not a stream): one array of every plant that passes the
 * filters as of P, then `synced` at P, written as the client reads it; `Change-Position` is P and
 * the `Link` the page of changes after it. Cut short (the client left, the server closing, the
 * store failing), the connection is reset: a JSON array that stops must not look whole.
 */
export async function answerSnapshot(
  reply: FastifyReply,
  response: Sink,
  snapshot: PlantsAsOf,
  filter: ChangeFilter,
  link: string,
  stillWanted: () => boolean,
): Promise<void> {
  reply.raw.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'application/json; charset=utf-8',
    'change-position': String(snapshot.position),
    link,
  });
  try {
    const synced = await sendSnapshot(response, snapshot, filter, stillWanted, jsonSnapshot);
    if (synced === undefined) reply.raw.destroy();
    else reply.raw.end();
  } catch (err) {
    if (stillWanted()) reply.log.warn({ err }, 'a snapshot of the plants failed');
    reply.raw.destroy();
  }
}
