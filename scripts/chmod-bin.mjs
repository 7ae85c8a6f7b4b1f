// Makes the package's bin (dist/cli/main.js) executable: tsc writes it without the bit, and
// `npx workpool` in this repository runs the file as it is (npm sets the bit only on install).
import { chmodSync, readFileSync } from "node:fs";
const { bin } = JSON.parse(readFileSync("package.json", "utf8"));
for (const path of Object.values(bin)) chmodSync(path, 0o755);
