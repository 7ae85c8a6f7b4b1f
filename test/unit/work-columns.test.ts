/**
 * The work row's column list and its builders: the values an insert binds follow the
 * list's order, a new row has every column of the list, and a retry copies every column a
 * stored row keeps.
 */
import { expect, test } from "vitest";
import type { NewWork, WorkRow } from "../../src/driver/driver.js";
import {
  newWork,
  newWorkLike,
  newWorkValues,
  ROW_COLUMNS,
  rowValues,
  sharesColumns,
  WORK_COLUMNS,
  type WorkColumnField,
} from "../../src/driver/work-columns.js";

/** A new row with a value of its own in every column of the list. */
function distinct(): NewWork {
  const fields: Record<string, unknown> = {};
  for (const [i, c] of WORK_COLUMNS.entries()) {
    if (c.write === "json") fields[c.field] = { maxAttempts: i, initialBackoffMs: 1, base: 2 };
    else fields[c.field] = c.pgType === "text" ? `${c.field}-value` : 1000 + i;
  }
  return newWork(fields as unknown as NewWork);
}

/** A column's value as an insert writes it. */
function written(w: NewWork, field: WorkColumnField): unknown {
  const c = WORK_COLUMNS.find((x) => x.field === field)!;
  return c.write === "json" ? JSON.stringify(w[field]) : w[field];
}

test("newWorkValues gives each column's value in the list's order, the retry behaviour as JSON", () => {
  const w = distinct();
  expect(newWorkValues(w)).toEqual(WORK_COLUMNS.map((c) => written(w, c.field)));
  expect(rowValues(w)).toEqual(ROW_COLUMNS.map((c) => written(w, c.field)));
});

test("newWork gives every column of the list (and onConflict), with defaults for what it is not given", () => {
  const w = newWork({ id: "i", pool: "p", kind: "action", fnName: "f", args: "{}", runAt: 1, enqueuedAt: 2 });
  expect(Object.keys(w).sort()).toEqual([...WORK_COLUMNS.map((c) => c.field), "onConflict"].sort());
  expect(w).toMatchObject({
    name: null,
    retry: null,
    timeoutMs: null,
    priority: 0,
    key: null,
    meta: null,
    uniqueKey: null,
    onConflict: "keep",
  });
});

test("newWorkLike copies every column a stored row keeps, but its id and times, and takes no unique key", () => {
  const stored = { ...distinct(), state: "finished", attempt: 3 } as unknown as WorkRow;
  const copy = newWorkLike(stored, "new-id", 5000);
  for (const c of ROW_COLUMNS) {
    if (c.field === "id") expect(copy.id).toBe("new-id");
    else if (c.field === "runAt" || c.field === "enqueuedAt") expect(copy[c.field]).toBe(5000);
    else expect(copy[c.field], c.field).toEqual(stored[c.field as keyof WorkRow]);
  }
  expect(copy).toMatchObject({ uniqueKey: null, onConflict: "keep" });
  expect(Object.keys(copy)).not.toContain("state");
});

test("newWork with an id and args gives the fields' row with those instead", () => {
  const w = distinct();
  expect(newWork(w, "other-id", "other-args")).toEqual({ ...w, id: "other-id", args: "other-args" });
});

test("sharesColumns tells rows apart by every column of the list but id and args", () => {
  const a = distinct();
  expect(sharesColumns(a, { ...a, id: "other", args: "other" })).toBe(true);
  for (const c of WORK_COLUMNS) {
    if (c.field === "id" || c.field === "args") continue;
    const b = { ...a, [c.field]: c.write === "json" ? { ...(a[c.field] as object) } : `${String(a[c.field])}-other` };
    expect(sharesColumns(a, b), c.field).toBe(false);
  }
});
