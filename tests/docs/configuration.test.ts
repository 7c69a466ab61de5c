import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "@/lib/config/env";
import { otherVariableDocs, variableDocs, type VariableDoc } from "@/lib/config/variables";
import { POLICY_NAMES, policyEnvVars } from "@/lib/rate-limit/policies";
import { CONFIGURATION_DOC, renderConfigurationDoc, schemaVariables } from "@/scripts/docs-config";

const described = variableDocs as Record<string, VariableDoc>;
const limitVariables = new Set<string>(POLICY_NAMES.map((name) => policyEnvVars[name]));

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` generates from the schema", async () => {
    const committed = fs.readFileSync(CONFIGURATION_DOC, "utf8");
    const generated = await renderConfigurationDoc();
    // A message that says what to run, rather than a diff of a 300-line file.
    expect(committed === generated, "docs/configuration.md is out of date: run `npm run docs:config` and commit it").toBe(true);
  });

  it("describes every schema variable, and nothing the schema does not read", () => {
    const variables = schemaVariables();
    const undescribed = variables.filter((name) => !limitVariables.has(name) && !(described[name]?.description.trim() ?? ""));
    expect(undescribed, "add these to lib/config/variables.ts").toEqual([]);
    const stale = Object.keys(described).filter((name) => !(variables as string[]).includes(name));
    expect(stale, "lib/config/variables.ts describes variables the schema does not read").toEqual([]);
    const inBoth = Object.keys(otherVariableDocs).filter((name) => (variables as string[]).includes(name));
    expect(inBoth, "a schema variable belongs in variableDocs, not otherVariableDocs").toEqual([]);
  });

  it("lists every variable once, each limit with its policy's default", async () => {
    const generated = await renderConfigurationDoc();
    for (const name of [...schemaVariables(), ...Object.keys(otherVariableDocs)]) {
      expect(generated.split(`**\`${name}\`**`).length - 1, name).toBe(1);
    }
    expect(generated).toMatch(/\*\*`RATE_LIMIT_SIGN_IN_USERNAME`\*\*: `signInUsername`\.[^]*?Default: `5\/15m`\./);
  });

  it("takes defaults from the schema, except where a description says why it cannot", () => {
    const parsed = envSchema.parse({}) as Record<string, unknown>;
    // The CPU count differs per machine; the rest have no default of their own in the schema.
    const overridden = Object.entries(described).filter(([, doc]) => doc.defaultText !== undefined);
    for (const [name] of overridden) {
      if (name === "HASH_CONCURRENCY") continue;
      expect(parsed[name], `${name} has a schema default: drop its defaultText`).toBeUndefined();
    }
  });
});
