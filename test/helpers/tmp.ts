/**
 * Temporary database files for tests: a fresh path per call, removed with its WAL files.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A new empty folder and a database path inside it; `remove()` deletes both. */
export function tempDbPath(prefix = "workpool-test-"): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { path: join(dir, "test.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
