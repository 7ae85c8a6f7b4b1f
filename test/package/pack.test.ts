/**
 * The published package: `npm pack` output installs into a fresh project that imports
 * `workpool`, its stores and its ORM adapters by name, in JavaScript (ES modules, and
 * CommonJS through require() of ES modules where Node has it) and in strict TypeScript.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test } from "vitest";
import { requireBuild } from "../helpers/child.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "workpool-pack-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The subpaths a consumer imports, and one export each must have. */
const ENTRY_POINTS: [specifier: string, exportName: string][] = [
  ["workpool", "Workpool"],
  ["workpool/sqlite", "sqliteStore"],
  ["workpool/postgres", "postgresStore"],
  ["workpool/drizzle", "drizzleTx"],
  ["workpool/kysely", "kyselyTx"],
  ["workpool/knex", "knexTx"],
  ["workpool/prisma", "prismaTx"],
  ["workpool/opentelemetry", "openTelemetry"],
  ["workpool/workflow", "WorkflowManager"],
  ["workpool/admin", "workpoolAdmin"],
  ["workpool/dashboard", "dashboardHandler"],
];

/** package.json `exports`: each subpath's conditions. */
const EXPORTS = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string | Record<string, string>> }
).exports;

/** Whether this Node loads ES modules with require() (20.19+, 22.12+). */
const requireModule = (process.features as { require_module?: boolean }).require_module === true;

/** Packs the package once, unpacks it into a fresh project folder, and returns both. */
let packed: { files: string[]; packageDir: string; app: string } | null = null;
function pack(): { files: string[]; packageDir: string; app: string } {
  if (packed) return packed;
  requireBuild();
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
  const [info] = JSON.parse(out) as [{ filename: string; files: { path: string }[] }];
  const app = join(work, "app");
  mkdirSync(join(app, "node_modules"), { recursive: true });
  // A real folder, not a symlink: Node resolves a package's imports from its real path.
  execFileSync("tar", ["-xzf", join(work, info.filename), "-C", join(app, "node_modules")]);
  renameSync(join(app, "node_modules", "package"), join(app, "node_modules", "workpool"));
  // The peer dependencies, as the consumer would have installed them.
  for (const dep of readdirSync(join(root, "node_modules"))) {
    if (dep !== "workpool" && dep !== "package" && !dep.startsWith("."))
      symlinkSync(join(root, "node_modules", dep), join(app, "node_modules", dep));
  }
  packed = { files: info.files.map((f) => f.path), packageDir: join(app, "node_modules", "workpool"), app };
  return packed;
}

test("every subpath export is listed here and has types, import and default conditions", () => {
  const subpaths = Object.keys(EXPORTS).filter((k) => k !== "./package.json");
  expect(subpaths.map((k) => (k === "." ? "workpool" : `workpool/${k.slice(2)}`)).sort()).toEqual(ENTRY_POINTS.map(([s]) => s).sort());
  for (const subpath of subpaths) {
    const conditions = EXPORTS[subpath] as Record<string, string>;
    // `default` is what require() (and any other condition) falls back to.
    expect(Object.keys(conditions), subpath).toEqual(["types", "import", "default"]);
    expect(conditions.default, subpath).toBe(conditions.import);
  }
});

test("the package ships the TypeScript sources its source maps point to, and no tests", () => {
  const { files, packageDir } = pack();
  const maps = files.filter((f) => f.endsWith(".map"));
  expect(maps.length).toBeGreaterThan(0);
  for (const map of maps) {
    const { sources } = JSON.parse(readFileSync(join(packageDir, map), "utf8")) as { sources: string[] };
    for (const source of sources) expect(files, `${map} -> ${source}`).toContain(normalize(join(dirname(map), source)));
  }
  expect(files).toContain("src/integrations/kysely.ts");
});

test("npm pack produces a package a fresh project can import", () => {
  const { files, app } = pack();
  for (const f of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/drivers/sqlite/index.js",
    "dist/drivers/sqlite/migrations/001_schema.sql",
    "dist/drivers/postgres/index.js",
    "dist/drivers/postgres/migrations/001_schema.sql",
    "dist/admin/index.js",
    "dist/admin/index.d.ts",
    "dist/dashboard/index.js",
    "dist/dashboard/index.d.ts",
    "dist/dashboard/ui/index.html",
    "dist/cli/main.js",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
  ]) {
    expect(files, f).toContain(f);
  }
  expect(files.some((f) => f.startsWith("test/") || f.includes("node_modules"))).toBe(false);
  // Sources ship as .ts only; the schema snapshots are for reading in the repository.
  expect(files.filter((f) => f.startsWith("src/") && !f.endsWith(".ts"))).toEqual([]);
  expect(files.filter((f) => f.endsWith("/schema.sql"))).toEqual([]);
  // Every function file of the PostgreSQL schema, which the migrator applies from dist/.
  const functionFiles = readdirSync(join(root, "src", "drivers", "postgres", "sql", "functions")).filter((f) => f.endsWith(".sql"));
  expect(functionFiles.length).toBeGreaterThan(0);
  for (const f of functionFiles) expect(files, f).toContain(`dist/drivers/postgres/sql/functions/${f}`);
  // The dashboard's browser app ships built (dist/dashboard/ui), not as its browser-only source.
  expect(files.filter((f) => f.startsWith("src/dashboard/ui/"))).toEqual([]);

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
const { workpoolAdmin } = await import("workpool/admin");
console.log((await workpoolAdmin(store).pools()).map((p) => p.name + ":" + p.counts.success).join());
const { dashboardHandler } = await import("workpool/dashboard");
const { createServer } = await import("node:http");
const server = createServer(dashboardHandler({ store }));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = "http://127.0.0.1:" + server.address().port + "/";
const script = (await (await fetch(base)).text()).match(/src="\\.\\/(assets\\/[^"]+\\.js)"/)[1];
console.log("dashboard", (await fetch(base + script)).status, (await (await fetch(base + "api/pools")).json()).pools.length);
server.close();
await store.close();
`,
  );
  const printed = execFileSync(process.execPath, ["main.mjs"], { cwd: app, encoding: "utf8" });
  expect(printed.trim()).toBe("hello world function\ndefault:1\ndashboard 200 1");
  // The package's bin, as npx would find it.
  const pkg = JSON.parse(readFileSync(join(app, "node_modules", "workpool", "package.json"), "utf8")) as { bin: Record<string, string> };
  const bin = join(app, "node_modules", "workpool", pkg.bin.workpool!);
  const stats = execFileSync(process.execPath, [bin, "--db", "app.db", "stats"], { cwd: app, encoding: "utf8" });
  expect(stats).toMatch(/^Pool {3,}default\n/);

  writeFileSync(
    join(app, "entries.mjs"),
    `const entries = ${JSON.stringify(ENTRY_POINTS)};
for (const [specifier, name] of entries) {
  const m = await import(specifier);
  if (typeof m[name] !== "function") throw new Error(specifier + " has no " + name);
}
console.log("ok");
`,
  );
  expect(execFileSync(process.execPath, ["entries.mjs"], { cwd: app, encoding: "utf8" }).trim()).toBe("ok");

  writeFileSync(
    join(app, "main.ts"),
    `import { Workpool, type Status, type WorkId } from "workpool";
import { sqliteStore } from "workpool/sqlite";
import { workpoolAdmin, type PoolSummary } from "workpool/admin";
const pool = new Workpool(sqliteStore({ filename: ":memory:" }));
const add = pool.defineAction("add", (_ctx, args: { a: number; b: number }) => args.a + args.b);
export async function run(): Promise<Status> {
  const id: WorkId = await pool.enqueueAction(add, { a: 1, b: 2 });
  // @ts-expect-error args are checked against the handler's type
  await pool.enqueueAction(add, { a: "1" });
  // @ts-expect-error a plain string is not a WorkId
  await pool.status("01ABC");
  return pool.status(id);
}
export async function pools(): Promise<PoolSummary[]> {
  return workpoolAdmin(sqliteStore({ filename: ":memory:" })).pools();
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
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "."], { cwd: app, encoding: "utf8" });

  // The adapters' types, with the ORMs' own declarations unchecked (skipLibCheck, as most
  // projects set it): some ORMs' declarations do not type-check on their own.
  writeFileSync(
    join(app, "adapters.ts"),
    `import type { Telemetry, TransactionExecutor } from "workpool";
import { drizzleTx } from "workpool/drizzle";
import { kyselyTx } from "workpool/kysely";
import { knexTx } from "workpool/knex";
import { prismaTx } from "workpool/prisma";
import { openTelemetry } from "workpool/opentelemetry";
export const adapters: ((tx: never) => TransactionExecutor)[] = [drizzleTx, kyselyTx, knexTx, prismaTx];
export const telemetry: Telemetry = openTelemetry();
`,
  );
  writeFileSync(
    join(app, "tsconfig.adapters.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        noEmit: true,
        skipLibCheck: true,
      },
      files: ["adapters.ts"],
    }),
  );
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.adapters.json"], { cwd: app, encoding: "utf8" });
});

/** A CommonJS project folder inside the packed app (the parent's node_modules holds the package and its peers). */
function cjsProject(): string {
  const { app } = pack();
  const cjs = join(app, "cjs");
  mkdirSync(cjs, { recursive: true });
  writeFileSync(join(cjs, "package.json"), JSON.stringify({ name: "cjs-app", type: "commonjs", private: true }));
  return cjs;
}

test("a CommonJS project loads every subpath with import(), on every Node.js version", () => {
  const cjs = cjsProject();
  writeFileSync(
    join(cjs, "dynamic.js"),
    `(async () => {
  for (const [specifier, name] of ${JSON.stringify(ENTRY_POINTS)}) {
    if (typeof (await import(specifier))[name] !== "function") throw new Error(specifier + " has no " + name);
  }
  console.log("ok");
})();
`,
  );
  expect(execFileSync(process.execPath, ["dynamic.js"], { cwd: cjs, encoding: "utf8" }).trim()).toBe("ok");
});

test.skipIf(!requireModule)("a CommonJS project loads every subpath with require()", () => {
  const cjs = cjsProject();
  writeFileSync(
    join(cjs, "main.js"),
    `const { Workpool } = require("workpool");
const { sqliteStore } = require("workpool/sqlite");
for (const [specifier, name] of ${JSON.stringify(ENTRY_POINTS)}) {
  if (typeof require(specifier)[name] !== "function") throw new Error(specifier + " has no " + name);
}
(async () => {
  const store = sqliteStore({ filename: ":memory:" });
  const pool = new Workpool(store, { logLevel: "ERROR" });
  const hello = pool.defineAction("hello", (_ctx, args) => "hello " + args.name);
  const id = await pool.enqueueAction(hello, { name: "require" });
  await pool.runOnce();
  console.log((await pool.status(id)).result.returnValue);
  await store.close();
})();
`,
  );
  const printed = execFileSync(process.execPath, ["main.js"], { cwd: cjs, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  expect(printed.trim()).toBe("hello require");
});

test("the packed PostgreSQL store creates a schema from the migrations and function files it ships", () => {
  const { app, files } = pack();
  const functionCount = files.filter((f) => f.startsWith("dist/drivers/postgres/sql/functions/")).length;
  writeFileSync(
    join(app, "pg.mjs"),
    `import { postgresStore } from "workpool/postgres";
const schema = "wp_pack_" + process.pid + "_" + Date.now();
const store = postgresStore({ connectionString: process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test", schema });
try {
  await store.migrate();
  const count = async (table) => (await store.pool.query("SELECT count(*)::int AS n FROM " + schema + "." + table)).rows[0].n;
  console.log(await count("migrations"), await count("functions"));
} finally {
  await store.pool.query("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  await store.close();
}
`,
  );
  // node-postgres takes the default user from $USER, which some shells do not set.
  const env = { ...process.env, PGUSER: process.env.PGUSER ?? process.env.USER ?? userInfo().username };
  const printed = execFileSync(process.execPath, ["pg.mjs"], { cwd: app, encoding: "utf8", env });
  const migrationCount = readdirSync(join(root, "src", "drivers", "postgres", "migrations")).filter((f) => f.endsWith(".sql")).length;
  expect(printed.trim()).toBe(`${migrationCount} ${functionCount}`);
});
