/**
 * The schema's functions: one file each in ./sql/functions/ (`claim.sql` defines claim()),
 * applied by the migrator when its content changed, and recorded by name, hash and the
 * workpool version that applied it in the schema's `functions` table.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One function file. */
export interface FunctionFile {
  /** The file's name without `.sql`: the name of the function it defines. */
  name: string;
  sql: string;
  /** SHA-256 of the file's text (line ends normalised), hex. */
  hash: string;
}

/** A function file as a schema's `functions` table records it. */
export interface AppliedFunction {
  name: string;
  hash: string;
  /** The workpool version that applied it. */
  version: string;
}

/** Loads every `name.sql` in `dir` (a folder URL), sorted by name. */
export function loadFunctionFiles(dir: URL): FunctionFile[] {
  return readdirSync(fileURLToPath(dir))
    .filter((f) => /^[a-z_][a-z0-9_]*\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(fileURLToPath(new URL(file, dir)), "utf8");
      // A checkout with CRLF line ends must not count as another body.
      const hash = createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
      return { name: file.replace(/\.sql$/, ""), sql, hash };
    });
}

/**
 * The files to apply: those the schema has not recorded, or recorded with another hash,
 * unless a newer workpool version applied that other body. Under the rolling-deploy rule
 * (docs/architecture.md) a body changed in place keeps its meaning, so a process of the
 * previous release that starts mid-rollout leaves the newer body alone instead of putting
 * its own back.
 */
export function functionsToApply(files: readonly FunctionFile[], applied: readonly AppliedFunction[], version: string): FunctionFile[] {
  const recorded = new Map(applied.map((a) => [a.name, a]));
  return files.filter((f) => {
    const a = recorded.get(f.name);
    return a === undefined || (a.hash !== f.hash && compareVersions(a.version, version) <= 0);
  });
}

/**
 * Orders two semantic versions (`1.2.3`, `1.2.3-beta.1`): negative, zero or positive as
 * `a` is older, the same or newer. A pre-release is older than its release.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): { core: number[]; pre: string[] } => {
    const [core = "", pre] = v.split("+")[0]!.split(/-(.*)/s);
    return { core: core.split(".").map((n) => Number.parseInt(n, 10) || 0), pre: pre ? pre.split(".") : [] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.core[i] ?? 0) - (y.core[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre.length === 0 || y.pre.length === 0) return Math.sign(y.pre.length - x.pre.length);
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i]!;
    const q = y.pre[i]!;
    if (p === q) continue;
    const numeric = /^\d+$/.test(p) && /^\d+$/.test(q);
    if (numeric) return Math.sign(Number(p) - Number(q));
    // Numeric identifiers sort before alphanumeric ones (semver 11.4.3).
    if (/^\d+$/.test(p)) return -1;
    if (/^\d+$/.test(q)) return 1;
    return p < q ? -1 : 1;
  }
  return Math.sign(x.pre.length - y.pre.length);
}

/** This package's version (package.json is three folders up, from src/ and from dist/). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL("../../../package.json", import.meta.url)), "utf8")) as { version: string };
  return pkg.version;
}
