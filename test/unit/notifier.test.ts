/**
 * The PostgreSQL driver's NOTIFY coalescing, with a hand-moved clock: which enqueues
 * notify in their own statement, when a quiet one counts as covered by a later
 * notifying one, and that an uncovered one always gets a trailing notification.
 */
import { expect, test } from "vitest";
import { NOTIFY_COALESCE_MS, Notifier } from "../../src/drivers/postgres/notifier.js";
import { deferred } from "../helpers/common.js";

function setup() {
  let t = 1000;
  const sent: string[] = [];
  const woken: string[] = [];
  let onSend = deferred<string>();
  const notifier = new Notifier(
    async (pool) => {
      sent.push(pool);
      onSend.resolve(pool);
    },
    (pool) => woken.push(pool),
    () => t,
  );
  return {
    notifier,
    sent,
    woken,
    advance: (ms: number) => (t += ms),
    /** Resolves with the pool of the next trailing notification. */
    nextSend: () => {
      onSend = deferred<string>();
      return onSend.promise;
    },
  };
}

/** Lets the notifier's timers (at most one window, real time) run. */
const afterWindow = () => new Promise<void>((resolve) => setTimeout(resolve, NOTIFY_COALESCE_MS * 3));

test("the first enqueue of a window notifies in its statement; the rest of the window is quiet", () => {
  const { notifier, advance } = setup();
  expect(notifier.notifyInline("a")).toBe(1000);
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  // Pools are independent.
  expect(notifier.notifyInline("b")).toBe(1001);
  advance(NOTIFY_COALESCE_MS);
  expect(notifier.notifyInline("a")).toBe(1006);
});

test("a quiet commit nobody covers gets one trailing notification; local workers wake at once", async () => {
  const { notifier, sent, woken, advance, nextSend } = setup();
  notifier.notifyInline("a");
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  notifier.committedQuietly("a");
  expect(woken).toEqual(["a", "a"]);
  const trailing = nextSend();
  advance(NOTIFY_COALESCE_MS);
  expect(await trailing).toBe("a");
  expect(sent).toEqual(["a"]);
  expect(notifier.trailingSent).toBe(1);
  // The trailing notification opened a new window.
  expect(notifier.notifyInline("a")).toBeNull();
});

test("a notifying enqueue that starts after a quiet commit and commits covers it: no trailing notification", async () => {
  const { notifier, sent, advance } = setup();
  notifier.notifyInline("a");
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  advance(NOTIFY_COALESCE_MS);
  const started = notifier.notifyInline("a");
  expect(started).not.toBeNull();
  notifier.committedInline("a", started!);
  await afterWindow();
  expect(sent).toEqual([]);
  expect(notifier.trailingSent).toBe(0);
});

test("a notifying enqueue that started before the quiet commit does not cover it", async () => {
  const { notifier, advance, nextSend } = setup();
  const early = notifier.notifyInline("a");
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  // The early statement commits after the quiet one: its NOTIFY may have been delivered
  // before the quiet work was visible, so it proves nothing.
  notifier.committedInline("a", early!);
  const trailing = nextSend();
  advance(NOTIFY_COALESCE_MS);
  expect(await trailing).toBe("a");
});

/** A quiet commit one window old, while the next window's notifying enqueue is in flight. */
function quietCommitThenInlineInFlight() {
  const env = setup();
  const { notifier, advance } = env;
  notifier.committedInline("a", notifier.notifyInline("a")!);
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  advance(NOTIFY_COALESCE_MS);
  const started = notifier.notifyInline("a");
  expect(started).not.toBeNull();
  advance(1);
  return { ...env, started: started! };
}

test("a window's end waits for a notifying enqueue in flight that started after the quiet commit", async () => {
  const { notifier, sent, started } = quietCommitThenInlineInFlight();
  // The quiet commit is past its window, but the statement in flight will cover it.
  await afterWindow();
  expect(sent).toEqual([]);
  notifier.committedInline("a", started);
  await afterWindow();
  expect(sent).toEqual([]);
  expect(notifier.trailingSent).toBe(0);
});

test("a notifying enqueue that fails covers nothing: the trailing notification follows at once", async () => {
  const { notifier, sent, nextSend } = quietCommitThenInlineInFlight();
  await afterWindow();
  expect(sent).toEqual([]);
  const trailing = nextSend();
  notifier.failedInline("a");
  expect(await trailing).toBe("a");
  expect(notifier.trailingSent).toBe(1);
});

test("close() sends pending trailing notifications at once, then every enqueue notifies", async () => {
  const { notifier, sent } = setup();
  notifier.notifyInline("a");
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  await notifier.close();
  expect(sent).toEqual(["a"]);
  expect(notifier.notifyInline("a")).not.toBeNull();
  expect(notifier.notifyInline("a")).not.toBeNull();
});
