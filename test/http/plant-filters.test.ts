// GET /plants?tag=&q= over HTTP on both stores: the filters, their combination, and the Link of
// each page carrying them, percent-encoded, so that following it walks exactly the matches.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importPlants } from '../../src/use-cases/export-import.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { send } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

type Rec = { id: number; name: string; tag?: string };
const TAGS = ['tropical', 'a&b =c+d', 'Ünïcode/🌿', ''];

for (const store of stores) {
  describe(`GET /plants filters over HTTP [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    const all: Rec[] = [];
    const get = (path: string) => send(server, { path, headers: { authorization: `Bearer ${server.token}` } });

    /** Follows Link from `first` to the end; every page is checked against the document on the way. */
    async function walk(first: string): Promise<{ ids: number[]; links: string[] }> {
      const ids: number[] = [];
      const links: string[] = [];
      let next: string | undefined = first;
      for (let pages = 0; next && pages < 100; pages++) {
        const res = await get(next);
        assert.equal(res.status, 200, `${next}: ${res.text}`);
        ids.push(...(res.json as Rec[]).map((p) => p.id));
        const link = res.headers.link as string | undefined;
        if (link) links.push(link);
        next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
      }
      return { ids, links };
    }

    before(async () => {
      server = await buildTestApp({ store });
      for (let i = 0; i < 200; i++) {
        const name = i % 5 === 0 ? `Monstera deliciosa ${i}` : i % 7 === 0 ? `Café au lait ${i}` : `Fern ${i}`;
        const tag = i % 3 === 0 ? undefined : TAGS[i % TAGS.length];
        all.push({ id: i * 1000 - 100_000, name, ...(tag !== undefined && { tag }) });
      }
      const report = await importPlants(
        server.services.store,
        server.services.doc,
        all.map((p) => JSON.stringify(p)),
      );
      assert.equal(report.created, all.length);
    });
    after(() => server.close());

    it('walks every plant of any of several tags, page by page, the Link keeping the tags', async () => {
      for (const tags of [['tropical'], ['a&b =c+d', 'Ünïcode/🌿'], [''], ['nothing']]) {
        const query = tags.map((t) => `tag=${encodeURIComponent(t)}`).join('&');
        const { ids, links } = await walk(`/plants?limit=7&${query}`);
        const expected = all.filter((p) => p.tag !== undefined && tags.includes(p.tag)).map((p) => p.id);
        assert.deepEqual(ids, expected, tags.join('|'));
        for (const link of links) assert.ok(link.includes(`&${query}&after=`), link);
      }
    });

    it('finds names by whole words, ignoring case and accents, with the tag and across pages', async () => {
      const words = (p: Rec) => p.name.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').split(' ');
      for (const q of ['monstera', 'DELICIOSA monstera', 'cafe', 'CAFÉ   AU', 'monstera-deliciosa', 'lait, café']) {
        const wanted = q
          .toLowerCase()
          .normalize('NFD')
          .replace(/\p{M}/gu, '')
          .split(/[^a-z0-9]+/)
          .filter(Boolean);
        const expected = all.filter((p) => wanted.every((w) => words(p).includes(w))).map((p) => p.id);
        assert.ok(expected.length > 5, q);
        assert.deepEqual((await walk(`/plants?limit=4&q=${encodeURIComponent(q)}`)).ids, expected, q);
      }
      assert.deepEqual((await walk('/plants?q=mon')).ids, [], 'whole words only');
      const both = await walk(`/plants?limit=3&q=fern&tag=tropical&tag=${encodeURIComponent('Ünïcode/🌿')}`);
      const expected = all.filter((p) => p.name.startsWith('Fern') && ['tropical', 'Ünïcode/🌿'].includes(p.tag!));
      assert.deepEqual(
        both.ids,
        expected.map((p) => p.id),
      );
      assert.ok(both.links.every((l) => l.includes('&q=fern&after=')));
    });
  });
}
