/**
 * The PostgreSQL driver's NOTIFY coalescing, on a ManualClock (its timers fire only when
 * the test moves time): which enqueues notify in their own statement, when a quiet one
 * counts as covered by a later notifying one, and that an uncovered one always gets a
 * trailing notification.
 */
import { expect, test } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { NOTIFY_COALESCE_MS, Notifier } from "../../src/drivers/postgres/connection/notifier.js";

function setup() {
  const clock = new ManualClock(1000);
  const sent: string[] = [];
  const woken: string[] = [];
  const notifier = new Notifier(
    async (pool) => {
      sent.push(pool);
    },
    (pool) => woken.push(pool),
    clock,
  );
  /** Moves time forward, firing the notifier's timers that fall due. */
  const advance = (ms: number) => clock.advance(ms);
  return { notifier, sent, woken, advance };
}

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

test("a quiet commit nobody covers gets one trailing notification; local workers wake at once", () => {
  const { notifier, sent, woken, advance } = setup();
  notifier.notifyInline("a");
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  notifier.committedQuietly("a");
  expect(woken).toEqual(["a", "a"]);
  advance(NOTIFY_COALESCE_MS - 1);
  expect(sent).toEqual([]);
  advance(1);
  expect(sent).toEqual(["a"]);
  expect(notifier.trailingSent).toBe(1);
  // The trailing notification opened a new window.
  expect(notifier.notifyInline("a")).toBeNull();
  advance(NOTIFY_COALESCE_MS * 3);
  expect(sent).toEqual(["a"]);
});

/**
 * A notifying enqueue at 1000, a quiet commit at 1001, and the next window's notifying
 * enqueue started at 1005 (its `started` time), not yet settled.
 */
function quietCommitThenNextWindow() {
  const env = setup();
  const { notifier, advance } = env;
  notifier.committedInline("a", notifier.notifyInline("a")!);
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  advance(NOTIFY_COALESCE_MS - 1);
  const started = notifier.notifyInline("a");
  expect(started).not.toBeNull();
  return { ...env, started: started! };
}

test("a notifying enqueue that starts after a quiet commit and commits covers it: no trailing notification", () => {
  const { notifier, sent, advance, started } = quietCommitThenNextWindow();
  notifier.committedInline("a", started);
  advance(NOTIFY_COALESCE_MS * 3);
  expect(sent).toEqual([]);
  expect(notifier.trailingSent).toBe(0);
});

test("a notifying enqueue that started before the quiet commit does not cover it", () => {
  const { notifier, sent, advance } = setup();
  const early = notifier.notifyInline("a");
  advance(1);
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  // The early statement commits after the quiet one: its NOTIFY may have been delivered
  // before the quiet work was visible, so it proves nothing.
  notifier.committedInline("a", early!);
  advance(NOTIFY_COALESCE_MS);
  expect(sent).toEqual(["a"]);
});

/** As {@link quietCommitThenNextWindow}, at 1007: the quiet commit's window ended at 1006. */
function quietCommitThenInlineInFlight() {
  const env = quietCommitThenNextWindow();
  env.advance(2);
  return env;
}

test("a window's end waits for a notifying enqueue in flight that started after the quiet commit", () => {
  const { notifier, sent, advance, started } = quietCommitThenInlineInFlight();
  // The quiet commit is past its window, but the statement in flight will cover it.
  expect(sent).toEqual([]);
  advance(NOTIFY_COALESCE_MS * 3);
  expect(sent).toEqual([]);
  notifier.committedInline("a", started);
  advance(NOTIFY_COALESCE_MS * 3);
  expect(sent).toEqual([]);
  expect(notifier.trailingSent).toBe(0);
});

test("a notifying enqueue that fails covers nothing: the trailing notification follows at once", () => {
  const { notifier, sent, advance } = quietCommitThenInlineInFlight();
  expect(sent).toEqual([]);
  notifier.failedInline("a");
  // Already overdue: due now, sent on the clock's next turn.
  advance(0);
  expect(sent).toEqual(["a"]);
  expect(notifier.trailingSent).toBe(1);
});

test("close() sends pending trailing notifications at once, then every enqueue notifies", async () => {
  const { notifier, sent, advance } = setup();
  notifier.notifyInline("a");
  expect(notifier.notifyInline("a")).toBeNull();
  notifier.committedQuietly("a");
  await notifier.close();
  expect(sent).toEqual(["a"]);
  advance(NOTIFY_COALESCE_MS * 3);
  expect(sent).toEqual(["a"]);
  expect(notifier.notifyInline("a")).not.toBeNull();
  expect(notifier.notifyInline("a")).not.toBeNull();
});
