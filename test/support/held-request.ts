import { request as httpRequest } from 'node:http';

/**
 * A POST /plants whose headers are sent at once with `Expect: 100-continue`: `headersRead`
 * resolves when the server has read them (it answers 100 Continue), so the request is in flight,
 * and its body is sent when `release` resolves. For tests of a drain.
 */
export function heldPost(url: string, token: string, body: string, release: Promise<void>) {
  let heard!: () => void;
  const headersRead = new Promise<void>((r) => (heard = r));
  const done = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(new URL('/plants', url), {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      heard();
      void release.then(() => req.end(body));
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error('timed out')));
    req.flushHeaders();
  });
  return { headersRead, done };
}
