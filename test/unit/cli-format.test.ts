/**
 * The CLI's formatting: aligned tables (colour codes take no room), durations and
 * relative times, and the times `--before` accepts.
 */
import { expect, test } from "vitest";
import { CliError } from "../../src/cli/exit-codes.js";
import { ago, block, duration, parseBefore, parseCount, table } from "../../src/cli/format.js";
import { colors } from "../../src/cli/terminal-text.js";

test("tables align columns on visible width, three spaces apart, headers upper-cased", () => {
  const red = `\u001b[31mfailed\u001b[39m`;
  expect(
    table(
      ["name", "state", "n"],
      [
        ["a", colors(true).red("failed"), "1"],
        ["longer", "ok", "22"],
      ],
    ).text,
  ).toBe(["NAME     STATE    N", `a        ${red}   1`, "longer   ok       22"].join("\n"));
  // A colour code inside a cell's own text is not a style: it is escaped, and takes the room it is shown in.
  expect(table(["state"], [[red]]).text).toBe(["STATE", "\\x1b[31mfailed\\x1b[39m"].join("\n"));
  expect(
    block([
      ["Pool", "mail"],
      ["Last minute", "3"],
    ]).text,
  ).toBe("Pool          mail\nLast minute   3");
});

test("durations and relative times", () => {
  expect(duration(850)).toBe("850 ms");
  expect(duration(12_400)).toBe("12 s");
  expect(duration(180_000)).toBe("3 min");
  expect(duration(5 * 3_600_000)).toBe("5 h");
  expect(duration(2 * 86_400_000)).toBe("2 d");
  const now = 1_900_000_000_000;
  expect(ago(now - 180_000, now)).toBe("3 min ago");
  expect(ago(now + 20_000, now)).toBe("in 20 s");
  expect(ago(now - 400, now)).toBe("now");
  expect(ago(null, now)).toBe("-");
});

test("--before takes an age, a date or epoch ms; anything else is a usage error", () => {
  const now = Date.UTC(2030, 0, 10);
  expect(parseBefore("--before", "7d", now)).toBe(now - 7 * 86_400_000);
  expect(parseBefore("--before", "12h", now)).toBe(now - 12 * 3_600_000);
  expect(parseBefore("--before", "30m", now)).toBe(now - 30 * 60_000);
  expect(parseBefore("--before", "90s", now)).toBe(now - 90_000);
  expect(parseBefore("--before", "2w", now)).toBe(now - 14 * 86_400_000);
  expect(parseBefore("--before", "2030-01-01", now)).toBe(Date.UTC(2030, 0, 1));
  expect(parseBefore("--before", "2030-01-01T12:00:00Z", now)).toBe(Date.UTC(2030, 0, 1, 12));
  expect(parseBefore("--before", "1893456000000", now)).toBe(1_893_456_000_000);
  for (const bad of ["soon", "7", "-1d", "7 days", ""]) {
    expect(() => parseBefore("--before", bad, now)).toThrow(CliError);
  }
  expect(parseCount("--limit", "50", 1, 500)).toBe(50);
  for (const bad of ["0", "501", "1.5", "x", "-3"])
    expect(() => parseCount("--limit", bad, 1, 500)).toThrow(/--limit: expected a whole number/);
});
