/**
 * `workpool migrate` (create or upgrade the schema) and `workpool metrics` (print the
 * Prometheus exposition, or serve it over HTTP with --serve).
 */
import { createServer } from "node:http";
import type { Command } from "commander";
import type { WorkpoolAdmin } from "../../admin/types.js";
import { errorText } from "../../error-text.js";
import type { Cli } from "../cli.js";
import { parseCount } from "../format.js";
import { multiline, t } from "../terminal-text.js";

/** Serves GET /metrics on `host:port` until SIGINT or SIGTERM. */
async function serve(cli: Cli, admin: WorkpoolAdmin, host: string, port: number): Promise<void> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
      return;
    }
    admin.metrics().then(
      (text) => res.writeHead(200, { "content-type": admin.registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`${errorText(e)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const shown =
    typeof address === "object" && address
      ? `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  cli.out.note(t`serving Prometheus metrics on http://${shown}/metrics (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Registers `migrate` and `metrics`. */
export function registerStore(program: Command, cli: Cli): void {
  program
    .command("migrate")
    .description("create the store's schema, or bring it up to date (the only command that creates a database or schema)")
    .option("--json", "print JSON")
    .action(async (o: { json?: boolean }, command: Command) => {
      await cli.withStore(
        command,
        async (_admin, opened) => {
          const from = opened.versionAtOpen;
          await opened.store.migrate();
          const to = await opened.driver.schemaVersion();
          if (o.json) cli.out.json({ from, to });
          else
            cli.out.line(
              from === to ? t`${opened.label} is up to date (version ${to})` : t`migrated ${opened.label} from version ${from} to ${to}`,
            );
        },
        true,
      );
    });

  program
    .command("metrics")
    .description("print the store's Prometheus metrics, or serve them over HTTP")
    .option("--serve", "serve GET /metrics until interrupted")
    .option("--port <port>", "port for --serve", "9464")
    .option("--host <host>", "address for --serve (0.0.0.0 for every interface)", "127.0.0.1")
    .option("--json", "print prom-client's JSON form instead")
    .action(async (o: { serve?: boolean; port: string; host: string; json?: boolean }, command: Command) => {
      const port = parseCount("--port", o.port, 0, 65535);
      await cli.withStore(command, async (admin) => {
        if (o.serve) return serve(cli, admin, o.host, port);
        if (o.json) return cli.out.json(await admin.registry.getMetricsAsJSON());
        // Pool and handler names reach the exposition as label values: escaped like any stored text.
        cli.out.write(multiline(await admin.metrics()));
      });
    });
}
