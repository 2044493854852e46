// The benchmark's memory line: /proc gives kibibytes, PRODUCT.md's target is "under 150 MB".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peakRss } from '../../scripts/bench/report.js';

describe("the benchmark's peak RSS line", () => {
  it('gives MiB as measured and MB as the target is written', () => {
    assert.equal(peakRss('peak', 140), '\npeak: 140 MiB = 147 MB  (target < 150 MB)');
  });

  it('marks a peak that is under 150 MiB but not under 150 MB', () => {
    assert.equal(peakRss('peak', 143.1), '\npeak: 143 MiB = 150 MB  (target < 150 MB)  NOT MET');
    assert.equal(peakRss('peak', 149), '\npeak: 149 MiB = 156 MB  (target < 150 MB)  NOT MET');
  });
});
