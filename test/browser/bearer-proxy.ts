// A same-origin proxy for a browser test: it serves the test's page and forwards every other
// request to the service with `Authorization: Bearer <token>` added, streaming the answer as it
// comes (Server-Sent Events pass through unbuffered). A browser's EventSource cannot send that
// header, and the service takes no other credential: a page in a browser follows the feed
// through such a proxy (or its own back end). Test-only; no part of the service.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BearerProxy {
  url: string;
  /** The headers of every request forwarded to the change feed, in order. */
  feedRequests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startBearerProxy(upstream: () => URL, token: string, page: string): Promise<BearerProxy> {
  const feedRequests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page);
      return;
    }
    if (req.url?.startsWith('/plants/changes')) feedRequests.push(req.headers);
    const target = upstream();
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` },
        // No pooled connection outlives a server that stopped.
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
        // A server that went away mid-answer: the browser sees the connection drop, as it would.
        answer.once('aborted', () => res.destroy());
        answer.once('error', () => res.destroy());
      },
    );
    // Service unreachable (stopped, restarting): a network error for the browser, not a 502,
    // since an EventSource given a non-200 answer stops for good instead of reconnecting.
    up.once('error', () => res.destroy());
    req.pipe(up);
    res.once('close', () => up.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    feedRequests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
