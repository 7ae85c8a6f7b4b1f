/**
 * The browser app, as `npm run build` made it (Vite, into dist/dashboard/ui/): read once
 * into memory and served from there, so nothing is fetched from anywhere else at run time.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** One file of the app. */
export interface Asset {
  type: string;
  body: Buffer;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/**
 * The built app's folder: beside this module once built (dist/dashboard/ui). Run from the
 * source tree (tests run the .ts), ./ui/ is the app's unbuilt source, so the built copy in dist/.
 */
function appDir(): string {
  const fromSource = import.meta.url.endsWith(".ts");
  return fileURLToPath(new URL(fromSource ? "../../dist/dashboard/ui/" : "./ui/", import.meta.url));
}

let cache: Map<string, Asset> | null = null;

/** Every file of the app by its path ("index.html", "assets/index-abc.js"). Throws when the app was not built. */
export function appAssets(): Map<string, Asset> {
  if (cache) return cache;
  const dir = appDir();
  if (!existsSync(join(dir, "index.html"))) {
    throw new Error("the dashboard's browser app is missing: run `npm run build` (it is built into dist/dashboard/ui)");
  }
  const files = new Map<string, Asset>();
  const walk = (sub: string): void => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else if (TYPES[extname(entry.name)]) files.set(path, { type: TYPES[extname(entry.name)]!, body: readFileSync(join(dir, path)) });
    }
  };
  walk("");
  cache = files;
  return files;
}
