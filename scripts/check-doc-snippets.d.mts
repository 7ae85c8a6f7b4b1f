// Types of check-doc-snippets.mjs, for its tests.

/** One ```ts block of a Markdown file. */
export interface Snippet {
  file: string;
  /** Line (1-based) of the block's first line of code. */
  line: number;
  code: string;
  /** The code of its `<!-- snippet-preamble: ... -->` (its first line is the comment's), or "". */
  preamble: string;
  /** Line of that comment, or 0. */
  preambleLine: number;
  /** False when a `<!-- snippet-nocheck: why -->` comes before it. */
  check: boolean;
  /** The reason it is not checked, or "". */
  nocheck: string;
}

/** A type error, at the Markdown file (relative to the project) and line of the code or preamble. */
export interface SnippetError {
  file: string;
  line: number;
  column: number;
  message: string;
}

/** The ```ts blocks of one Markdown text; throws on a malformed block or directive. */
export declare function extractSnippets(file: string, text: string): Snippet[];

/** Type-checks the checked snippets in one program. */
export declare function checkSnippets(snippets: Snippet[]): SnippetError[];

/** README.md and every docs/*.md. */
export declare function defaultFiles(): string[];

/** Extracts and checks the blocks of `files` (default: defaultFiles()). */
export declare function checkDocSnippets(files?: string[]): { errors: SnippetError[]; checked: number; unchecked: number };
