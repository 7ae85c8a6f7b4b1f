/**
 * The PostgreSQL insert statements: one row, a batch whose rows share every column but
 * id and args (what one enqueue call makes: sent as two arrays and scalars), and any
 * other batch (one array per column). Each form must store every column as given.
 */
import { expect, test } from "vitest";
import type { NewWork, WorkRow } from "../../src/driver/driver.js";
import { DRIVER } from "../../src/driver/driver.js";
import { newWork as buildNewWork, ROW_COLUMNS } from "../../src/driver/work-columns.js";
import { insertParams } from "../../src/drivers/postgres/insert.js";
import { T0 } from "../helpers/common.js";
import { useCleanups, useSharedServer } from "./helpers.js";
import { openTestStore } from "../helpers/stores.js";
import { newWork } from "../helpers/new-work.js";

useSharedServer();
const cleanups = useCleanups();

const retry = { maxAttempts: 3, initialBackoffMs: 100, base: 2 };

function row(overrides: Partial<NewWork> = {}): NewWork {
  return newWork("ins", T0, {
    name: "nightly",
    args: '{"n":1}',
    runAt: T0 + 500,
    retry,
    timeoutMs: 2000,
    onComplete: "done",
    context: '{"c":"x"}',
    priority: 3,
    key: "user-1",
    ...overrides,
  });
}

/** The stored columns of `rows`, read back through the driver, in the order given. */
async function stored(rows: NewWork[]): Promise<NewWork[]> {
  const { store } = await openTestStore("postgres", { connections: "own", migrate: false, cleanups });
  const driver = store[DRIVER];
  await driver.migrate();
  await driver.insertWork(rows);
  const read = await driver.readWork(
    "ins",
    rows.map((r) => r.id),
  );
  const byId = new Map(read.map((r) => [r.id, r]));
  return rows.map((r) => {
    const w = byId.get(r.id)!;
    // The stored row as a new row: every column of the list, no unique key.
    const fields = Object.fromEntries(ROW_COLUMNS.map((c) => [c.field, w[c.field as keyof WorkRow]]));
    return buildNewWork(fields as unknown as NewWork);
  });
}

test("a batch that differs only in id and args takes the shared form and stores every column", async () => {
  const rows = [row({ args: '{"n":1}' }), row({ args: '{"n":2}' }), row({ args: '{"n":3}' })];
  expect(insertParams(rows).form).toBe("shared");
  expect(await stored(rows)).toEqual(rows);
});

test("a batch whose rows differ in other columns takes the per-column form and stores each row as given", async () => {
  const rows = [
    row(),
    row({ kind: "mutation", fnName: "other", name: null, retry: null, timeoutMs: null, onComplete: null, context: null }),
    row({ runAt: T0 + 9000, enqueuedAt: T0 + 1 }),
    row({ priority: -1000, key: null }),
    // Equal retry settings in another object: compared by identity, so not shared.
    row({ retry: { ...retry } }),
  ];
  expect(insertParams(rows).form).toBe("rows");
  expect(insertParams([rows[0]!, rows[3]!]).form).toBe("rows");
  expect(await stored(rows)).toEqual(rows);
});

test("a single row takes the one-row form", async () => {
  const rows = [row({ name: null })];
  expect(insertParams(rows).form).toBe("one");
  expect(await stored(rows)).toEqual(rows);
});
