// A stream of GET /plants/changes opened as a browser's EventSource opens it (Accept:
// text/event-stream, a bearer token), read as text: its blocks, its events, when it closes.
import { request, type IncomingMessage } from 'node:http';

/** One block of a stream, its fields by name (comment lines left out). */
export interface Block {
  id?: string;
  event?: string;
  data?: string;
}

export interface EventStream {
  res: IncomingMessage;
  status: number;
  /** The text received so far. */
  text: () => string;
  /** The whole blocks received so far, but for the preamble's `retry`. */
  blocks: () => Block[];
  /** The events received so far that have an id and data (no bookmark): [id, event, data]. */
  events: () => [string, string, string][];
  /** The positions of every `id:` received so far (events and bookmarks). */
  ids: () => bigint[];
  closed: Promise<void>;
  close: () => void;
}

const parse = (text: string): Block[] =>
  text
    .split('\n\n')
    .slice(0, -1)
    .map((b) => b.split('\n').filter((l) => l !== '' && !l.startsWith(':') && !l.startsWith('retry:')))
    .filter((lines) => lines.length > 0)
    .map((lines) => Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)])));

/** Opens a stream; with `token` '' it sends no Authorization (a ticket in the path instead). */
export function openEventStream(
  base: string,
  token: string,
  path = '/plants/changes',
  headers: Record<string, string> = {},
): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, {
      headers: { accept: 'text/event-stream', ...(token && { authorization: `Bearer ${token}` }), ...headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', () => undefined);
      const closed = new Promise<void>((done) => res.once('close', () => done()));
      resolve({
        res,
        status: res.statusCode!,
        text: () => text,
        blocks: () => parse(text),
        // A bookmark (an id and no data) is no event: EventSource only takes its id.
        events: () =>
          parse(text)
            .filter((b) => b.id !== undefined && b.data !== undefined)
            .map((b) => [b.id!, b.event!, b.data!] as [string, string, string]),
        ids: () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => BigInt(m[1]!)),
        closed,
        close: () => res.destroy(),
      });
    });
    req.end();
  });
}
