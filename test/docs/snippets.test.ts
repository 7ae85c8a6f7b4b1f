/**
 * The docs cannot drift from the code: `npm run docs:check` (in `npm test`) type-checks
 * every ```ts block of README.md and docs/*.md, and every export of every entry point is
 * named in docs/api.md. These tests check the checker on blocks made to fail, and the
 * export list against the code.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, test } from "vitest";
import { checkSnippets, extractSnippets } from "../../scripts/check-doc-snippets.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "workpool-doc-snippets-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The subpaths of package.json `exports` and the source file each one's types come from. */
function entryPoints(): { specifier: string; source: string }[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    const types = (target as { types?: string }).types;
    if (!types) return [];
    const specifier = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    return [{ specifier, source: join(root, types.replace("./dist/", "src/").replace(/\.d\.ts$/, ".ts")) }];
  });
}

const FIXTURE = `# A page

<!-- snippet-preamble: import { Workpool } from "workpool"; declare const pool: Workpool; -->
\`\`\`ts
const name: string = pool.name;
const wrong: number = pool.name;
\`\`\`

Two blocks may declare the same names: each is a module of its own.

\`\`\`ts
const name = 1;
export const value: number = name;
\`\`\`

<!-- snippet-preamble:
import { Workpool } from "workpool";
const broken: number = "text";
-->
\`\`\`ts
console.log(Workpool.name);
\`\`\`

  - In a list:

    \`\`\`ts
    import { missingExport } from "workpool";
    \`\`\`

<!-- snippet-nocheck: pseudo-code of the fixture -->
\`\`\`ts
this is not TypeScript
\`\`\`

\`\`\`sh
npm test
\`\`\`
`;

describe("the snippet checker", () => {
  test("reports each error at the Markdown file and line of the code, or of its preamble", () => {
    const file = join(work, "page.md");
    writeFileSync(file, FIXTURE);
    const snippets = extractSnippets(file, FIXTURE);
    expect(snippets.map((s) => [s.line, s.check])).toEqual([
      [5, true],
      [12, true],
      [21, true],
      [27, true],
      [32, false],
    ]);
    const errors = checkSnippets(snippets).map((e) => `${e.file}:${e.line}: ${e.message.split("\n")[0]}`);
    const at = relative(root, file);
    expect(errors).toEqual([
      `${at}:6: TS2322: Type 'string' is not assignable to type 'number'.`,
      `${at}:18: in the snippet-preamble: TS2322: Type 'string' is not assignable to type 'number'.`,
      `${at}:27: TS2305: Module '"workpool"' has no exported member 'missingExport'.`,
    ]);
  });

  test("resolves every entry point of package.json exports to the package's sources", () => {
    const file = join(work, "imports.md");
    const text = entryPoints()
      .map(({ specifier }, i) => `\`\`\`ts\nimport * as m${i} from "${specifier}";\nconsole.log(Object.keys(m${i}));\n\`\`\`\n`)
      .join("\n");
    writeFileSync(file, text);
    expect(checkSnippets(extractSnippets(file, text))).toEqual([]);
  });

  test("refuses a nocheck without a reason and flags after ts", () => {
    expect(() => extractSnippets("a.md", "<!-- snippet-nocheck: -->\n```ts\nx\n```\n")).toThrow("a.md:1: snippet-nocheck needs a reason");
    expect(() => extractSnippets("a.md", "text\n\n```ts nocheck\nx\n```\n")).toThrow("a.md:3: a ts block takes no flags");
  });
});

test("every export of every entry point is named in docs/api.md", () => {
  const entries = entryPoints();
  const program = ts.createProgram(
    entries.map((e) => e.source),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true },
  );
  const checker = program.getTypeChecker();
  // The page's prose and tables, without its code blocks: names written as code there
  // (`name`, `name(…)`, `Name<T>`) are the ones it documents.
  const api = readFileSync(join(root, "docs/api.md"), "utf8").replace(/^\s*```[\s\S]*?^\s*```/gm, "");
  const named = new Set([...api.matchAll(/`([^`\n]+)`/g)].flatMap((m) => m[1]!.match(/[A-Za-z_$][\w$]*/g) ?? []));
  const missing = entries.flatMap(({ specifier, source }) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(source)!)!;
    return checker
      .getExportsOfModule(module)
      .map((s) => s.name)
      .filter((name) => !named.has(name))
      .map((name) => `${specifier}: ${name}`);
  });
  expect(missing).toEqual([]);
});
