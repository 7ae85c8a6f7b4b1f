/**
 * The options of `defineBatchAction`, checked before the handler is registered.
 */
import { checkInt, checkOptionKeys, optionKeys } from "../checks.js";
import type { BatchActionOptions } from "./batch-types.js";

/** Largest `maxBatchSize`. */
export const MAX_BATCH_SIZE = 1000;
/** Largest `maxWaitMs`. */
export const MAX_BATCH_WAIT_MS = 60_000;

const BATCH_KEYS = optionKeys<BatchActionOptions>()({ maxBatchSize: true, maxWaitMs: true });

/** A batch action's options with their defaults applied. */
export interface BatchLimits {
  maxBatchSize: number;
  maxWaitMs: number;
}

/** Checks the options of `defineBatchAction`; throws InvalidArgumentError naming the field and range. */
export function checkBatchOptions(options: unknown): BatchLimits {
  if (options === undefined) return { maxBatchSize: 100, maxWaitMs: 0 };
  const o = checkOptionKeys("options", options, BATCH_KEYS, "defineBatchAction()");
  return {
    maxBatchSize: o.maxBatchSize === undefined ? 100 : checkInt("maxBatchSize", o.maxBatchSize, 1, MAX_BATCH_SIZE),
    maxWaitMs: o.maxWaitMs === undefined ? 0 : checkInt("maxWaitMs", o.maxWaitMs, 0, MAX_BATCH_WAIT_MS),
  };
}
