// Lint rules: the recommended sets of ESLint and typescript-eslint, strict about `any`.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "coverage/", "node_modules/", "bench/node_modules/", "bench/results/", ".tmp/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        URL: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        queueMicrotask: "readonly",
        Buffer: "readonly",
        TextEncoder: "readonly",
        structuredClone: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  // The dashboard's browser app runs in the browser, not in Node (its Vite config runs in Node).
  { files: ["src/dashboard/ui/**"], ignores: ["src/dashboard/ui/vite.config.ts"], languageOptions: { globals: globals.browser } },
);
