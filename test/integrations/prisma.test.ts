/**
 * workpool/prisma against the PostgreSQL test database: Prisma 7's client with the
 * `@prisma/adapter-pg` driver adapter, in interactive transactions.
 *
 * The client is generated here from prisma/schema.prisma. `prisma generate` reads the
 * schema with its WebAssembly parser and needs no native engine, but the CLI looks for
 * its schema-engine binary when it starts and would download it; that binary is only used
 * by migrate and db commands, so the test points the CLI at a stand-in it never runs.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import { beforeAll, expect, test } from "vitest";
import { prismaTx, type PrismaTransactionClientLike } from "../../src/integrations/prisma.js";
import { InvalidArgumentError, type WorkId } from "../../src/index.js";
import { DATABASE_URL, useCleanups, useSharedServer } from "../postgres/helpers.js";
import { Rollback, expectNoWork, expectWorkRuns, pgSetup } from "./helpers.js";

/** What the tests use of the generated client. */
interface TxClient extends PrismaTransactionClientLike {
  appRow: { create(args: { data: { k: string } }): Promise<unknown> };
}
interface AppPrismaClient extends TxClient {
  $transaction<T>(fn: (tx: TxClient) => Promise<T>): Promise<T>;
  $disconnect(): Promise<void>;
}
type PrismaClientClass = new (options: { adapter: PrismaPg }) => AppPrismaClient;

const root = fileURLToPath(new URL("../../", import.meta.url));
let PrismaClient: PrismaClientClass;

useSharedServer();
const cleanups = useCleanups();

beforeAll(() => {
  execFileSync(`${root}node_modules/.bin/prisma`, ["generate", "--schema", "test/integrations/prisma/schema.prisma"], {
    cwd: root,
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    stdio: "pipe",
  });
}, 120_000);

beforeAll(async () => {
  const generated = pathToFileURL(`${root}.tmp/prisma-client/client.ts`).href;
  PrismaClient = ((await import(generated)) as { PrismaClient: PrismaClientClass }).PrismaClient;
});

async function setup() {
  const base = await pgSetup(cleanups);
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: DATABASE_URL, max: 3 }, { schema: base.schema }) });
  cleanups.push(() => prisma.$disconnect());
  return { ...base, prisma };
}

test("work enqueued in an interactive transaction that rolls back does not exist", async () => {
  const { pool, ping, prisma, appRows } = await setup();
  let id: WorkId | undefined;
  await expect(
    prisma.$transaction(async (tx) => {
      await tx.appRow.create({ data: { k: "a" } });
      id = await pool.enqueueAction(ping, { n: 1 }, { tx: prismaTx(tx) });
      throw new Rollback();
    }),
  ).rejects.toBeInstanceOf(Rollback);
  await expectNoWork(pool, id);
  expect(await appRows()).toEqual([]);
});

test("work enqueued in an interactive transaction that commits exists and runs; batches too", async () => {
  const { pool, ping, prisma, appRows } = await setup();
  const [id, batch] = await prisma.$transaction(async (tx) => {
    await tx.appRow.create({ data: { k: "a" } });
    const one = await pool.enqueueAction(ping, { n: 2 }, { tx: prismaTx(tx) });
    const many = await pool.enqueueActionBatch(ping, [{ n: 3 }, { n: 4 }], { tx: prismaTx(tx) });
    return [one, many] as const;
  });
  expect(await appRows()).toEqual(["a"]);
  expect((await pool.statusBatch(batch)).map((s) => s.state)).toEqual(["pending", "pending"]);
  await expectWorkRuns(pool, id, { pong: 2 }, 3);
});

test("the PrismaClient itself (no transaction) is refused, naming tx", async () => {
  const { prisma } = await setup();
  expect(() => prismaTx(prisma)).toThrow(InvalidArgumentError);
  expect(() => prismaTx(prisma)).toThrow(/PrismaClient, whose queries each commit on their own/);
});
