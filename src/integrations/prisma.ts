/**
 * `workpool/prisma`: enqueue inside a Prisma interactive transaction on PostgreSQL:
 * `{ tx: prismaTx(tx) }` inside `prisma.$transaction(async (tx) => ...)`. Prisma does not
 * expose a transaction's connection, so this wraps `tx.$queryRawUnsafe()` (and
 * `$executeRawUnsafe()` for statements whose rows the store does not read) as a
 * transaction executor; the store checks it through it before writing.
 *
 * Prisma cannot run on a connection it did not open, so handlers cannot use Prisma on
 * `ctx.tx`: write with `ctx.tx.query(...)` there, or do Prisma work in an action.
 */
import { transactionExecutor, type TransactionExecutor } from "../driver/tx-executor.js";
import { InvalidArgumentError } from "../errors.js";
import { describeValue } from "../checks.js";

/** What the adapter uses of a Prisma interactive transaction client (`Prisma.TransactionClient`). */
export interface PrismaTransactionClientLike {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

const executors = new WeakMap<object, TransactionExecutor>();

/** Prisma reports a database error as P2010 with the driver's code inside; the store reads that code. */
function withDatabaseCode(e: unknown): unknown {
  const meta = (e as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; originalMessage?: unknown } } } } | null)?.meta;
  const cause = meta?.driverAdapterError?.cause;
  if (typeof cause?.originalCode !== "string") return e;
  const message = typeof cause.originalMessage === "string" ? cause.originalMessage : String(e);
  return Object.assign(new Error(message, { cause: e }), { code: cause.originalCode });
}

/**
 * Wraps the `tx` of `prisma.$transaction(async (tx) => ...)` for enqueue's `tx` option:
 * the work is written in that transaction and exists iff it commits.
 */
export function prismaTx(tx: PrismaTransactionClientLike): TransactionExecutor {
  const t = tx as Partial<PrismaTransactionClientLike & { $disconnect: unknown }> | null;
  if (typeof t !== "object" || t === null || typeof t.$queryRawUnsafe !== "function" || typeof t.$executeRawUnsafe !== "function") {
    throw new InvalidArgumentError("tx", `must be the tx of a prisma.$transaction(async (tx) => ...) callback, got ${describeValue(tx)}`);
  }
  // A transaction client lacks the root client's connection methods.
  if (typeof t.$disconnect === "function") {
    throw new InvalidArgumentError(
      "tx",
      "is a PrismaClient, whose queries each commit on their own; pass the tx of prisma.$transaction(async (tx) => ...)",
    );
  }
  let executor = executors.get(tx);
  if (!executor) {
    executor = transactionExecutor(async (statement) => {
      try {
        if (!statement.wantsRows) return await tx.$executeRawUnsafe(statement.text, ...statement.values);
        return await tx.$queryRawUnsafe(statement.text, ...statement.values);
      } catch (e) {
        throw withDatabaseCode(e);
      }
    });
    executors.set(tx, executor);
  }
  return executor;
}
