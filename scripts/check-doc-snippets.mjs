#!/usr/bin/env node
// Type-checks every ```ts block of README.md and docs/*.md against the package's own
// exports, so the documentation cannot drift from the code. Each block is its own module
// (in memory, beside the docs) importing `workpool`, `workpool/sqlite`, ... as a user
// would; those names resolve to src/ through the subpaths of package.json `exports`, and
// one TypeScript program checks every block with the project's strict settings.
//
// Conventions, each an HTML comment that ends on the line just before the fence:
//   <!-- snippet-preamble: declare const pool: Workpool<Database>; -->   (one or more
//   lines) is code the block is checked with but readers do not see: the imports and
//   declarations a fragment needs;
//   <!-- snippet-nocheck: why -->   leaves the block unchecked. Keep it rare: only for a
//   block that cannot compile here (say, it imports a framework the project does not
//   install), and say why; a reason is required.
//
// Usage: node scripts/check-doc-snippets.mjs [file.md ...]   (default: README.md docs/*.md)
// Prints `file:line:column: message` for each error and exits 1 if there is any.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the blocks' modules live (in memory only): inside the project, so its node_modules resolve. */
const SNIPPET_DIR = join(ROOT, ".doc-snippets");
const DIRECTIVE = /^\s*<!--\s*snippet-(preamble|nocheck):([\s\S]*?)-->\s*$/;

/**
 * The ```ts blocks of one Markdown text, each with the line its code starts on (1-based),
 * its preamble (and the line that starts it), and whether it is checked (with the reason
 * it is not).
 * @param {string} file
 * @param {string} text
 */
export function extractSnippets(file, text) {
  const lines = text.split("\n");
  /** @type {{ file: string; line: number; code: string; preamble: string; preambleLine: number; check: boolean; nocheck: string }[]} */
  const snippets = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(ts|typescript)(?:\s+(.*?))?\s*$/.exec(lines[i]);
    if (!open) {
      // Skip any other fenced block whole, so a ```ts inside it is not taken for one.
      const other = /^(\s*)(`{3,}|~{3,})/.exec(lines[i]);
      if (other) i = closingFence(lines, i, other[2]);
      continue;
    }
    const [, indent, fence, , info = ""] = open;
    if (info)
      throw new Error(`${file}:${i + 1}: a ts block takes no flags ("${info}"); use <!-- snippet-nocheck: why --> to leave it unchecked`);
    const end = closingFence(lines, i, fence);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join("\n");
    const d = directiveBefore(lines, i);
    const reason = d.kind === "nocheck" ? d.text.trim() : "";
    if (d.kind === "nocheck" && !reason) throw new Error(`${file}:${d.line}: snippet-nocheck needs a reason`);
    // Untrimmed, so that its n-th line is the comment's n-th line.
    const preamble = d.kind === "preamble" && d.text.trim() ? d.text : "";
    snippets.push({ file, line: i + 2, code, preamble, preambleLine: d.line, check: d.kind !== "nocheck", nocheck: reason });
    i = end;
  }
  return snippets;
}

/** Index of the line that closes the fence opened at `start` (or the last line). */
function closingFence(lines, start, fence) {
  for (let j = start + 1; j < lines.length; j++) {
    const m = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]);
    if (m && m[1][0] === fence[0] && m[1].length >= fence.length) return j;
  }
  return lines.length - 1;
}

/** The `<!-- snippet-preamble: ... -->` or `<!-- snippet-nocheck: ... -->` comment that ends on the line before the fence, if any. */
function directiveBefore(lines, fenceIndex) {
  const none = { kind: "", text: "", line: 0 };
  const last = fenceIndex - 1;
  if (last < 0 || !lines[last].trimEnd().endsWith("-->")) return none;
  for (let j = last; j >= 0 && j > last - 40; j--) {
    if (lines[j].includes("<!--")) {
      const m = DIRECTIVE.exec(lines.slice(j, last + 1).join("\n"));
      return m ? { kind: m[1], text: m[2], line: j + 1 } : none;
    }
  }
  return none;
}

/** `paths` for every subpath of package.json `exports`: `workpool/x` -> the src/ file its types come from. */
function exportPaths() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  /** @type {Record<string, string[]>} */
  const paths = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const types = typeof target === "object" ? target.types : undefined;
    if (!types) continue;
    const source = join(ROOT, types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"));
    if (!existsSync(source)) throw new Error(`package.json exports ${subpath}: no source ${relative(ROOT, source)}`);
    paths[subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`] = [source];
  }
  return paths;
}

/** The project's compiler options, with the package's subpaths resolved to src/. */
function compilerOptions() {
  const configFile = join(ROOT, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configFile);
  return {
    ...options,
    noEmit: true,
    paths: exportPaths(),
    // A reader's `import { ResultOf } from "workpool"` needs no `type` keyword to be right.
    verbatimModuleSyntax: false,
    isolatedModules: false,
  };
}

/**
 * Type-checks the checked snippets in one program. Returns one error per diagnostic, at
 * the Markdown file and line of the code (or of its preamble).
 * @param {ReturnType<typeof extractSnippets>} snippets
 */
export function checkSnippets(snippets) {
  /** @type {Map<string, { snippet: (typeof snippets)[number]; text: string; codeStart: number }>} */
  const virtual = new Map();
  for (const snippet of snippets.filter((s) => s.check)) {
    const name = `${relative(ROOT, snippet.file).replace(/[^A-Za-z0-9]+/g, "_")}_L${snippet.line}.mts`;
    const head = snippet.preamble ? `${snippet.preamble}\n` : "";
    // `export {}`: every block is a module, so blocks never share top-level names.
    const text = `${head}${snippet.code}\nexport {};\n`;
    virtual.set(join(SNIPPET_DIR, name), { snippet, text, codeStart: head ? head.split("\n").length - 1 : 0 });
  }
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f)?.text ?? readFile.call(host, f);
  host.getSourceFile = (f, languageVersion, onError, shouldCreate) => {
    const v = virtual.get(f);
    return v ? ts.createSourceFile(f, v.text, languageVersion, true) : getSourceFile.call(host, f, languageVersion, onError, shouldCreate);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  /** @type {{ file: string; line: number; column: number; message: string }[]} */
  const errors = [];
  for (const d of program.getOptionsDiagnostics()) errors.push({ file: "tsconfig.json", line: 1, column: 1, message: text(d) });
  for (const [path, v] of virtual) {
    const sf = program.getSourceFile(path);
    if (!sf) continue;
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      const { line, character } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
      const inPreamble = line < v.codeStart;
      errors.push({
        file: relative(ROOT, v.snippet.file),
        line: inPreamble ? v.snippet.preambleLine + line : v.snippet.line + line - v.codeStart,
        column: character + 1,
        message: (inPreamble ? "in the snippet-preamble: " : "") + text(d),
      });
    }
  }
  return errors;
}

function text(d) {
  return `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
}

/** README.md and every docs/*.md. */
export function defaultFiles() {
  const docs = join(ROOT, "docs");
  return [
    join(ROOT, "README.md"),
    ...readdirSync(docs)
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => join(docs, f)),
  ];
}

/**
 * Extracts and checks the blocks of `files`; returns the errors and how many blocks were
 * checked and left unchecked.
 * @param {string[]} files
 */
export function checkDocSnippets(files = defaultFiles()) {
  const snippets = files.flatMap((f) => extractSnippets(resolve(f), readFileSync(f, "utf8")));
  return {
    errors: checkSnippets(snippets),
    checked: snippets.filter((s) => s.check).length,
    unchecked: snippets.filter((s) => !s.check).length,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const files = process.argv.slice(2);
  const { errors, checked, unchecked } = checkDocSnippets(files.length ? files : undefined);
  for (const e of errors) console.error(`${e.file}:${e.line}:${e.column}: ${e.message}`);
  if (errors.length) {
    console.error(`${errors.length} error(s) in the TypeScript blocks of the docs (conventions: scripts/check-doc-snippets.mjs)`);
    process.exit(1);
  }
  console.log(`docs: ${checked} TypeScript blocks compile (${unchecked} marked nocheck)`);
}
