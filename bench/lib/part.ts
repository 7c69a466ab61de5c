import type { BenchServer, PublicHost } from "./server";

/** What every bench part receives and returns. */

export type PartId =
  | "limiter"
  | "flood"
  | "distributed"
  | "memory"
  | "argon2"
  | "lockout"
  | "pow"
  | "retention"
  | "answers"
  | "passkeys"
  | "peer"
  | "stuffing"
  | "precision"
  | "connections"
  | "cost"
  | "faults";

/** Each part prints its title as a heading; the smoke test looks for them. */
export const PART_TITLES: Readonly<Record<PartId, string>> = {
  limiter: "1. Limiter decision cost",
  flood: "2. Flood from one address",
  distributed: "3. Distributed spray: many addresses, one guess per username",
  memory: "4. Memory of the in-memory store",
  argon2: "5. Argon2id cost and ceiling",
  lockout: "6. Lockout as denial of service",
  pow: "7. Proof of work by level",
  retention: "8. Table growth under a daily spray, with and without retention",
  answers: "9. Answers that do not tell whether an address has an account",
  passkeys: "10. Passkeys: server CPU beside a password, and the owner's sign-in during an attack",
  peer: "11. Beside a peer: better-auth 1.7 with SQLite, memory and latency",
  stuffing: "12. Credential stuffing: accounts taken over, with and without the new-device confirmation",
  precision: "13. Precision: the office, the carrier, the typist and the owner after a reset, beside the attackers",
  connections: "14. Idle connections: one client holding and reopening them, beside new visitors",
  cost: "15. Per-request cost beside the floor and better-auth",
  faults: "16. kill -9 with mail promised: every promised mail delivered once after the restart",
};

export type PartContext = {
  /** Tiny sizes: proves the code path still runs; its figures mean nothing. */
  smoke: boolean;
  /** The repository root (the folder holding package.json). */
  root: string;
  /** Progress output (stdout). */
  say(line: string): void;
  /**
   * Runs `work` against a production server started with the drill settings (and the part's own
   * `serverSettings`). A full run starts a fresh server per part; a smoke run shares one, started
   * with the settings of every part it runs, since starting one takes several seconds.
   */
  withServer<T>(work: (server: BenchServer) => Promise<T>): Promise<T>;
  /**
   * Another checkout with a production build (`--compare DIR`), measured beside this one by the
   * parts that can (part 2 starts a server from it as well): the "before" of a change.
   */
  compare?: { root: string; commit: string };
};

export type PartReport = {
  /** Markdown for bench/RESULTS.md, below the part's heading. */
  markdown: string;
  /** One-line headline figures, printed at the end of the run and listed at the top of RESULTS.md. */
  headlines: string[];
};

export type Part = {
  id: PartId;
  title: string;
  /** Server settings on top of DRILL_SETTINGS for this part's server (parts that start none: none). */
  serverSettings?(smoke: boolean): Record<string, string>;
  /** How the part's server names itself in NEXTAUTH_URL (default 127.0.0.1; WebAuthn needs "localhost"). */
  publicHost?: PublicHost;
  run(context: PartContext): Promise<PartReport>;
};

/** The command that reproduces one part's figures (with the comparison checkout, when the part used one). */
export const reproduce = (id: PartId, compareRoot?: string): string =>
  `npm run bench -- --part ${id}${compareRoot ? ` --compare ${compareRoot}` : ""}`;

/** Parts that measure the `--compare` checkout too. */
export const COMPARING_PARTS: ReadonlySet<PartId> = new Set(["flood", "precision", "cost"]);
