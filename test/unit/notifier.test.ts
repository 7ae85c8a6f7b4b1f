/**
 * The PostgreSQL driver's NOTIFY coalescing, with a hand-moved clock: which enqueues
 * notify in their own statement, and that every quiet one is followed by exactly one
 * trailing notification.
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

test("the first enqueue of a window notifies in its statement; the rest of the window is quiet", () => {
  const { notifier, advance } = setup();
  expect(notifier.notifyInline("a")).toBe(true);
  advance(1);
  expect(notifier.notifyInline("a")).toBe(false);
  // Pools are independent.
  expect(notifier.notifyInline("b")).toBe(true);
  advance(NOTIFY_COALESCE_MS);
  expect(notifier.notifyInline("a")).toBe(true);
});

test("quiet commits wake local workers at once and get one trailing notification", async () => {
  const { notifier, sent, woken, advance, nextSend } = setup();
  expect(notifier.notifyInline("a")).toBe(true);
  advance(1);
  expect(notifier.notifyInline("a")).toBe(false);
  expect(notifier.notifyInline("a")).toBe(false);
  const trailing = nextSend();
  notifier.committedQuietly("a");
  notifier.committedQuietly("a");
  expect(woken).toEqual(["a", "a"]);
  expect(await trailing).toBe("a");
  expect(sent).toEqual(["a"]);
  // The trailing notification opened a new window.
  expect(notifier.notifyInline("a")).toBe(false);
  advance(NOTIFY_COALESCE_MS);
  expect(notifier.notifyInline("a")).toBe(true);
});

test("close() sends pending trailing notifications at once, then every enqueue notifies", async () => {
  const { notifier, sent } = setup();
  notifier.notifyInline("a");
  expect(notifier.notifyInline("a")).toBe(false);
  notifier.committedQuietly("a");
  await notifier.close();
  expect(sent).toEqual(["a"]);
  expect(notifier.notifyInline("a")).toBe(true);
  expect(notifier.notifyInline("a")).toBe(true);
});
