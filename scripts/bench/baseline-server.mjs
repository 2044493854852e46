// The baseline of `npm run bench`: a bare node:http server that parses the same JSON body and
// answers the same JSON as POST /plants, with no auth, validation or storage.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      const plant = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      body = JSON.stringify(plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    } catch {
      body = '{"error":400,"message":"bad JSON"}';
      res.writeHead(400, { 'content-type': 'application/json' });
    }
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'plant-store listening', url: `http://127.0.0.1:${server.address().port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
