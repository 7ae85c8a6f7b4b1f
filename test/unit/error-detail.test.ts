/**
 * What an attempt's record keeps of a thrown value beyond its message: an Error's name
 * and its stack without workpool's own frames, cut to a bound; never a failure to read.
 */
import { expect, test } from "vitest";
import { errorDetail, MAX_STACK_TEXT } from "../../src/error-text.js";

test("an Error gives its name and stack; other thrown values give nothing", () => {
  const e = new TypeError("boom");
  const detail = errorDetail(e);
  expect(detail.name).toBe("TypeError");
  expect(detail.stack).toMatch(/^TypeError: boom\n {4}at /);
  expect(errorDetail("text")).toEqual({});
  expect(errorDetail({ message: "object" })).toEqual({});
  expect(errorDetail(null)).toEqual({});
  expect(errorDetail(undefined)).toEqual({});
});

test("frames of workpool's internals and of Node's are left out of the stack", () => {
  const e = new Error("x");
  const internals = new URL("../../src/internal/executor.ts", import.meta.url).href;
  e.stack = [
    "Error: x",
    "    at handler (file:///app/jobs.js:3:9)",
    `    at runAction (${internals}:47:50)`,
    "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
    "    at more (file:///app/jobs.js:9:1)",
  ].join("\n");
  expect(errorDetail(e).stack).toBe("Error: x\n    at handler (file:///app/jobs.js:3:9)\n    at more (file:///app/jobs.js:9:1)");
});

test("a long stack is cut, and getters that throw or return non-strings are left out", () => {
  const long = new Error("long");
  long.stack = `Error: long\n${"    at f (file:///app/x.js:1:1)\n".repeat(2000)}`;
  const cut = errorDetail(long).stack!;
  expect(cut.length).toBeLessThanOrEqual(MAX_STACK_TEXT + 10);
  expect(cut.endsWith("… (cut)")).toBe(true);

  const hostile = new Error("hostile");
  Object.defineProperty(hostile, "stack", {
    get() {
      throw new Error("no stack for you");
    },
  });
  Object.defineProperty(hostile, "name", { value: 42 });
  expect(errorDetail(hostile)).toEqual({});

  const nul = new RangeError("nul");
  nul.stack = "RangeError: nul\u0000\n    at f (file:///app/x.js:1:1)";
  expect(errorDetail(nul).stack).toBe("RangeError: nul\n    at f (file:///app/x.js:1:1)");
  // A proxy whose prototype cannot be read is not an Error, and does not throw.
  const proxy = new Proxy(
    {},
    {
      getPrototypeOf() {
        throw new Error("trap");
      },
    },
  );
  expect(errorDetail(proxy)).toEqual({});
});
