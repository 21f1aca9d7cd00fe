import { describe, expect, it } from 'vitest';
import { type PageEnvironment, waitUntilOnline, waitUntilVisible } from '../../src/http/index.js';
import { VirtualClock } from '../../src/testing/index.js';

/** A stand-in page: a navigator whose onLine we flip, and window/document event targets. */
function page(online: boolean, visibility: 'visible' | 'hidden' = 'visible') {
  const window = new EventTarget();
  const document = Object.assign(new EventTarget(), { visibilityState: visibility as string });
  const navigator = { onLine: online };
  const env: PageEnvironment = { navigator, window, document };
  return {
    env,
    goOnline() {
      navigator.onLine = true;
      window.dispatchEvent(new Event('online'));
    },
    show() {
      document.visibilityState = 'visible';
      document.dispatchEvent(new Event('visibilitychange'));
    },
  };
}

describe('waiting instead of burning attempts in a browser', () => {
  it('nothing to wait for when online, or outside a page', () => {
    const clock = new VirtualClock();
    expect(waitUntilOnline(undefined, undefined, clock, page(true).env)).toBeUndefined();
    expect(waitUntilOnline(undefined, undefined, clock, {})).toBeUndefined();
    expect(waitUntilOnline(undefined, undefined, clock)).toBeUndefined(); // Node: no window
    expect(waitUntilVisible(undefined, undefined, clock, page(true, 'visible').env)).toBeUndefined();
  });

  it('offline: resolves on the online event, and leaves no timer behind', async () => {
    const clock = new VirtualClock();
    const p = page(false);
    let done = false;
    waitUntilOnline(undefined, 5_000, clock, p.env)?.then(() => (done = true));
    await clock.advance(1_000);
    expect(done).toBe(false);
    p.goOnline();
    await clock.advance(0);
    expect(done).toBe(true);
    expect(clock.nextAt()).toBeUndefined();
  });

  it('offline until the deadline: resolves at the deadline (the caller then gives up), not before', async () => {
    const clock = new VirtualClock();
    let done = false;
    waitUntilOnline(undefined, 300, clock, page(false).env)?.then(() => (done = true));
    await clock.advance(299);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
  });

  it('an abort ends the wait with its reason, and removes the listeners', async () => {
    const clock = new VirtualClock();
    const p = page(false);
    const controller = new AbortController();
    const waiting = waitUntilOnline(controller.signal, undefined, clock, p.env);
    controller.abort(new Error('navigated away'));
    await expect(waiting).rejects.toThrow('navigated away');
    expect(clock.nextAt()).toBeUndefined();
  });

  it('pauseWhileHidden: waits for visibilitychange to visible', async () => {
    const clock = new VirtualClock();
    const p = page(true, 'hidden');
    let done = false;
    waitUntilVisible(undefined, undefined, clock, p.env)?.then(() => (done = true));
    await clock.advance(10_000);
    expect(done).toBe(false);
    p.show();
    await clock.advance(0);
    expect(done).toBe(true);
  });
});
