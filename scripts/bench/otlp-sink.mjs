// The collector of the traces section of `npm run bench`: takes what an OTLP/HTTP exporter posts
// and answers 200, reading and dropping it, so that only the server's own cost of its spans is
// measured.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'plant-store listening', url: `http://127.0.0.1:${server.address().port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
