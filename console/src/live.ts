// The live list: one stream of the store (snapshot=true) through the client package's
// followChangesInBrowser, which gets a stream ticket with the tab's token (EventSource cannot send
// Authorization), and after a restart or an expired ticket opens again after the last event,
// losing and repeating nothing. The snapshot brings the rows shown up to its position; every
// change after it reaches the list. Its state is shown in the page's status line. A 410 (the log
// no longer reaches the last position: a restore, or changes pruned while away) lists the page
// again and follows from a fresh snapshot, as signing in does, instead of stopping.
import type { NewPlant } from '../../src/client/index.js';
import { ChangesGoneError, FollowError } from '../../src/client/follow.js';
import { followChangesInBrowser, type BrowserFollower } from '../../src/client/follow-browser.js';
import type { PlantList } from './plants/list.js';
import type { Session } from './session.js';

type State = 'connecting' | 'following' | 'reconnecting' | 'stopped';

/** What follows the store until it is closed: one follower at a time, a new one after a 410. */
export interface Following {
  close(): void;
}

export function followStore(session: Session, list: PlantList, status: HTMLElement): Following {
  let closed = false;
  let follower: BrowserFollower | undefined;
  const relist = async () => {
    await list.reload();
    if (!closed) follower = followOnce(session, list, status, relist);
  };
  follower = followOnce(session, list, status, relist);
  return {
    close() {
      closed = true;
      follower?.close();
    },
  };
}

function followOnce(
  session: Session,
  list: PlantList,
  status: HTMLElement,
  gone: () => Promise<void>,
): BrowserFollower {
  const show = (state: State, text: string) => {
    status.hidden = false;
    status.dataset.state = state;
    status.textContent = `Live: ${text}`;
  };
  // The page's EventSource, watched: its open and error events are the connection's state.
  class WatchedSource extends EventSource {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      this.addEventListener('open', () => show('following', 'following the store'));
      this.addEventListener('error', () => show('reconnecting', 'reconnecting…'));
    }
  }
  let shown = new Set<string>();
  let snapshot = new Map<string, NewPlant>();
  show('connecting', 'connecting…');
  return followChangesInBrowser({
    baseUrl: session.baseUrl,
    token: session.token,
    snapshot: true,
    EventSource: WatchedSource,
    onSnapshot() {
      // Only the rows on screen are kept: a snapshot of a large store is not held in the page.
      shown = list.ids();
      snapshot = new Map();
    },
    onPlant(item) {
      const id = String(item.id);
      if (shown.has(id)) snapshot.set(id, item.plant);
    },
    onSynced() {
      list.reconcile(snapshot, shown);
      snapshot = new Map();
      show('following', 'following the store');
    },
    onChange: (change) => list.apply(change),
    onError(error) {
      if (error instanceof ChangesGoneError) {
        show('connecting', 'the store no longer holds the changes since this list: listing again…');
        void gone();
      } else if (error instanceof FollowError && (error.status === 401 || error.status === 403))
        show(
          'stopped',
          `stopped: ${error.status === 401 ? 'the token is no longer accepted' : 'the token may not read plants'}`,
        );
      else show('reconnecting', 'reconnecting…');
    },
  });
}
