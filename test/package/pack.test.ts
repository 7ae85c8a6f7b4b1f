/**
 * The published package: `npm pack` output installs into a fresh project that imports
 * `workpool` and `workpool/sqlite` by name, in JavaScript and in strict TypeScript.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import { requireBuild } from "../helpers/child.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "workpool-pack-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("npm pack produces a package a fresh project can import", () => {
  requireBuild();
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
  const [info] = JSON.parse(out) as [{ filename: string; files: { path: string }[] }];
  const files = info.files.map((f) => f.path);
  for (const f of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/drivers/sqlite/index.js",
    "dist/drivers/sqlite/migrations/001_baseline.sql",
    "dist/drivers/postgres/index.js",
    "dist/drivers/postgres/migrations/001_baseline.sql",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
  ]) {
    expect(files, f).toContain(f);
  }
  expect(files.some((f) => f.startsWith("src/") || f.startsWith("test/") || f.includes("node_modules"))).toBe(false);
  // The schema snapshots are for reading in the repository; only migrations ship.
  expect(files.filter((f) => f.endsWith("schema.sql"))).toEqual([]);

  const app = join(work, "app");
  mkdirSync(join(app, "node_modules"), { recursive: true });
  // A real folder, not a symlink: Node resolves a package's imports from its real path.
  execFileSync("tar", ["-xzf", join(work, info.filename), "-C", join(app, "node_modules")]);
  renameSync(join(app, "node_modules", "package"), join(app, "node_modules", "workpool"));
  // The store's peer dependency, as the consumer would have installed it.
  for (const dep of readdirSync(join(root, "node_modules"))) {
    if (dep !== "workpool" && dep !== "package" && !dep.startsWith("."))
      symlinkSync(join(root, "node_modules", dep), join(app, "node_modules", dep));
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", type: "module", private: true }));
  writeFileSync(
    join(app, "main.mjs"),
    `import { Workpool, NonRetryableError } from "workpool";
import { sqliteStore } from "workpool/sqlite";
import { postgresStore } from "workpool/postgres";
if (typeof postgresStore !== "function") throw new Error("workpool/postgres has no postgresStore");
const store = sqliteStore({ filename: "app.db" });
const pool = new Workpool(store, { logLevel: "ERROR" });
const hello = pool.defineAction("hello", (_ctx, args) => "hello " + args.name);
const id = await pool.enqueueAction(hello, { name: "world" });
await pool.runOnce();
const s = await pool.status(id);
console.log(s.result.returnValue, typeof NonRetryableError);
await store.close();
`,
  );
  const printed = execFileSync(process.execPath, ["main.mjs"], { cwd: app, encoding: "utf8" });
  expect(printed.trim()).toBe("hello world function");

  writeFileSync(
    join(app, "main.ts"),
    `import { Workpool, type Status } from "workpool";
import { sqliteStore } from "workpool/sqlite";
const pool = new Workpool(sqliteStore({ filename: ":memory:" }));
const add = pool.defineAction("add", (_ctx, args: { a: number; b: number }) => args.a + args.b);
export async function run(): Promise<Status> {
  const id: string = await pool.enqueueAction(add, { a: 1, b: 2 });
  // @ts-expect-error args are checked against the handler's type
  await pool.enqueueAction(add, { a: "1" });
  return pool.status(id);
}
`,
  );
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        noEmit: true,
        skipLibCheck: false,
        types: ["node"],
      },
      files: ["main.ts"],
    }),
  );
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: app, encoding: "utf8" });
});
