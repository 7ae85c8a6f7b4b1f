// Removes the given folders (build output) so a build never ships stale files.
import { rmSync } from "node:fs";
for (const dir of process.argv.slice(2)) rmSync(dir, { recursive: true, force: true });
