// The webhook SSRF guard: every spelling of an internal address is refused at `webhook add`
// (checkSubscriberUrl) and at connect time (send's literal check and guardedLookup); public
// unicast addresses pass, IPv6 forms that carry a public IPv4 address too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkSubscriberUrl,
  guardedLookup,
  isPrivateAddress,
  nonPublicReason,
} from '../../src/events/address-guard.js';
import { send } from '../../src/events/send.js';

/** [address, what it is]: none may be reached. */
const REFUSED: [string, RegExp][] = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['10.1.2.3', /private/],
  ['172.16.5.4', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /linkLocal/],
  ['100.64.0.1', /carrierGradeNat/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['255.255.255.255', /broadcast/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['192.0.0.1', /reserved/],
  ['192.0.2.1', /reserved/],
  ['198.18.0.1', /reserved/],
  ['198.51.100.7', /reserved/],
  ['203.0.113.9', /reserved/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['0:0:0:0:0:0:0:1', /loopback/],
  ['fe80::1', /linkLocal/],
  ['FE80::1', /linkLocal/],
  ['fe80::1%eth0', /linkLocal/],
  ['febf:ffff::1', /linkLocal/],
  ['fc00::1', /uniqueLocal/],
  ['fd12:3456::1', /uniqueLocal/],
  ['fec0::1', /SiteLocal/],
  ['feff::1', /SiteLocal/],
  ['ff02::1', /multicast/],
  ['100::1', /discard/],
  ['2001:db8::1', /reserved/],
  ['2001:2::1', /benchmarking/],
  // IPv4-compatible (deprecated): ::a.b.c.d
  ['::127.0.0.1', /127\.0\.0\.1 \(loopback\)/],
  ['::7f00:1', /IPv4-compatible form of 127\.0\.0\.1 \(loopback\)/],
  ['::10.0.0.1', /10\.0\.0\.1 \(private\)/],
  ['::a9fe:a9fe', /169\.254\.169\.254 \(linkLocal\)/],
  // IPv4-mapped
  ['::ffff:127.0.0.1', /ipv4Mapped form of 127\.0\.0\.1 \(loopback\)/],
  ['::ffff:7f00:1', /127\.0\.0\.1 \(loopback\)/],
  ['0:0:0:0:0:FFFF:7F00:0001', /127\.0\.0\.1 \(loopback\)/],
  ['::ffff:169.254.169.254', /linkLocal/],
  ['::ffff:0.0.0.0', /unspecified/],
  // IPv4-translated (RFC 6145)
  ['::ffff:0:127.0.0.1', /rfc6145 form of 127\.0\.0\.1 \(loopback\)/],
  ['::ffff:0:7f00:1', /127\.0\.0\.1 \(loopback\)/],
  ['::ffff:0:a00:1', /10\.0\.0\.1 \(private\)/],
  // NAT64 (RFC 6052), and the local-use prefix of RFC 8215
  ['64:ff9b::127.0.0.1', /rfc6052 form of 127\.0\.0\.1 \(loopback\)/],
  ['64:ff9b::7f00:1', /127\.0\.0\.1 \(loopback\)/],
  ['64:ff9b::192.168.0.1', /192\.168\.0\.1 \(private\)/],
  ['64:ff9b:1::8.8.8.8', /rfc6052/],
  // 6to4
  ['2002:7f00:1::', /6to4 form of 127\.0\.0\.1 \(loopback\)/],
  ['2002:7f00:0001:0:0:0:0:1', /127\.0\.0\.1 \(loopback\)/],
  ['2002:a00:1::1', /10\.0\.0\.1 \(private\)/],
  ['2002:a9fe:a9fe::', /169\.254\.169\.254 \(linkLocal\)/],
  // Teredo: 2001:0:<server>:<flags>:<port>:<client with its bits inverted>
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', /teredo form of 127\.0\.0\.1 \(loopback\)/],
  ['2001:0:7f00:1:8000:63bf:f7f7:f7f7', /teredo form of 127\.0\.0\.1 \(loopback\)/],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', /10\.0\.0\.1 \(private\)/],
  ['not-an-address', /not an IP address/],
  ['', /not an IP address/],
];

const PUBLIC = [
  '8.8.8.8',
  '93.184.216.34',
  '1.1.1.1',
  '2606:4700::1111',
  '2a00:1450:4001:82a::200e',
  '::ffff:8.8.8.8',
  '::ffff:0:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

describe('the address guard classifies with ipaddr.js', () => {
  for (const [address, reason] of REFUSED) {
    it(`refuses ${address || '(empty)'}`, () => {
      assert.ok(isPrivateAddress(address));
      assert.match(nonPublicReason(address) ?? '', reason);
    });
  }
  for (const address of PUBLIC) {
    it(`lets ${address} through`, () => {
      assert.equal(nonPublicReason(address), undefined);
      assert.equal(isPrivateAddress(address), false);
    });
  }
});

describe('webhook add refuses internal addresses however the URL spells them', () => {
  const URLS = [
    'http://[::127.0.0.1]/hook',
    'http://[::ffff:0:127.0.0.1]/hook',
    'http://[64:ff9b::127.0.0.1]/hook',
    'http://[2002:7f00:1::]/hook',
    'http://[fec0::1]/hook',
    'http://[::ffff:127.0.0.1]:8080/hook',
    'http://[0:0:0:0:0:ffff:7f00:1]/hook',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook',
    'https://[fe80::1]/hook',
    'http://127.1/hook',
    'http://0x7f.0.0.1/hook',
    'http://2130706433/hook',
    'http://017700000001/hook',
    'http://0177.0.0.01/hook',
    'http://localhost/hook',
    'http://169.254.169.254/latest/meta-data/',
  ];
  for (const url of URLS) {
    it(url, async () => {
      const problem = await checkSubscriberUrl(url, false);
      assert.match(problem ?? '(accepted)', /not a public address .*WEBHOOK_ALLOW_PRIVATE=true/);
      assert.equal(await checkSubscriberUrl(url, true), undefined, 'allowed with WEBHOOK_ALLOW_PRIVATE');
    });
  }
});

describe('connect time: send() and guardedLookup refuse them too', () => {
  for (const host of [
    '[::127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[2002:7f00:1::]',
    '[fec0::1]',
  ]) {
    it(`send to http://${host}:9/ is refused before connecting`, async () => {
      const r = await send(`http://${host}:9/`, {}, '{}', { timeoutMs: 2000, allowPrivate: false });
      assert.equal(r.status, null);
      assert.match(r.error ?? '', /^EPRIVATEADDRESS: .* is not a public address/);
    });
  }

  for (const name of ['localhost', '::ffff:0:127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '::7f00:1']) {
    it(`guardedLookup(${name})`, async () => {
      const err = await new Promise<Error | null>((resolve) => guardedLookup(false)(name, {}, (e) => resolve(e)));
      assert.match(String(err), /PrivateAddressError: .* not a public address/);
    });
  }

  it('guardedLookup lets a public literal through, in the shape http.request asks for', async () => {
    const single = await new Promise<[unknown, unknown, unknown]>((resolve) =>
      guardedLookup(false)('8.8.8.8', {}, (...args) => resolve(args as [unknown, unknown, unknown])),
    );
    assert.deepEqual(single, [null, '8.8.8.8', 4]);
    const all = await new Promise<[unknown, unknown]>((resolve) =>
      guardedLookup(false)('64:ff9b::808:808', { all: true }, (...args) => resolve(args as [unknown, unknown])),
    );
    assert.deepEqual(all, [null, [{ address: '64:ff9b::808:808', family: 6 }]]);
  });
});
