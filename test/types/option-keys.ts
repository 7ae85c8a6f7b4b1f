/**
 * Compile-time checks of the runtime lists of option keys: optionKeys<T>() must be given
 * every key of T and nothing else, and checkOptionKeys() takes no other list, so an
 * option added to a type fails to compile until its list has it. Each `@ts-expect-error`
 * line is a mistake the types must reject (`npm run typecheck` fails if one compiles).
 * Never run, only type-checked.
 */
import { checkOptionKeys, optionKeys } from "../../src/checks.js";
import type { EnqueueOptions, StopOptions, WorkpoolOptions } from "../../src/index.js";

interface Options {
  a?: number;
  b: string;
}

/** A union: its list has the keys of every member. */
type Shape = { kind: "circle"; radius?: number } | { kind: "square"; side?: number };

export function optionKeyLists(): void {
  // Every key, once: compiles.
  const keys = optionKeys<Options>()({ a: true, b: true });
  optionKeys<Shape>()({ kind: true, radius: true, side: true });

  // @ts-expect-error `b` is missing from the list
  optionKeys<Options>()({ a: true });

  // @ts-expect-error `c` is not an option of Options
  optionKeys<Options>()({ a: true, b: true, c: true });

  // @ts-expect-error `side`, of the union's second member, is missing
  optionKeys<Shape>()({ kind: true, radius: true });

  // @ts-expect-error a plain array is not a list checked against a type
  checkOptionKeys("options", {}, ["a", "b"], "f()");

  // What checkOptionKeys() returns has the list's keys only.
  const checked = checkOptionKeys("options", {}, keys, "f()");
  void checked.a;
  // @ts-expect-error `c` is not in the list
  void checked.c;

  // A public option type: stop()'s list as it is compiles...
  optionKeys<StopOptions>()({ timeoutMs: true });
  // @ts-expect-error ...and fails once the type has an option the list lacks
  optionKeys<StopOptions & { force?: boolean }>()({ timeoutMs: true });

  // @ts-expect-error the enqueue options (a union of timing and onComplete shapes) without `uniqueKey`
  optionKeys<EnqueueOptions<unknown>>()({
    runAt: true,
    runAfter: true,
    onComplete: true,
    context: true,
    onCompleteExcludeKinds: true,
    name: true,
    logLevel: true,
    tx: true,
    priority: true,
    key: true,
    onConflict: true,
  });

  // @ts-expect-error new Workpool()'s options with a key it does not have
  optionKeys<Pick<WorkpoolOptions, "name" | "maxParallelism">>()({ name: true, maxParallelism: true, maxParalelism: true });
}
