// The feed section's reader: the ids of a Server-Sent Events stream however its chunks are cut,
// the latency percentiles of its histogram, and the summary lines that say whether a target is met.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { against } from '../../scripts/bench/report.js';
import { Histogram, SseIds } from '../../scripts/bench/sse.js';

const stream =
  ': following the changes\n\n' +
  'id: 1795711919812998\nevent: created\ndata: {"position":1795711919812998,"type":"created","id":1}\n\n' +
  ': keep-alive\nid: 1795711919812998\n\n' +
  'id:1795711919812999\nevent: deleted\ndata: {"position":1795711919812999,"type":"deleted","id":1}\n\n';

describe("the feed section's SSE ids", () => {
  it("reads each event's id line, with or without the space after the colon, and no bookmark's", () => {
    assert.deepEqual(new SseIds().push(stream), [1795711919812998, 1795711919812999]);
  });

  it('gives the same ids however the stream is cut into chunks', () => {
    for (let size = 1; size <= 40; size++) {
      const ids = new SseIds();
      const got: number[] = [];
      for (let at = 0; at < stream.length; at += size) got.push(...ids.push(stream.slice(at, at + size)));
      assert.deepEqual(got, [1795711919812998, 1795711919812999], `chunks of ${size}`);
    }
  });

  it('waits for the end of an id line before reading it', () => {
    const ids = new SseIds();
    assert.deepEqual(ids.push('id: 17957'), []);
    assert.deepEqual(ids.push('11919812998'), []);
    assert.deepEqual(ids.push('\nevent: created\n'), [1795711919812998]);
  });

  it('does not take a data line that mentions id: for an id', () => {
    assert.deepEqual(new SseIds().push('data: {"id:": 3}\n\nid: 4\nevent: created\n'), [4]);
  });

  it('waits for the line after an id before it tells an event from a bookmark', () => {
    const ids = new SseIds();
    assert.deepEqual(ids.push('id: 5\n'), []);
    assert.deepEqual(ids.push('\nid: 6\n'), []);
    assert.deepEqual(ids.push('event: created\ndata: {}\n\n'), [6]);
  });
});

describe("the feed section's latency histogram", () => {
  it('gives percentiles to its bin, and the max', () => {
    const h = new Histogram(1, 1000);
    for (let ms = 1; ms <= 100; ms++) h.record(ms - 0.5);
    assert.equal(h.count, 100);
    assert.equal(h.percentile(50), 50);
    assert.equal(h.percentile(99), 99);
    assert.equal(h.percentile(100), 99.5);
    assert.equal(h.max, 99.5);
  });

  it('counts below zero as zero and past its range in its last bin', () => {
    const h = new Histogram(1, 10);
    h.record(-3, 98);
    h.record(5000, 2);
    assert.equal(h.percentile(50), 1);
    assert.equal(h.percentile(99), 5000);
    assert.equal(h.max, 5000);
  });

  it('has no percentile when empty', () => {
    assert.ok(Number.isNaN(new Histogram().percentile(99)));
  });
});

describe("the bench's lines against a target", () => {
  it('says met or NOT MET, for a floor and for a ceiling', () => {
    assert.equal(against('ratio', 0.85, 'x', 0.8, true), '\nratio: 0.85x  (target >= 0.80x: met)');
    assert.equal(against('ratio', 0.79, 'x', 0.8, true), '\nratio: 0.79x  (target >= 0.80x: NOT MET)');
    assert.equal(against('p99', 250, ' ms', 250, false), '\np99: 250 ms  (target <= 250 ms: met)');
    assert.equal(against('p99', 251, ' ms', 250, false), '\np99: 251 ms  (target <= 250 ms: NOT MET)');
    assert.equal(against('p99', NaN, ' ms', 250, false), '\np99: - ms  (target <= 250 ms: NOT MET)');
  });
});
