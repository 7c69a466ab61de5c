import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  // Type-aware, for every file of the TypeScript project (server.mjs and lib/*.mjs included): a
  // promise nobody awaits loses its rejection (in Node an unhandled one ends the process), and one
  // handed to a callback or prop that expects void runs unawaited.
  {
    files: ["**/*.{ts,tsx,mts,cts}", "server.mjs", "lib/**/*.mjs"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  // Playwright fixtures call a parameter named `use`, which is not React's hook.
  { files: ["e2e/**"], rules: { "react-hooks/rules-of-hooks": "off" } },
  { ignores: [".next/**", "node_modules/**", "lib/generated/**", ".data/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
];

export default config;
