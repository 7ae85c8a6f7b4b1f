import { describe, expect, test } from "vitest";
import { decodeJson, encodeJson, MAX_PAYLOAD_BYTES } from "../../src/json.js";

describe("encodeJson", () => {
  test("accepts plain JSON and round-trips it", () => {
    const v = { a: [1, "two", true, null, { b: -0.5 }], c: Object.assign(Object.create(null), { d: 1 }) };
    expect(decodeJson(encodeJson("args", v))).toEqual(JSON.parse(JSON.stringify(v)));
  });
  test("drops undefined object properties like JSON, as optional fields", () => {
    expect(encodeJson("args", { a: 1, b: undefined })).toBe('{"a":1}');
  });
  test.each([
    [Symbol("s"), /args: a symbol is not JSON/],
    [{ s: new Set([1]) }, /args.s: a Set is not plain JSON/],
    [{ deep: { er: Infinity } }, /args.deep.er: Infinity is not JSON/],
    [new (class Point {})(), /args: a Point is not plain JSON/],
  ])("rejects %s", (value, message) => {
    expect(() => encodeJson("args", value)).toThrow(message);
  });
  test("rejects symbol keys, sparse arrays and absurd nesting", () => {
    expect(() => encodeJson("args", { [Symbol("k")]: 1 })).toThrow(/symbol keys/);
    // eslint-disable-next-line no-sparse-arrays
    expect(() => encodeJson("args", [1, , 3])).toThrow(/args\[1\]: undefined \(or a hole\)/);
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => encodeJson("args", deep)).toThrow(/nested deeper than 64/);
  });
  test("the error names the exact path of the bad value, after valid siblings", () => {
    const value = { ok: [1, { fine: true }], list: [{ name: "a" }, { name: "b" }, { name: "c", when: new Date(0) }] };
    expect(() => encodeJson("argsArray[3]", value)).toThrow(/^workpool: argsArray\[3\]\.list\[2\]\.when: a Date is not plain JSON/);
  });
  test("a shared (non-cyclic) object is fine", () => {
    const shared = { x: 1 };
    expect(encodeJson("args", { a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
  test("the size limit counts UTF-8 bytes", () => {
    const ok = "é".repeat((MAX_PAYLOAD_BYTES - 2) / 2);
    expect(() => encodeJson("args", ok)).not.toThrow();
    expect(() => encodeJson("args", ok + "é")).toThrow(/bytes as JSON; the limit is 1048576/);
  });
});
