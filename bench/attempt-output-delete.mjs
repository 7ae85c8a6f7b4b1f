// What deleting finished work costs PostgreSQL with the attempt output's deletion trigger:
// no trigger, the statement-level trigger the schema uses (over the DELETE's transition
// table), and a row-level trigger, each timed on 50,000 finished rows deleted in
// retention's batches of 500, 5 fills each, in the order given. Results:
// notes/progress-logs.md.
//
//   npm run build && node bench/attempt-output-delete.mjs [order, default abcacb]
//     a: no trigger, b: statement trigger, c: row trigger
import pg from "pg";
import { postgresStore } from "../dist/drivers/postgres/index.js";
import { PG_URL } from "./lib/env.mjs";

const url = PG_URL;
const schema = `attempt_output_delete_${process.pid}`;
const c = new pg.Client({ connectionString: url });
await c.connect();
await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
const store = postgresStore({ connectionString: url, schema });
await store.migrate();
await store.close();
const N = 50000;
async function fill() {
  await c.query(`INSERT INTO ${schema}.work (id, pool, kind, fn_name, args, state, run_at, enqueued_at, attempt, result, finished_at, started_at)
    SELECT lpad(g::text, 26, '0'), 'p', 'action', 'job', '{"to":"user@example.com","subject":"hello there"}', 'finished', 0, 0, 1,
      '{"kind":"success","returnValue":{"messageId":"abc"}}', 1000, 10 FROM generate_series(1, ${N}) g`);
  await c.query(`VACUUM ANALYZE ${schema}.work`);
}
async function timeDelete(label) {
  const times = [];
  for (let r = 0; r < 5; r++) {
    await fill();
    const t = process.hrtime.bigint();
    // Retention's shape: batches of 500.
    for (;;) {
      const res = await c.query(
        `DELETE FROM ${schema}.work WHERE id IN (SELECT id FROM ${schema}.work WHERE pool = 'p' AND state = 'finished' AND finished_at < 2000 ORDER BY finished_at LIMIT 500)`,
      );
      if (res.rowCount === 0) break;
    }
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label}: median ${((times[2] / N) * 1000).toFixed(2)} µs/row (min ${((times[0] / N) * 1000).toFixed(2)}, max ${((times[4] / N) * 1000).toFixed(2)})`,
  );
}
const order = process.argv[2] ?? "abc";
for (const k of order) {
  await c.query(`DROP TRIGGER IF EXISTS work_attempt_output_gone ON ${schema}.work`);
  await c.query(`DROP TRIGGER IF EXISTS work_attempt_output_gone_row ON ${schema}.work`);
  if (k === "a") {
    await timeDelete("no trigger");
  } else if (k === "b") {
    await c.query(
      `CREATE TRIGGER work_attempt_output_gone AFTER DELETE ON ${schema}.work REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.attempt_output_gone()`,
    );
    await timeDelete("statement trigger (transition table)");
  } else {
    await c.query(
      `CREATE OR REPLACE FUNCTION ${schema}.gone_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM ${schema}.attempt_output WHERE work_id = OLD.id; RETURN NULL; END $$`,
    );
    await c.query(
      `CREATE TRIGGER work_attempt_output_gone_row AFTER DELETE ON ${schema}.work FOR EACH ROW EXECUTE FUNCTION ${schema}.gone_row()`,
    );
    await timeDelete("row trigger");
  }
}
await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await c.end();
