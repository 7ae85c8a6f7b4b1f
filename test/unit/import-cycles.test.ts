/**
 * No import cycle inside src/: the relative imports of src/**\/*.ts (type-only imports
 * and re-exports included: a cycle of types ties the files together as much, and becomes
 * a cycle at run time the day one of its imports is a value) form no strongly connected
 * component of more than one file, apart from the known ones listed below.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, test } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/**
 * Cycles that exist today and are to be removed, each as its files (relative to src/,
 * sorted). None may grow, and one that is gone must leave this list.
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The files of src/ that `file` imports (relative specifiers, `./x.js` meaning `./x.ts`). */
function importsOf(file: string, files: ReadonlySet<string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => {
      const path = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      return files.has(path) ? path : join(path.replace(/\.ts$/, ""), "index.ts");
    })
    .filter((path) => files.has(path));
}

/** The strongly connected components of more than one file (Tarjan), each sorted, relative to src/. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    const selfImport = graph.get(v)?.includes(v) ?? false;
    if (component.length > 1 || selfImport) found.push(component.map((f) => relative(SRC, f).split("\\").join("/")).sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("src/ has no import cycle but the known ones, and each known one still exists", () => {
  const files = new Set(sourceFiles(SRC));
  const graph = new Map([...files].map((f) => [f, importsOf(f, files)] as const));
  const key = (c: readonly string[]) => c.join(" ↔ ");
  const found = cycles(graph).map(key).sort();
  const known = KNOWN_CYCLES.map(key).sort();
  expect(
    found.filter((c) => !known.includes(c)),
    "import cycles in src/",
  ).toEqual([]);
  expect(
    known.filter((c) => !found.includes(c)),
    "known cycles that are gone: remove them from KNOWN_CYCLES",
  ).toEqual([]);
});

test("the cycle finder sees a cycle through a type-only import and a re-export", () => {
  const a = join(SRC, "a.ts");
  const b = join(SRC, "b.ts");
  const c = join(SRC, "c.ts");
  const graph = new Map([
    [a, [b]],
    [b, [c]],
    [c, [a]],
  ]);
  expect(cycles(graph)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  const text = 'import type { X } from "./b.js";\nexport { Y } from "./c.js";\nimport {\n  Z,\n} from "../d.js";\nimport pg from "pg";';
  expect(ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName)).toEqual(["./b.js", "./c.js", "../d.js", "pg"]);
});
