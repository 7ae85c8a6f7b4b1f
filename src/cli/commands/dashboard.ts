/**
 * `workpool dashboard`: serves the web dashboard on loopback (or, with a token, on another
 * address) until SIGINT or SIGTERM, and prints its address.
 */
import { createServer } from "node:http";
import type { Command } from "commander";
import { dashboardHandler } from "../../dashboard/handler.js";
import { isLoopback } from "../../dashboard/options.js";
import type { Cli } from "../cli.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parseCount } from "../format.js";
import { t } from "../terminal-text.js";

interface DashboardFlags {
  port: string;
  host: string;
  readOnly?: boolean;
}

/** Registers `dashboard`. */
export function registerDashboard(program: Command, cli: Cli): void {
  program
    .command("dashboard")
    .description("serve the web dashboard (loopback only unless WORKPOOL_DASHBOARD_TOKEN is set)")
    .option("--port <port>", "port (0: any free port)", "4800")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--read-only", "show everything, change nothing")
    .addHelpText("after", "\nSet WORKPOOL_DASHBOARD_TOKEN (16+ characters) to require a token; it is needed on any host but loopback.")
    .action(async (o: DashboardFlags, command: Command) => {
      const port = parseCount("--port", o.port, 0, 65535);
      const token = cli.out.env.WORKPOOL_DASHBOARD_TOKEN || undefined;
      if (!isLoopback(o.host) && token === undefined) {
        throw new CliError(
          `refusing to serve the dashboard on ${o.host} without auth: anyone who reaches it could cancel and purge work. ` +
            "Set WORKPOOL_DASHBOARD_TOKEN to a secret of 16+ characters, or use a loopback --host such as 127.0.0.1",
          EXIT.usage,
        );
      }
      await cli.withStore(command, async (_admin, opened) => {
        const handler = dashboardHandler({ store: opened.store, auth: token, readOnly: o.readOnly ?? false });
        const server = createServer(handler);
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(port, o.host, resolve);
        });
        const address = server.address();
        const bound = typeof address === "object" && address ? address.port : port;
        const host = o.host.includes(":") ? `[${o.host}]` : o.host;
        cli.out.line(t`workpool dashboard on http://${host}:${bound}/${token ? "?token=<WORKPOOL_DASHBOARD_TOKEN>" : ""}`);
        cli.out.note(t`serving ${opened.label}${o.readOnly ? " read-only" : ""} (Ctrl-C to stop)`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        handler.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
    });
}
