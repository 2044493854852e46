// A page on its own origin that follows the store as docs/guides/cors.md shows: a stream ticket,
// then EventSource; a new ticket when the stream ends for good, made with the page's current token
// (a string, or a function that gives it: a page whose identity provider renews its access token).

/** The page: the snippet of docs/guides/cors.md, its changes kept in window.received. */
export const followPage = (api: string): string => `<!doctype html><meta charset="utf-8"><title>follow</title><script>
  window.received = [];
  window.opened = 0;
  async function follow(token, after) {
    const bearer = typeof token === 'function' ? await token() : token;
    const r = await fetch('${api}/plants/changes/tickets', { method: 'POST', headers: { authorization: 'Bearer ' + bearer } });
    const { ticket } = await r.json();
    const query = new URLSearchParams({ ticket, ...(after && { after }) });
    const source = new EventSource('${api}/plants/changes?' + query);
    source.onopen = () => window.opened++;
    for (const type of ['created', 'updated', 'deleted'])
      source.addEventListener(type, (e) => window.received.push({ id: (after = e.lastEventId), data: e.data }));
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) setTimeout(() => follow(token, after), 200);
    };
  }
</script>`;
