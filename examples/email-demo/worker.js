// A worker process of the email demo (started by main.js with --workers N): it opens the
// same store, defines the same pool and handlers, runs work until told to stop, and
// reports its pool's events to the main process for the progress display.
import { createPool, makeStore } from "./app.js";

const app = await makeStore(false);
const quiet = () => undefined;
const { pool } = createPool(app, { debug: quiet, info: quiet, warn: quiet, error: (...args) => console.error(...args) });
const report = (/** @type {unknown} */ event) => process.send?.(event);
pool.on("started", report);
pool.on("completed", report);

async function shutdown() {
  await pool.stop({ timeoutMs: 5000 });
  await app.close();
  process.disconnect?.();
}
process.on("message", (m) => m === "stop" && void shutdown());
process.on("SIGTERM", () => void shutdown());

await pool.start();
process.send?.("ready");
