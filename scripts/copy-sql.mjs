// Copies each driver's migrations/*.sql next to its compiled code: the drivers read
// them at run time, and tsc copies only TypeScript.
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
const drivers = join("src", "drivers");
for (const name of readdirSync(drivers)) {
  const from = join(drivers, name, "migrations");
  if (existsSync(from)) cpSync(from, join("dist", "drivers", name, "migrations"), { recursive: true });
}
