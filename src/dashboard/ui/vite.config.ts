// Builds the dashboard's browser app into dist/dashboard/ui, where the handler serves it from.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative URLs: the app works under any basePath the handler is mounted at.
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../../../dist/dashboard/ui", import.meta.url)),
    emptyOutDir: true,
    // No data: URLs and no inline polyfill: everything is a file the CSP allows ('self').
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
