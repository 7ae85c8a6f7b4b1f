/**
 * ClaimKeys: where the PostgreSQL driver's next claim of a pool starts its walk of the
 * pending index. After a claim it is the last work claimed, in claim order (priority,
 * run_at, id); at least every
 * WALK_FROM_HEAD_EVERY_MS (and whenever the clock went back) a claim walks from the head.
 */
import { expect, test } from "vitest";
import { ClaimKeys, WALK_FROM_HEAD_EVERY_MS } from "../../src/drivers/postgres/claim.js";
import type { WorkRow } from "../../src/driver/driver.js";
import { T0 } from "../helpers/common.js";

function row(runAt: number, id: string, priority = 0): WorkRow {
  return { runAt, id, priority } as WorkRow;
}

test("a pool starts from the head, then after the largest (run_at, id) it claimed", () => {
  const keys = new ClaimKeys();
  expect(keys.next("p", T0)).toEqual([null, null, null]);
  keys.record("p", [row(T0, "0B"), row(T0 + 1, "0A"), row(T0, "0C")], T0);
  expect(keys.next("p", T0 + 1)).toEqual([0, T0 + 1, "0A"]);
  // A later claim that took only older work does not move the key back.
  keys.record("p", [row(T0 - 5, "0Z")], T0 + 1);
  expect(keys.next("p", T0 + 2)).toEqual([0, T0 + 1, "0A"]);
  // Same run_at: the larger id wins.
  keys.record("p", [row(T0 + 1, "0B")], T0 + 2);
  expect(keys.next("p", T0 + 3)).toEqual([0, T0 + 1, "0B"]);
  // An empty claim changes nothing; other pools have their own key.
  keys.record("p", [], T0 + 3);
  expect(keys.next("p", T0 + 3)).toEqual([0, T0 + 1, "0B"]);
  expect(keys.next("q", T0 + 3)).toEqual([null, null, null]);
  // A higher priority comes later in claim order, whatever its run_at; a lower one does not move the key.
  keys.record("p", [row(T0 - 100, "00", 2)], T0 + 3);
  expect(keys.next("p", T0 + 4)).toEqual([2, T0 - 100, "00"]);
  keys.record("p", [row(T0 + 50, "0Z", 1)], T0 + 4);
  expect(keys.next("p", T0 + 5)).toEqual([2, T0 - 100, "00"]);
});

test("at least every WALK_FROM_HEAD_EVERY_MS, and after the clock went back, a claim walks from the head", () => {
  const keys = new ClaimKeys();
  keys.record("p", [row(T0, "0A")], T0);
  expect(keys.next("p", T0 + WALK_FROM_HEAD_EVERY_MS - 1)).toEqual([0, T0, "0A"]);
  expect(keys.next("p", T0 + WALK_FROM_HEAD_EVERY_MS)).toEqual([null, null, null]);
  // The interval restarts at that walk.
  expect(keys.next("p", T0 + WALK_FROM_HEAD_EVERY_MS + 1)).toEqual([0, T0, "0A"]);
  expect(keys.next("p", T0 + 2 * WALK_FROM_HEAD_EVERY_MS)).toEqual([null, null, null]);
  expect(keys.next("p", T0 - 1)).toEqual([null, null, null]);
  expect(keys.next("p", T0)).toEqual([0, T0, "0A"]);
});
