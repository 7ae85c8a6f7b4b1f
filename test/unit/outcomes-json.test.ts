/**
 * The JSON object of outcomes the PostgreSQL driver sends to complete(), written out by
 * hand for speed, must be exactly what JSON.stringify makes of the same object.
 */
import { expect, test } from "vitest";
import { outcomesJson } from "../../src/drivers/postgres/complete.js";
import type { CompletionWrite } from "../../src/driver/driver.js";

function reference(writes: CompletionWrite[]): string {
  const o: Record<string, unknown> = {};
  for (const w of writes) {
    o[w.id] = w.attemptEntry
      ? [w.attempt, w.status, w.result, w.runAt, JSON.parse(w.attemptEntry)]
      : [w.attempt, w.status, w.result, w.runAt];
  }
  return JSON.stringify(o);
}

test("outcomesJson equals JSON.stringify of the outcome object, attempt entries and escapes included", () => {
  const tricky = ['"quoted"', "back\\slash", "line\nbreak", "tab\t", "\u2028\u2029", "emoji 😀", "nul \u0000", "</script>"];
  const writes: CompletionWrite[] = tricky.map((text, i) => ({
    id: `01HZX${i}${text.slice(0, 2)}`,
    attempt: i + 1,
    status: i % 4 === 0 ? "retrying" : i % 4 === 1 ? "success" : i % 4 === 2 ? "failed" : "canceled",
    result: i % 4 === 0 ? null : JSON.stringify({ kind: "success", returnValue: text }),
    runAt: i % 4 === 0 ? 1_893_456_000_000 + i : null,
    attemptEntry:
      i % 2 === 0 ? JSON.stringify({ attempt: i + 1, outcome: "retrying", error: { message: text, stack: `at ${text}` } }) : null,
  }));
  const json = outcomesJson(writes);
  expect(json).toBe(reference(writes));
  expect(Object.keys(JSON.parse(json) as object)).toHaveLength(writes.length);
  expect(outcomesJson([])).toBe("{}");
});
