// Runs before `npm run bench` (the prebench script): installs the bench's own
// dependencies from its lockfile the first time, so the root `npm run bench` just works.
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const needed = ["graphile-worker", "pg-boss", "bullmq", "ioredis", "plainjob", "better-sqlite3", "pg", "@dbos-inc/dbos-sdk"];
if (!needed.every((p) => existsSync(new URL(`../node_modules/${p}/package.json`, import.meta.url)))) {
  console.error("installing the bench's dependencies (npm ci in bench/)…");
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: here, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
