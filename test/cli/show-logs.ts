/**
 * `workpool show <id>` prints the latest attempt's progress, and with `--logs` each
 * attempt's log lines (the cut said), every control character in them escaped.
 */
import { describe, expect, test } from "vitest";
import { ManualClock, Workpool, type Store } from "../../src/index.js";
import { quietLogger } from "../helpers/common.js";
import { runCli } from "./run.js";
import { expectExit, useStores, type CliTarget } from "./target.js";
import { ESCAPED, HOSTILE } from "./terminal-safety.js";

/** Any control character but the line feed: what a terminal would obey. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

export function defineShowLogsTests(target: CliTarget): void {
  describe(`workpool CLI: ${target.name}: show --logs`, () => {
    const fresh = useStores(target);

    test("show prints the progress; --logs prints each attempt's lines escaped, with the dropped lines counted", async () => {
      const s = await fresh();
      const at = Date.UTC(2030, 0, 1, 12, 0, 0);
      const pool = new Workpool(s.store as Store<unknown>, { name: "jobs", logger: quietLogger, clock: new ManualClock(at) });
      const job = pool.defineAction("job", (c) => {
        if (c.attempt === 1) {
          for (let i = 0; i < 203; i++) c.log.info(`line ${i}`);
          throw new Error("first fails");
        }
        c.log.warn(`hostile ${HOSTILE}`, { note: HOSTILE });
        c.reportProgress({ phase: `p${HOSTILE}`, done: 2 });
        return null;
      });
      const plain = pool.defineAction("plain", (c) => c.reportProgress(42.5));
      const id = await pool.enqueueAction(job, {}, { retry: { maxAttempts: 2, initialBackoffMs: 0, base: 1 } });
      const quiet = await pool.enqueueAction(plain, {});
      await pool.runOnce();
      await pool.runOnce();

      const show = await runCli([...s.args, "show", quiet]);
      expectExit(show, 0);
      expect(show.stdout).toMatch(/\nProgress {3,}42\.5%\n/);
      expect(show.stdout).not.toContain("logs");
      const none = await runCli([...s.args, "show", quiet, "--logs"]);
      expect(none.stdout).toMatch(/\n\nno log lines\n$/);

      const logs = await runCli([...s.args, "show", id, "--logs"]);
      expectExit(logs, 0);
      expect(CONTROL.exec(logs.stdout), logs.stdout).toBeNull();
      expect(logs.stdout).toContain(
        `\nProgress     {"phase":"p\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nID   FORGED   row\\u009b31m","done":2}\n`,
      );
      expect(logs.stdout).toContain(`\n\nattempt 1 logs\n(3 earlier lines dropped)\n2030-01-01T12:00:00.000Z info  line 3\n`);
      expect(logs.stdout).toContain(`\n2030-01-01T12:00:00.000Z info  line 202\n\nattempt 2 logs\n`);
      expect(logs.stdout).toContain(
        `\n2030-01-01T12:00:00.000Z warn  hostile ${ESCAPED} {"note":"\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nID   FORGED   row\\u009b31m"}\n`,
      );
      const json = JSON.parse((await runCli([...s.args, "show", id, "--json"])).stdout) as {
        attemptOutput: { attempt: number; logs: { message: string }[]; droppedLines: number }[];
      };
      expect(json.attemptOutput.map((o) => [o.attempt, o.logs.length, o.droppedLines])).toEqual([
        [1, 200, 3],
        [2, 1, 0],
      ]);
      expect(json.attemptOutput[1]!.logs[0]!.message).toBe(`hostile ${HOSTILE}`);
    });
  });
}
