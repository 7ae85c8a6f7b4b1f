/**
 * A command line that repeats the one being run with some options changed (the paging
 * hint under `ls`): every option given on the command line is kept, the global ones
 * (--db, --schema) included, each word quoted for a POSIX shell where it needs it.
 */
import type { Command } from "commander";

/** `word` as one shell word: as it is when it is plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The options of `command` given on the command line, as words, but those named in `skip` (attribute names). */
function givenOptions(command: Command, skip: ReadonlySet<string>): string[] {
  const words: string[] = [];
  for (const option of command.options) {
    const key = option.attributeName();
    if (skip.has(key) || command.getOptionValueSource(key) !== "cli" || !option.long) continue;
    const value: unknown = command.getOptionValue(key);
    if (option.isBoolean()) {
      if (value === true) words.push(option.long);
    } else if (typeof value === "string") {
      words.push(option.long, value);
    }
  }
  return words;
}

/**
 * `workpool`, the global options, `command` with `args`, its own options as given but
 * those in `set`, then `set` (option attribute names to values), as one shell line.
 */
export function repeatCommand(command: Command, args: readonly string[], set: Readonly<Record<string, string>>): string {
  // The program, then any command groups (`workflows`), each with its options as given.
  const parents: Command[] = [];
  for (let p = command.parent; p; p = p.parent) parents.unshift(p);
  const changed = new Set(Object.keys(set));
  const words = [
    "workpool",
    ...parents.flatMap((p, i) => [...(i === 0 ? [] : [p.name()]), ...givenOptions(p, new Set())]),
    command.name(),
    ...args,
    ...givenOptions(command, changed),
    ...Object.entries(set).flatMap(([key, value]) => {
      const long = command.options.find((o) => o.attributeName() === key)?.long;
      return long ? [long, value] : [];
    }),
  ];
  return words.map(shellWord).join(" ");
}
