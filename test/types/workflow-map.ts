/**
 * Compile-time checks of step.map()'s types: what it resolves with follows `onFailure`, and
 * its options are checked. Each `@ts-expect-error` line is a mistake the types must reject
 * (`npm run typecheck` fails if one compiles). Never run, only type-checked.
 */
import type { ActionHandle } from "../../src/index.js";
import type { MapFailureMode, MapItemResult, WorkflowStep } from "../../src/workflow/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function same<A, B>(_proof: Equal<A, B>): void {}

export async function mapTypes(step: WorkflowStep, resize: ActionHandle<{ image: string }, number>, mode: MapFailureMode): Promise<void> {
  const images = ["a", "b"];
  const sizes = await step.map(images, (image) => step.runAction(resize, { image }));
  same<typeof sizes, number[]>(true);
  const fast = await step.map(images, (image) => step.runAction(resize, { image }), { onFailure: "fail-fast", concurrency: 2 });
  same<typeof fast, number[]>(true);
  const collected = await step.map(images, (image) => step.runAction(resize, { image }), { onFailure: "collect" });
  same<typeof collected, MapItemResult<number>[]>(true);
  const ignored = await step.map(images, async (image, i) => (await step.runAction(resize, { image })) + i, { onFailure: "ignore" });
  same<typeof ignored, (number | undefined)[]>(true);
  // A mode known only at run time: any of the three shapes.
  const any = await step.map(images, () => "x", { onFailure: mode });
  same<typeof any, string[] | MapItemResult<string>[] | (string | undefined)[]>(true);
  void [sizes, fast, collected, ignored, any];

  // @ts-expect-error an unknown mode
  await step.map(images, () => 1, { onFailure: "retry" });
  // @ts-expect-error an unknown option
  await step.map(images, () => 1, { concurency: 2 });
  // @ts-expect-error the callback gets the item's type
  await step.map(images, (image: number) => image);
}
