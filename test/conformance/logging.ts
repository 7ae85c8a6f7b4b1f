/**
 * Logging: records reach the `logger` option pino's way, `logger.info(fields, message)`,
 * with the event's fields or the pool and the error; expected outcomes write nothing at
 * the default level; `messageFirstLogger` adapts winston's `(message, fields)`.
 */
import { describe, expect, test } from "vitest";
import { messageFirstLogger, type CompletedEvent, type LogFields } from "../../src/index.js";
import type { StoreHarness } from "./harness.js";
import { useTestContext } from "./context.js";

export function defineLoggingTests<Tx>(harness: StoreHarness<Tx>): void {
  describe("logging", () => {
    const ctx = useTestContext(harness);

    test("events are written as (fields, message) objects, never JSON text", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "mail", logLevel: "INFO" });
      const heard: CompletedEvent[] = [];
      pool.on("completed", (e) => heard.push(e));
      const a = pool.defineAction("a", () => 1);
      const id = await pool.enqueueAction(a, {});
      await pool.runOnce();
      const completed = t.logger.lines.find((l) => l.fields.event === "completed")!;
      expect(completed.level).toBe("info");
      expect(completed.message).toBe("workpool: completed");
      expect(completed.fields).toMatchObject({ event: "completed", pool: "mail", workId: id, fnName: "a", status: "success", attempts: 1 });
      expect(t.logger.lines.map((l) => typeof l.fields)).toEqual(t.logger.lines.map(() => "object"));
      // The logger gets a copy: adding fields to it leaves the listeners' event as it was.
      completed.fields.extra = true;
      expect(heard[0]).not.toHaveProperty("extra");
    });

    test("failures of the pool's own machinery carry the pool and the Error as `err`", async () => {
      const t = await ctx();
      const pool = t.pool({ name: "mail" });
      const done = pool.defineOnComplete("done", () => {
        throw new Error("db is read-only");
      });
      const a = pool.defineAction("a", () => 1);
      await pool.enqueueAction(a, {}, { onComplete: done });
      await pool.runOnce();
      const [record] = t.logger.lines.filter((l) => l.message.includes('onComplete "done"'));
      expect(record!.level).toBe("warn");
      expect(record!.fields.pool).toBe("mail");
      const boom = new Error("listener bug");
      pool.on("enqueued", () => {
        throw boom;
      });
      await pool.enqueueAction(a, {});
      const [threw] = t.logger.lines.filter((l) => l.message.includes("listener threw"));
      expect(threw).toMatchObject({ level: "error", fields: { pool: "mail", err: boom } });
    });

    test("at the default level, a failure that an onComplete receives writes nothing; one without writes a warning", async () => {
      const t = await ctx();
      const pool = t.pool({ logLevel: "REPORT" });
      const done = pool.defineOnComplete("done", () => undefined);
      const bad = pool.defineAction("bad", () => {
        throw new Error("unknown currency");
      });
      await pool.enqueueAction(bad, {}, { onComplete: done });
      await pool.runOnce();
      await pool.runOnce();
      expect(t.logger.lines).toEqual([]);
      const id = await pool.enqueueAction(bad, {});
      await pool.runOnce();
      expect(t.logger.lines).toHaveLength(1);
      expect(t.logger.lines[0]).toMatchObject({
        level: "warn",
        message: "workpool: completed",
        fields: { event: "completed", workId: id, status: "failed", error: "unknown currency" },
      });
    });

    test("messageFirstLogger hands a winston-style logger (message, fields)", async () => {
      const t = await ctx();
      const calls: [string, string, LogFields][] = [];
      const winstonLike = {
        debug: (m: string, f: LogFields) => calls.push(["debug", m, f]),
        info: (m: string, f: LogFields) => calls.push(["info", m, f]),
        warn: (m: string, f: LogFields) => calls.push(["warn", m, f]),
        error: (m: string, f: LogFields) => calls.push(["error", m, f]),
      };
      const pool = t.pool({ logger: messageFirstLogger(winstonLike), logLevel: "INFO" });
      const a = pool.defineAction("a", () => 1);
      const id = await pool.enqueueAction(a, {});
      await pool.runOnce();
      expect(calls.map(([level, message, fields]) => [level, message, fields.event, fields.workId])).toEqual([
        ["info", "workpool: enqueued", "enqueued", id],
        ["info", "workpool: started", "started", id],
        ["info", "workpool: completed", "completed", id],
      ]);
    });
  });
}
