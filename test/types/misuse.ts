/**
 * Compile-time checks: each `@ts-expect-error` line is a mistake the types must reject
 * (`npm run typecheck` fails if one of them compiles). Never run, only type-checked.
 */
import { ActionRetrier, Workpool, toWorkId, type JsonValue, type ResultOf, type Store, type WorkId } from "../../src/index.js";

declare const store: Store<unknown>;

export async function misuse(): Promise<void> {
  const emails = new Workpool(store, { name: "emails" });
  const billing = new Workpool(store, { name: "billing" });
  const send = emails.defineAction("send", async (_ctx, args: { to: string }) => ({ messageId: args.to }));
  const sent = emails.defineOnComplete("sent", (_ctx, args: { context: { userId: number }; result: { kind: string } }) => {
    void args;
  });
  const typedDone = emails.defineOnComplete<{ userId: number }, ResultOf<typeof send>>("typedDone", (_ctx, { result }) => {
    // The handler's result type reaches onComplete: returnValue is { messageId: string }.
    if (result.kind === "success") result.returnValue.messageId.toUpperCase();
  });
  const wrongResult = emails.defineOnComplete<unknown, { count: number }>("wrongResult", () => undefined);

  // Correct uses compile, whatever the shape of JSON args.
  interface Invoice {
    id: string;
    lines: readonly { sku: string; qty: number }[];
    note?: string;
    pair: [number, string];
  }
  emails.defineAction("invoice", (_ctx, args: Invoice) => args.id);
  emails.defineAction("loose", (_ctx, args: Record<string, unknown>) => Object.keys(args));
  emails.defineAction("json", (_ctx, args: JsonValue) => args);
  emails.defineAction("none", () => undefined);
  emails.defineMutation("list", (_ctx, args: string[] | null) => args?.length);
  // Correct uses compile.
  const id: WorkId = await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: typedDone, context: { userId: 7 } });
  await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: sent, context: { userId: 7 }, runAfter: 1000 });
  await emails.status(id);
  await emails.status(toWorkId("01ARZ3NDEKTSV4RRFFQ69G5FAV"));

  // 1. An extra property in args.
  // @ts-expect-error `cc` is not in the handler's args `{ to }`
  await emails.enqueueAction(send, { to: "a@b.c", cc: "d@e.f" });

  // 2. `context` without `onComplete`.
  // @ts-expect-error context is only delivered to an onComplete
  await emails.enqueueAction(send, { to: "a@b.c" }, { context: { userId: 7 } });

  // 3. `runAt` together with `runAfter`.
  // Per-work options: skipping onComplete for some result kinds, a work's own log level.
  await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: sent, onCompleteExcludeKinds: ["success"], logLevel: "DEBUG" });
  // @ts-expect-error onCompleteExcludeKinds only applies to an onComplete
  await emails.enqueueAction(send, { to: "a@b.c" }, { onCompleteExcludeKinds: ["failed"] });
  // @ts-expect-error "lost" is not a result kind
  await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: sent, onCompleteExcludeKinds: ["lost"] });
  // @ts-expect-error "LOUD" is not a log level
  await emails.enqueueAction(send, { to: "a@b.c" }, { logLevel: "LOUD" });
  // @ts-expect-error runAt and runAfter are exclusive
  await emails.enqueueAction(send, { to: "a@b.c" }, { runAt: Date.now(), runAfter: 1000 });

  // 4. A Date inside args: the handler's args must be JSON.
  // @ts-expect-error a Date is not JSON
  emails.defineAction("remind", async (_ctx, args: { at: Date }) => args.at.getTime());
  // @ts-expect-error a Date is not JSON (nested, in a mutation)
  emails.defineMutation("log", (_ctx, args: { entries: { at: Date }[] }) => args.entries.length);
  // @ts-expect-error a Date is not JSON (context of an onComplete)
  emails.defineOnComplete("late", (_ctx, args: { context: { at: Date } }) => void args);
  // @ts-expect-error a Date where the args say string
  await emails.enqueueAction(send, { to: new Date() });

  // 5. A handle from another pool.
  // @ts-expect-error `send` belongs to pool "emails"
  await billing.enqueueAction(send, { to: "a@b.c" });
  const charge = billing.defineAction("charge", () => 1);
  // @ts-expect-error `sent` belongs to pool "emails"
  await billing.enqueueAction(charge, {}, { onComplete: sent });
  // @ts-expect-error a schedule takes only its own pool's handles
  await billing.schedule("nightly", { cron: "0 3 * * *" }, send, { to: "a@b.c" });
  // @ts-expect-error a schedule's args are the handler's args
  await emails.schedule("nightly", { cron: "0 3 * * *" }, send, { to: "a@b.c", cc: "d@e.f" });

  // 6. A plain string as a work id.
  // @ts-expect-error "01ABC" is a string, not a WorkId
  await emails.status("01ABC");
  // @ts-expect-error plain strings are not WorkIds
  await emails.statusBatch(["01ABC"]);
  // @ts-expect-error plain string
  await emails.cancel("01ABC");

  // 7. An onComplete that expects another result type than the handler returns.
  // @ts-expect-error wrongResult expects { count: number }, send returns { messageId: string }
  await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: wrongResult });
  // @ts-expect-error the context does not match what typedDone accepts
  await emails.enqueueAction(send, { to: "a@b.c" }, { onComplete: typedDone, context: { userId: "7" } });

  // The same checks on the ActionRetrier.
  const retrier = new ActionRetrier(store);
  const fetchRate = retrier.defineAction("fetchRate", (_ctx, args: { currency: string }) => ({ rate: args.currency.length }));
  // Type arguments in the pool's order: the context first, then the action's return value.
  const recorded = retrier.defineOnComplete<{ currency: string }, ResultOf<typeof fetchRate>>("recorded", (_ctx, { context, result }) => {
    context.currency.toUpperCase();
    if (result.type === "success") result.returnValue.rate.toFixed();
  });
  const counted = retrier.defineOnComplete<unknown, { count: number }>("counted", () => undefined);
  const withContext = retrier.defineOnComplete<{ currency: string }>("withContext", (_ctx, { context }) => void context.currency.length);
  await retrier.run(fetchRate, { currency: "EUR" }, { onComplete: recorded, context: { currency: "EUR" }, maxFailures: 2 });
  await retrier.run(fetchRate, { currency: "EUR" }, { onComplete: withContext, context: { currency: "EUR" } });
  // @ts-expect-error withContext takes its context as its first type argument: { currency: string }
  await retrier.run(fetchRate, { currency: "EUR" }, { onComplete: withContext, context: { currency: 1 } });
  // @ts-expect-error the result type is the second type argument, as on the pool
  await retrier.run(fetchRate, { currency: "EUR" }, { onComplete: recorded, context: { rate: 1 } });
  // @ts-expect-error context is only delivered to an onComplete
  await retrier.run(fetchRate, { currency: "EUR" }, { context: { currency: "EUR" } });
  // @ts-expect-error counted expects { count: number }, fetchRate returns { rate: number }
  await retrier.run(fetchRate, { currency: "EUR" }, { onComplete: counted });
  // @ts-expect-error `amount` is not in the action's args
  await retrier.run(fetchRate, { currency: "EUR", amount: 1 });
  // @ts-expect-error "LOUD" is not a log level
  await retrier.run(fetchRate, { currency: "EUR" }, { logLevel: "LOUD" });
  // @ts-expect-error a plain string is not a RunId
  await retrier.status("01ABC");
}
