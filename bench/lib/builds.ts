/**
 * A build named on an A/B script's command line (bench/ab-cost.ts, bench/profile-drive.ts,
 * bench/experiments/owner-sign-in.ts): `label=DIR`, or `label=DIR@NAME=VALUE@…` for settings of
 * that build's server alone. Each part splits at its first `=`, so a value may hold one.
 */
export type BuildArg = { label: string; root: string; settings: Record<string, string> };

export function buildArgs(args: readonly string[]): BuildArg[] {
  return args.map((arg) => {
    const [label, spec] = assignment(arg);
    const [root = "", ...settings] = spec.split("@");
    return { label, root, settings: Object.fromEntries(settings.map(assignment)) };
  });
}

/** `NAME=VALUE` at its first `=`; anything else stops the run rather than start a server without it. */
function assignment(text: string): [string, string] {
  const at = text.indexOf("=");
  if (at <= 0) throw new Error(`expected NAME=VALUE, got "${text}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}
