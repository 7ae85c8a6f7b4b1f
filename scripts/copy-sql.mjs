// Copies each driver's SQL files (migrations/*.sql, and sql/ where a driver has it) next to
// its compiled code: the drivers read them at run time, and tsc copies only TypeScript.
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
const drivers = join("src", "drivers");
for (const name of readdirSync(drivers)) {
  for (const folder of ["migrations", "sql"]) {
    const from = join(drivers, name, folder);
    if (existsSync(from)) cpSync(from, join("dist", "drivers", name, folder), { recursive: true });
  }
}
