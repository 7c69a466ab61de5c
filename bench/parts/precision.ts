import { randomBytes } from "node:crypto";
import type { Challenge } from "altcha-lib";
import { solve } from "@/tests/helpers/altcha";
import { confirmDeviceByApi, jsonOf, request, SIGN_IN_PATH, signInBody, solvedPayload, tokenSignIn, type Reply } from "../lib/http";
import { tally } from "../lib/legit";
import { Outbox, type OutboxMail } from "../lib/outbox";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, startServer } from "../lib/server";
import { fmt, pool, range, seededRandom, sleep, table } from "../lib/stats";
import { startPeer } from "../peer/start";

/**
 * Part 13: precision. The people a deployment serves and the attackers it must stop, at the same
 * time, against Gatehouse and against better-auth at its defaults: a client's office (its staff
 * behind one NAT address, most on a device that signed in before), a mobile carrier's CGNAT (many
 * unrelated people over a few addresses), owners who mistype, and owners right after a reset; and
 * a guest guessing from the office's address, credential stuffing from 10,000 addresses and a
 * stranger spending emailed-code tries. Everyone legitimate behaves as a browser: challenge, solve,
 * post, and on a 429 or 503 waits as told and tries again (at most three times). What it counts:
 * legitimate sign-ins refused, delayed (and the longest wait) or never in, per group, and the
 * attackers' guesses that reached the password hash. Written against the HTTP surface only, so it
 * measures whatever the build does.
 */

type GroupId = "known" | "firstDay" | "cgnat" | "typist" | "reset";
const GROUPS: readonly { id: GroupId; label: string }[] = [
  { id: "known", label: "Office staff, known device" },
  { id: "firstDay", label: "Office staff, first day (no device cookie)" },
  { id: "cgnat", label: "CGNAT carrier (no device cookie)" },
  { id: "typist", label: "Mistype once or twice, then right" },
  { id: "reset", label: "Right after a password reset (another device)" },
];

type AttackerId = "guestOne" | "guestMany" | "stuffing" | "codes";
const ATTACKERS: readonly { id: AttackerId; label: string }[] = [
  { id: "guestOne", label: "Guest at the office address, one staff account" },
  { id: "guestMany", label: "Guest at the office address, several staff usernames" },
  { id: "stuffing", label: "Credential stuffing, one address per pair" },
  { id: "codes", label: "Stranger spending emailed-code tries" },
];

type Sizes = {
  rounds: number;
  office: number;
  knownShare: number;
  cgnat: number;
  cgnatAddresses: number;
  typists: number;
  resets: number;
  /** The legitimate sign-ins start spread over this window; the attackers run through it. */
  windowSeconds: number;
  guestOneGuesses: number;
  guestManyGuesses: number;
  guestManyUsernames: number;
  stuffingPairs: number;
  stuffingParallel: number;
  codeTargets: number;
  setupParallel: number;
};

function sizesFor(smoke: boolean): Sizes {
  return smoke
    ? {
        rounds: 1,
        office: 10,
        knownShare: 0.8,
        cgnat: 6,
        cgnatAddresses: 3,
        typists: 2,
        resets: 2,
        windowSeconds: 8,
        guestOneGuesses: 6,
        guestManyGuesses: 6,
        guestManyUsernames: 3,
        stuffingPairs: 40,
        stuffingParallel: 4,
        codeTargets: 1,
        setupParallel: 4,
      }
    : {
        rounds: 3,
        office: 200,
        knownShare: 0.8,
        cgnat: 300,
        cgnatAddresses: 3,
        typists: 20,
        resets: 20,
        windowSeconds: 120,
        guestOneGuesses: 60,
        guestManyGuesses: 60,
        guestManyUsernames: 10,
        stuffingPairs: 10_000,
        stuffingParallel: 8,
        codeTargets: 10,
        setupParallel: 4,
      };
}

/** A legitimate client retries a refusal at most this often, and waits at most this long for one. */
const MAX_RETRIES = 3;
const MAX_WAIT_SECONDS = 60;
/** The code spender's shape, as the issue found it: 3 wrong passwords, then 2 wrong codes on each pending sign-in. */
const CODE_SPENDER_PASSWORDS = 3;
const WRONG_CODES_PER_PENDING = 2;

// Documentation and shared ranges, through the trusted-proxy header.
const OFFICE_ADDRESS = "198.51.100.10";
const cgnatAddress = (n: number) => `100.64.0.${n + 1}`;
const homeAddress = (n: number) => `203.0.113.${(n % 250) + 1}`;
/** Setup only (registration, the earlier sign-in that left a device cookie): one address each, so no limit is met. */
const setupAddress = (n: number) => `100.100.${(n >> 8) & 255}.${n & 255}`;
const strangerAddress = (n: number) => `192.0.2.${(n % 250) + 1}`;
/** 198.18.0.0/15 (RFC 2544): stuffing pair `n`, an address of its own each. */
const stuffingAddress = (n: number) => `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;

type Person = {
  group: GroupId;
  email: string;
  password: string;
  /** The address the measured sign-in comes from. */
  address: string;
  /** Wrong passwords typed before the right one. */
  typos: number;
  /** Gatehouse: the device cookie of an earlier sign-in, kept in this person's jar. */
  knownDevice: boolean;
  /** Seconds into the window when this person starts. */
  startSeconds: number;
};

/** One legitimate sign-in as it went. */
type Episode = {
  group: GroupId;
  signedIn: boolean;
  /** Answers that refused the person (429, 503, a refused proof of work), retries included. */
  refusals: string[];
  /** Retry-After of each refusal, in seconds, as told (a refusal without one: 0). */
  waitsSeconds: number[];
  /** Asked for a code mailed to the owner on the way in. */
  mailedCode: boolean;
  /** Answers that came after the password hash (typos, and the sign-in that got in). */
  hashed: number;
  last: string;
};

/** A browser's cookies: what the sign-in page's browser would hold, one jar per person and device. */
class Jar {
  private readonly cookies = new Map<string, string>();
  constructor(readonly address: string) {}

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  take(reply: Reply): void {
    for (const cookie of reply.headers["set-cookie"] ?? []) {
      const [pair = ""] = cookie.split(";", 1);
      const at = pair.indexOf("=");
      if (at <= 0) continue;
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === "" || /max-age=0(;|$)/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The cookies of `other` whose names match: what a browser kept from an earlier visit. */
  adopt(other: Jar, names: RegExp): void {
    for (const [name, value] of other.cookies) if (names.test(name)) this.cookies.set(name, value);
  }

  has(pattern: RegExp): boolean {
    return [...this.cookies.keys()].some((name) => pattern.test(name));
  }
}

/** One try's answer, as the person's browser sees it. */
type Answer = {
  kind: "in" | "wrong" | "code" | "refused" | "error";
  label: string;
  /** Seconds the answer asked to wait (429 and 503), when it named them. */
  retryAfterSeconds?: number;
  /** The answer came after the password hash (a wrong password's 401, or a pending sign-in). */
  hashed: boolean;
};

const retryAfterOf = (reply: Reply): number | undefined => {
  const value = Number(reply.headers["retry-after"] ?? reply.headers["x-retry-after"] ?? Number.NaN);
  return Number.isFinite(value) ? value : undefined;
};

const refusedAnswer = (reply: Reply, what: string): Answer => ({
  kind: "refused",
  label: `${what} ${reply.status}${typeof jsonOf(reply).error === "string" ? ` ${String(jsonOf(reply).error)}` : ""}`,
  retryAfterSeconds: retryAfterOf(reply),
  hashed: false,
});

/** A contender as the drill drives it: Gatehouse's browser flow, or better-auth's JSON one. */
type Site = {
  label: string;
  register(person: Person, n: number): Promise<void>;
  /** The earlier sign-in that left the known device's cookie in `jar` (none for the peer: it has no device cookie). */
  enrol(person: Person, jar: Jar, n: number): Promise<void>;
  /** One try with `password`: (challenge, solve,) post, and for a pending sign-in the code mailed to the owner. */
  attempt(person: Person, jar: Jar, password: string): Promise<Answer>;
  /** "Forgot password", the mailed link, a new password: from `jar`. A refusal is the person's. */
  reset(person: Person, jar: Jar, newPassword: string): Promise<Answer>;
  /** A stranger's wrong password for `email` from `address`, with no cookie. */
  guess(address: string, email: string): Promise<Answer>;
  /** A stranger's wrong passwords for `email`, then wrong codes on the pending sign-ins they get: the guesses' answers and the codes sent. */
  spendCodes(address: string, email: string): Promise<{ guesses: Answer[]; codes: string[] }>;
  /** Password checks the server ran (Gatehouse's metrics); undefined where the server does not say. */
  passwordChecks(): Promise<number | undefined>;
  stop(): Promise<void>;
};

const WRONG = () => `wrong-${randomBytes(6).toString("hex")}`;

async function gatehouseSite(context: PartContext, root: string, label: string): Promise<Site> {
  const metricsToken = randomBytes(24).toString("hex");
  const server = await startServer(root, { ...DRILL_SETTINGS, METRICS_TOKEN: metricsToken }, context.say);
  const outbox = new Outbox(server.outboxDir);
  const usedMail = new Set<string>();
  const base = server.baseUrl;
  const origin = server.publicUrl;
  const challenge = async (jar: Jar): Promise<{ altcha: string } | { refused: Answer }> => {
    const reply = await request(base, {
      method: "GET",
      path: "/api/altcha/challenge",
      headers: { "x-forwarded-for": jar.address, cookie: jar.header() },
    });
    if (reply.status !== 200) return { refused: refusedAnswer(reply, "challenge") };
    return { altcha: await solve(JSON.parse(reply.text) as Challenge) };
  };
  const csrf = async (jar: Jar): Promise<string | Answer> => {
    const reply = await request(base, {
      method: "GET",
      path: "/api/auth/csrf",
      headers: { "x-forwarded-for": jar.address, cookie: jar.header() },
    });
    jar.take(reply);
    // A build since issue 56 has no token round trip: its CSRF rule is the post's Origin.
    if (reply.status === 404) return "";
    const token = jsonOf(reply).csrfToken;
    return reply.status === 200 && typeof token === "string" ? token : refusedAnswer(reply, "csrf");
  };
  const json = (jar: Jar, path: string, body: object) =>
    request(base, {
      method: "POST",
      path,
      headers: { "content-type": "application/json", "x-forwarded-for": jar.address, cookie: jar.header(), origin },
      body: JSON.stringify(body),
    });
  /** The sign-in form's post, its answer read as the page reads it. */
  const post = async (jar: Jar, email: string, password: string): Promise<Answer> => {
    const token = await csrf(jar);
    if (typeof token !== "string") return token;
    const solved = await challenge(jar);
    if ("refused" in solved) return solved.refused;
    const reply = await request(base, {
      method: "POST",
      path: SIGN_IN_PATH,
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header(), "x-forwarded-for": jar.address, origin },
      body: signInBody({ email, password, altcha: solved.altcha, csrfToken: token }),
    });
    jar.take(reply);
    const error = jsonOf(reply).error;
    if (reply.status === 200 && jar.has(/session-token$/)) return { kind: "in", label: "signed in", hashed: true };
    // Mailbox first (an address whose checks for new devices are spent): no password was checked.
    if (reply.status === 401 && error === "device_confirmation_required" && jsonOf(reply).mailboxFirst === true)
      return { kind: "code", label: "401 device_confirmation_required (mailbox first)", hashed: false };
    if (reply.status === 401 && error === "device_confirmation_required")
      return { kind: "code", label: "401 device_confirmation_required", hashed: true };
    if (reply.status === 401) return { kind: "wrong", label: `401 ${String(error ?? "")}`.trim(), hashed: true };
    return refusedAnswer(reply, "sign-in");
  };
  return {
    label,
    async register(person, n) {
      const address = setupAddress(n);
      const altcha = await solvedPayload(base, address);
      const reply = await request(base, {
        method: "POST",
        path: "/api/register",
        headers: { "content-type": "application/json", "x-forwarded-for": address },
        body: JSON.stringify({ email: person.email, password: person.password, altcha }),
      });
      if (reply.status >= 300) throw new Error(`registering ${person.email} answered ${reply.status}: ${reply.text.slice(0, 200)}`);
    },
    async enrol(person, jar, n) {
      const home = new Jar(setupAddress(n));
      const answer = await post(home, person.email, person.password);
      if (answer.kind !== "in") throw new Error(`the earlier sign-in of ${person.email} answered ${answer.label}`);
      // The device cookie the earlier sign-in left (its session has long ended): the jar the office sign-in starts with.
      jar.adopt(home, /gatehouse-device$/);
    },
    async attempt(person, jar, password) {
      const before = outbox.codesTo(person.email).length;
      const answer = await post(jar, person.email, password);
      if (answer.kind !== "code" || password !== person.password) return answer;
      const mailboxFirst = !answer.hashed;
      // The right password on a new device of an account at risk: the owner reads the code mailed
      // after they asked (a guest's earlier try may have mailed one too), as a person would.
      let code: string;
      try {
        code = await outbox.codeAfter(person.email, before);
      } catch {
        return { kind: "error", label: "no code mailed within 20 s", hashed: true };
      }
      const reply = await json(jar, "/api/auth/second-step", { code });
      jar.take(reply);
      if (reply.status === 200 && !mailboxFirst) return { kind: "in", label: "signed in with the mailed code", hashed: true };
      if (reply.status !== 200) return { ...refusedAnswer(reply, "mailed code"), hashed: !mailboxFirst };
      // The mailbox proved first: the page sends the same password again, from the known device the code made.
      const again = await post(jar, person.email, password);
      return again.kind === "in" ? { ...again, label: "signed in with the mailed code (mailbox first)" } : again;
    },
    async reset(person, jar, newPassword) {
      const solved = await challenge(jar);
      if ("refused" in solved) return solved.refused;
      const asked = await json(jar, "/api/password/forgot", { email: person.email, altcha: solved.altcha });
      if (asked.status !== 202) return refusedAnswer(asked, "forgot");
      const token = await outbox.linkToken(person.email, "password_reset", usedMail).catch(() => undefined);
      if (!token) return { kind: "error", label: "no reset mail within 20 s", hashed: false };
      const reply = await json(jar, "/api/password/reset", { token, password: newPassword });
      jar.take(reply);
      return reply.status === 200 ? { kind: "in", label: "reset", hashed: false } : refusedAnswer(reply, "reset");
    },
    guess: (address, email) => post(new Jar(address), email, WRONG()),
    async spendCodes(address, email) {
      const guesses: Answer[] = [];
      const codes: string[] = [];
      for (let i = 0; i < CODE_SPENDER_PASSWORDS; i++) {
        const altcha = await solvedPayload(base, address).catch(() => undefined);
        if (!altcha) {
          guesses.push({ kind: "refused", label: "challenge refused", hashed: false });
          continue;
        }
        const outcome = await tokenSignIn(base, { address, email, password: WRONG(), altcha });
        const hashed = outcome.status === 401;
        guesses.push({ kind: hashed ? "wrong" : "refused", label: `API ${outcome.status} ${outcome.error ?? ""}`.trim(), hashed });
        if (!outcome.confirmationToken) continue;
        for (let k = 0; k < WRONG_CODES_PER_PENDING; k++) {
          const code = String(100_000 + Math.floor(Math.random() * 900_000));
          const answered = await confirmDeviceByApi(base, address, outcome.confirmationToken, code);
          codes.push(`${answered.status} ${answered.error ?? ""}`.trim());
        }
      }
      return { guesses, codes };
    },
    async passwordChecks() {
      const reply = await request(base, { method: "GET", path: "/api/metrics", headers: { authorization: `Bearer ${metricsToken}` } });
      const match = /^gatehouse_password_check_seconds_count(?:\{[^}]*\})? (\S+)$/m.exec(reply.text);
      return match ? Number(match[1]) : undefined;
    },
    stop: () => server.stop(),
  };
}

const PEER_LABEL = "better-auth 1.7 + SQLite at its defaults (Argon2id at Gatehouse's parameters)";

async function peerSite(context: PartContext): Promise<Site> {
  const peer = await startPeer(context.root, context.say, "argon2id", { outbox: true });
  const outbox = new Outbox(peer.outboxDir!);
  const usedMail = new Set<string>();
  const json = (address: string, path: string, body: object) =>
    request(peer.baseUrl, {
      method: "POST",
      path,
      headers: { "content-type": "application/json", "x-forwarded-for": address, origin: peer.baseUrl },
      body: JSON.stringify(body),
    });
  const post = async (address: string, email: string, password: string): Promise<Answer> => {
    const reply = await json(address, "/api/auth/sign-in/email", { email, password });
    if (reply.status === 200) return { kind: "in", label: "signed in", hashed: true };
    if (reply.status === 401) return { kind: "wrong", label: "401", hashed: true };
    return refusedAnswer(reply, "sign-in");
  };
  const resetToken = (mail: OutboxMail) => /\/reset-password\/([^?#]+)/.exec(mail.text)?.[1];
  return {
    label: PEER_LABEL,
    async register(person, n) {
      const reply = await json(setupAddress(n), "/api/auth/sign-up/email", {
        email: person.email,
        password: person.password,
        name: "Staff",
      });
      if (reply.status !== 200) throw new Error(`peer sign-up of ${person.email} answered ${reply.status}`);
    },
    async enrol(person, _jar, n) {
      const answer = await post(setupAddress(n), person.email, person.password);
      if (answer.kind !== "in") throw new Error(`the peer's earlier sign-in of ${person.email} answered ${answer.label}`);
    },
    attempt: (person, jar, password) => post(jar.address, person.email, password),
    async reset(person, jar, newPassword) {
      const asked = await json(jar.address, "/api/auth/request-password-reset", { email: person.email, redirectTo: "/reset-password" });
      if (asked.status !== 200) return refusedAnswer(asked, "forgot");
      const token = await outbox.await(person.email, "password_reset", usedMail, resetToken).catch(() => undefined);
      if (!token) return { kind: "error", label: "no reset mail within 20 s", hashed: false };
      const reply = await json(jar.address, "/api/auth/reset-password", { token, newPassword });
      return reply.status === 200 ? { kind: "in", label: "reset", hashed: false } : refusedAnswer(reply, "reset");
    },
    guess: (address, email) => post(address, email, WRONG()),
    async spendCodes(address, email) {
      // No emailed-code step at its defaults: the stranger's wrong passwords are all it can send.
      const guesses: Answer[] = [];
      for (let i = 0; i < CODE_SPENDER_PASSWORDS; i++) guesses.push(await post(address, email, WRONG()));
      return { guesses, codes: [] };
    },
    passwordChecks: async () => undefined,
    stop: () => peer.stop(),
  };
}

/**
 * One person's sign-in as a browser makes it: the typos first (each answered, as a person reads the
 * answer before typing again), then the right password; a refusal (429, 503, a refused proof of
 * work) is waited out as told and the same try made again, at most MAX_RETRIES times over the
 * whole sign-in; a wait longer than MAX_WAIT_SECONDS ends it (the wait is still recorded).
 */
async function signInAsPerson(site: Site, person: Person, jar: Jar): Promise<Episode> {
  const episode: Episode = { group: person.group, signedIn: false, refusals: [], waitsSeconds: [], mailedCode: false, hashed: 0, last: "" };
  let retries = 0;
  const passwords = [...Array.from({ length: person.typos }, () => WRONG()), person.password];
  let resetPending = person.group === "reset";
  for (let i = 0; i < passwords.length;) {
    let answer: Answer;
    try {
      if (resetPending) {
        // The reset happens in another browser (the phone that opened the mail): it keeps that device.
        const phone = new Jar(jar.address);
        const newPassword = `pw-${randomBytes(15).toString("base64url")}`;
        answer = await site.reset(person, phone, newPassword);
        if (answer.kind === "in") {
          person.password = newPassword;
          passwords[passwords.length - 1] = newPassword;
          resetPending = false;
          continue;
        }
      } else {
        answer = await site.attempt(person, jar, passwords[i]!);
      }
    } catch (error) {
      answer = { kind: "error", label: error instanceof Error ? error.message.slice(0, 80) : "error", hashed: false };
    }
    episode.last = answer.label;
    if (answer.hashed) episode.hashed++;
    if (answer.kind === "in") {
      episode.signedIn = true;
      episode.mailedCode = answer.label.includes("mailed code");
      return episode;
    }
    if (answer.kind === "wrong" || answer.kind === "code") {
      // A typo's answer (a wrong password, or a pending sign-in that waits for a code never sent).
      if (i < passwords.length - 1) {
        i++;
        continue;
      }
      return episode;
    }
    if (answer.kind === "error") return episode;
    episode.refusals.push(answer.label);
    const wait = answer.retryAfterSeconds ?? 0;
    episode.waitsSeconds.push(wait);
    if (retries++ >= MAX_RETRIES || wait > MAX_WAIT_SECONDS) return episode;
    await sleep(Math.max(1, wait) * 1000);
  }
  return episode;
}

type AttackerFigures = { sent: number; hashed: number; answers: string[]; codes: string[] };
type RoundFigures = {
  site: string;
  round: number;
  episodes: Episode[];
  attackers: Record<AttackerId, AttackerFigures>;
  /** Password checks the server counted during the window, and those the legitimate people's answers account for. */
  serverChecks?: number;
  legitimateChecks: number;
  windowSeconds: number;
};

function population(size: Sizes, tag: string): Person[] {
  const random = seededRandom(55);
  const people: Person[] = [];
  const start = () => random() * size.windowSeconds;
  const add = (group: GroupId, n: number, address: string, typos: number, knownDevice: boolean) =>
    people.push({
      group,
      // Lower case: the server keeps addresses normalised, and its mail names them so.
      email: `${group.toLowerCase()}-${n}-${tag}@example.com`,
      password: `pw-${randomBytes(15).toString("base64url")}`,
      address,
      typos,
      knownDevice,
      startSeconds: start(),
    });
  const known = Math.round(size.office * size.knownShare);
  for (let n = 0; n < size.office; n++) add(n < known ? "known" : "firstDay", n, OFFICE_ADDRESS, 0, n < known);
  for (let n = 0; n < size.cgnat; n++) add("cgnat", n, cgnatAddress(n % size.cgnatAddresses), 0, false);
  // Half the typists on the device they always use, half on a new one; one typo or two.
  for (let n = 0; n < size.typists; n++) add("typist", n, homeAddress(n), 1 + (n % 2), n % 2 === 0);
  for (let n = 0; n < size.resets; n++) add("reset", n, homeAddress(size.typists + n), 0, false);
  return people;
}

async function runRound(context: PartContext, site: Site, size: Sizes, round: number): Promise<RoundFigures> {
  const tag = `${round}-${randomBytes(3).toString("hex")}`;
  const people = population(size, tag);
  const jars = people.map((person) => new Jar(person.address));
  context.say(`${site.label}: registering ${people.length} people and their earlier sign-ins`);
  const setupDeadline = Date.now() + 15 * 60_000;
  await pool(people.length, size.setupParallel, setupDeadline, async (n) => {
    const person = people[n]!;
    await site.register(person, n);
    if (person.knownDevice) await site.enrol(person, jars[n]!, people.length + n);
  });

  const staff = people.filter((person) => person.group === "known" || person.group === "firstDay");
  const codeTargets = [
    ...people.filter((person) => person.group === "reset").slice(0, Math.ceil(size.codeTargets / 2)),
    ...people.filter((person) => person.group === "cgnat").slice(0, Math.floor(size.codeTargets / 2)),
  ];
  // The stuffing list: every account of the population once, with a password leaked elsewhere, and
  // the rest usernames this site never had.
  const listed = [...people.map((person) => person.email)];
  while (listed.length < size.stuffingPairs) listed.push(`leaked-${listed.length}-${tag}@example.org`);
  const shuffle = seededRandom(13);
  for (let i = listed.length - 1; i > 0; i--) {
    const k = Math.floor(shuffle() * (i + 1));
    [listed[i], listed[k]] = [listed[k]!, listed[i]!];
  }

  const attackers: Record<AttackerId, AttackerFigures> = {
    guestOne: { sent: 0, hashed: 0, answers: [], codes: [] },
    guestMany: { sent: 0, hashed: 0, answers: [], codes: [] },
    stuffing: { sent: 0, hashed: 0, answers: [], codes: [] },
    codes: { sent: 0, hashed: 0, answers: [], codes: [] },
  };
  const count = (id: AttackerId, answer: Answer) => {
    attackers[id].sent++;
    if (answer.hashed) attackers[id].hashed++;
    attackers[id].answers.push(answer.label);
  };
  const safely = (work: Promise<Answer>): Promise<Answer> =>
    work.catch((error: unknown) => ({
      kind: "error",
      label: error instanceof Error ? error.message.slice(0, 60) : "error",
      hashed: false,
    }));

  const checksBefore = await site.passwordChecks();
  context.say(`${site.label}: ${people.length} people sign in over ${size.windowSeconds} s while the attackers run`);
  const startedMs = Date.now();
  const windowEndMs = startedMs + size.windowSeconds * 1000;
  const paced = async (guesses: number, guess: (n: number) => Promise<void>) => {
    for (let n = 0; n < guesses && Date.now() < windowEndMs; n++) {
      await sleep(startedMs + (n * size.windowSeconds * 1000) / guesses - Date.now());
      await guess(n);
    }
  };
  const oneTarget = staff.find((person) => person.group === "known") ?? staff[0]!;
  // Spread over the staff list: known devices and first-day staff alike.
  const manyTargets = Array.from(
    { length: size.guestManyUsernames },
    (_, i) => staff[Math.floor(((i + 0.5) * staff.length) / size.guestManyUsernames)]!,
  );
  const attacks = [
    paced(size.guestOneGuesses, async () => count("guestOne", await safely(site.guess(OFFICE_ADDRESS, oneTarget.email)))),
    paced(size.guestManyGuesses, async (n) =>
      count("guestMany", await safely(site.guess(OFFICE_ADDRESS, manyTargets[n % manyTargets.length]!.email))),
    ),
    pool(listed.length, size.stuffingParallel, windowEndMs, async (n) =>
      count("stuffing", await safely(site.guess(stuffingAddress(n + 1), listed[n]!))),
    ),
    (async () => {
      for (const [n, target] of codeTargets.entries()) {
        const spent = await site.spendCodes(strangerAddress(n), target.email).catch(() => ({ guesses: [], codes: [] }));
        for (const guess of spent.guesses) count("codes", guess);
        attackers.codes.codes.push(...spent.codes);
      }
    })(),
  ];
  const episodes = await Promise.all(
    people.map(async (person, n) => {
      await sleep(startedMs + person.startSeconds * 1000 - Date.now());
      return signInAsPerson(site, person, jars[n]!);
    }),
  );
  await Promise.all(attacks);
  const checksAfter = await site.passwordChecks();
  const legitimateChecks = episodes.reduce((sum, episode) => sum + episode.hashed, 0);
  return {
    site: site.label,
    round,
    episodes,
    attackers,
    serverChecks: checksBefore !== undefined && checksAfter !== undefined ? checksAfter - checksBefore : undefined,
    legitimateChecks,
    windowSeconds: (Date.now() - startedMs) / 1000,
  };
}

const refusedFirst = (episode: Episode) => episode.refusals.length > 0;
const delayed = (episode: Episode) => episode.signedIn && episode.refusals.length > 0;
const longestWait = (episodes: readonly Episode[]) => Math.max(0, ...episodes.flatMap((episode) => episode.waitsSeconds));
/** The first-day goal: in on the first try, or after one wait of at most 10 s. */
const firstDayOk = (episode: Episode) =>
  episode.signedIn && (episode.refusals.length === 0 || (episode.waitsSeconds.length === 1 && episode.waitsSeconds[0]! <= 10));

function groupRows(results: readonly RoundFigures[]): string[][] {
  const sites = [...new Set(results.map((result) => result.site))];
  return sites.flatMap((site) =>
    GROUPS.map((group) => {
      const rounds = results
        .filter((result) => result.site === site)
        .map((result) => result.episodes.filter((episode) => episode.group === group.id));
      const over = (pick: (episodes: Episode[]) => number, format: (value: number) => string = fmt.int) => range(rounds.map(pick), format);
      const n = rounds[0]?.length ?? 0;
      return [
        group === GROUPS[0] ? site : "",
        `${group.label} (${fmt.int(n)})`,
        `**${over((episodes) => episodes.filter(refusedFirst).length)}**`,
        over((episodes) => episodes.filter(delayed).length),
        over(
          (episodes) => longestWait(episodes),
          (value) => `${fmt.int(value)} s`,
        ),
        `**${over((episodes) => episodes.filter((episode) => !episode.signedIn).length)}**`,
        over((episodes) => episodes.filter((episode) => episode.mailedCode).length),
      ];
    }),
  );
}

function attackerRows(results: readonly RoundFigures[]): string[][] {
  const sites = [...new Set(results.map((result) => result.site))];
  return sites.flatMap((site) => {
    const of = results.filter((result) => result.site === site);
    return ATTACKERS.map((attacker, i) => [
      i === 0 ? site : "",
      attacker.label,
      range(
        of.map((result) => result.attackers[attacker.id].sent),
        fmt.int,
      ),
      `**${range(
        of.map((result) => result.attackers[attacker.id].hashed),
        fmt.int,
      )}**`,
      attacker.id === "codes"
        ? of[0]!.attackers.codes.codes.length === 0 && of.every((result) => result.attackers.codes.codes.length === 0)
          ? "no emailed-code step"
          : range(
              of.map((result) => result.attackers.codes.codes.length),
              fmt.int,
            )
        : "",
    ]);
  });
}

type Goal = { text: string; met: boolean | undefined };

function goals(results: readonly RoundFigures[], gatehouseLabel: string, compareLabel: string | undefined): Goal[] {
  const ours = results.filter((result) => result.site === gatehouseLabel);
  const known = ours.flatMap((result) => result.episodes.filter((episode) => episode.group === "known"));
  const firstDay = ours.flatMap((result) => result.episodes.filter((episode) => episode.group === "firstDay"));
  const attack: Goal = { text: "", met: undefined };
  if (compareLabel) {
    const before = results.filter((result) => result.site === compareLabel);
    const worse = ATTACKERS.filter((attacker) =>
      ours.some((result) => {
        const reference = before.find((other) => other.round === result.round)?.attackers[attacker.id].hashed;
        return reference !== undefined && result.attackers[attacker.id].hashed > reference;
      }),
    );
    attack.met = worse.length === 0;
    attack.text = `Attacker guesses reaching Argon2id no more than the compared build's in the same round: ${attack.met ? "**met**" : `**not met** (${worse.map((attacker) => attacker.label).join("; ")})`}.`;
  } else {
    attack.text =
      "Attacker guesses reaching Argon2id no more than today's: **not judged** in this run (no `--compare DIR`: run it with a checkout of the build before the change to put both side by side).";
  }
  const knownRefused = known.filter(refusedFirst).length;
  const firstDayMissed = firstDay.filter((episode) => !firstDayOk(episode)).length;
  return [
    {
      text: `Known-device sign-ins refused: ${fmt.int(knownRefused)} over ${fmt.int(ours.length)} round(s) (goal 0): ${knownRefused === 0 ? "**met**" : "**not met**"}.`,
      met: knownRefused === 0,
    },
    {
      text: `First-day staff not in on the first try or after one wait ≤ 10 s: ${fmt.int(firstDayMissed)} of ${fmt.int(firstDay.length)} over ${fmt.int(ours.length)} round(s) (goal 0): ${firstDayMissed === 0 ? "**met**" : "**not met**"}.`,
      met: firstDayMissed === 0,
    },
    attack,
  ];
}

async function drill(context: PartContext): Promise<PartReport> {
  const size = sizesFor(context.smoke);
  const gatehouseLabel = "Gatehouse (this build, defaults)";
  const compareLabel = context.compare ? `Gatehouse at ${context.compare.commit} (--compare)` : undefined;
  const starters: { label: string; start: () => Promise<Site> }[] = [
    { label: gatehouseLabel, start: () => gatehouseSite(context, context.root, gatehouseLabel) },
    ...(context.compare && compareLabel
      ? [{ label: compareLabel, start: () => gatehouseSite(context, context.compare!.root, compareLabel) }]
      : []),
    { label: PEER_LABEL, start: () => peerSite(context) },
  ];
  const results: RoundFigures[] = [];
  for (let round = 0; round < size.rounds; round++) {
    // The order flips every round, so no contender always runs first (or last) on the shared machine.
    const order = round % 2 === 0 ? starters : [...starters].reverse();
    for (const starter of order) {
      context.say(`round ${round + 1}/${size.rounds}: ${starter.label}`);
      const site = await starter.start();
      try {
        const result = await runRound(context, site, size, round);
        results.push(result);
        const known = result.episodes.filter((episode) => episode.group === "known");
        context.say(
          `${site.label}, round ${round + 1}: signed in ${result.episodes.filter((episode) => episode.signedIn).length}/${result.episodes.length}, refused at least once ${result.episodes.filter(refusedFirst).length} (known devices ${known.filter(refusedFirst).length}), longest wait ${longestWait(result.episodes)} s; attackers' guesses that reached the hash ${ATTACKERS.map((attacker) => `${attacker.id} ${result.attackers[attacker.id].hashed}/${result.attackers[attacker.id].sent}`).join(", ")}`,
        );
      } finally {
        await site.stop();
      }
    }
  }

  const goalLines = goals(results, gatehouseLabel, compareLabel);
  const gatehouseChecks = results.filter((result) => result.serverChecks !== undefined);
  const markdown = [
    `What this part measures: **precision**, the people a deployment serves beside the attackers it must stop, at the same time, against Gatehouse (\`node server.mjs\`, production build, fresh PGlite database, every limit at its default, \`ALTCHA_MAX_COUNTER=${DRILL_SETTINGS.ALTCHA_MAX_COUNTER}\`, mail to the outbox folder)${compareLabel ? `, the \`--compare\` checkout's build started the same way` : ""} and better-auth 1.7 at its defaults (bench/peer/server.mjs: its in-memory limiter, 3 sign-ins per 10 s per address, Argon2id at Gatehouse's parameters, reset mail on). ${size.rounds} round(s); in each, every contender once on a fresh server, one after another, in an order that flips every round.`,
    "",
    `**The people** (every address through the trusted-proxy header; setup, not measured: each registers from an address of its own, and those with a known device signed in once before from another, keeping the cookie jar): an office of ${fmt.int(size.office)} staff behind one address (${OFFICE_ADDRESS}), ${fmt.int(Math.round(size.office * size.knownShare))} with a device cookie from that earlier sign-in and ${fmt.int(size.office - Math.round(size.office * size.knownShare))} on their first day; a CGNAT carrier, ${fmt.int(size.cgnat)} unrelated people over ${size.cgnatAddresses} addresses, no device cookie; ${fmt.int(size.typists)} owners at home who type a wrong password once or twice (half each) before the right one, half on the device they always use; ${fmt.int(size.resets)} owners at home who reset their password first (\"forgot password\", the link read from the mailed message, a new password, in one browser) and then sign in from another browser with no cookie. Each starts at a moment drawn evenly over ${size.windowSeconds} s and behaves as the sign-in page's browser: CSRF token, challenge (\`GET /api/altcha/challenge\`), solve, \`POST /api/auth/callback/credentials\`; a pending device confirmation is finished with the code read from the outbox (\`POST /api/auth/second-step\`), and one answered mailbox first is then sent again with the same password from the device the code made. Any 429 or 503 (or a refused proof of work) is waited out as its Retry-After (better-auth: X-Retry-After) tells, and the same try made again, at most ${MAX_RETRIES} times a sign-in; a wait over ${MAX_WAIT_SECONDS} s ends it (its length is still the one recorded). better-auth's people post \`/api/auth/sign-in/email\` (it has no proof of work, device cookie or emailed code).`,
    "",
    `**The attackers**, through the same ${size.windowSeconds} s: a guest at the office's own address guessing ${fmt.int(size.guestOneGuesses)} wrong passwords at one known-device member of staff and ${fmt.int(size.guestManyGuesses)} across ${size.guestManyUsernames} staff usernames (each paced evenly over the window, challenge solved, no cookie); credential stuffing, up to ${fmt.int(size.stuffingPairs)} pairs each from an address of its own (198.18/15), ${size.stuffingParallel} in flight until the window ends, every account of the population once with a wrong password and the rest usernames the site never had; and a stranger spending emailed-code tries on ${size.codeTargets} owners (half of them owners after a reset, half CGNAT users): ${CODE_SPENDER_PASSWORDS} wrong passwords through the token API, then ${WRONG_CODES_PER_PENDING} wrong codes on each pending sign-in they got (better-auth has no such step: its stranger sends the wrong passwords only). **Reached Argon2id**: an attacker's answer that came after the hash (a 401, or a pending sign-in, except one answered mailbox first, which checks no password; Gatehouse's own count of checks is below the tables).`,
    "",
    "**Refused**: the person met at least one refusal (429, 503 or a refused proof of work) on the way. **Delayed**: refused, then in after waiting as told. **Never in**: not in after the retries (or a wait over the cap). **Mailed code**: got in through a code mailed to the owner.",
    "",
    table(["Contender", "Group (people)", "Refused", "Delayed", "Longest wait", "Never in", "Mailed code"], groupRows(results)),
    "",
    table(["Contender", "Attacker", "Guesses sent", "Reached Argon2id", "Wrong codes sent"], attackerRows(results)),
    "",
    "**Goals** (Gatehouse, this build):",
    ...goalLines.map((goal) => `- ${goal.text}`),
    "",
    ...results.map(
      (result) =>
        `- ${result.site}, round ${result.round + 1} (${fmt.fixed(result.windowSeconds, 0)} s until the last sign-in ended): answers that refused people ${tally(result.episodes.flatMap((episode) => episode.refusals)) || "none"}; last answers of those never in ${tally(result.episodes.filter((episode) => !episode.signedIn).map((episode) => episode.last)) || "none"}; wrong codes answered ${tally(result.attackers.codes.codes) || "none sent"}; the guest's answers (one account) ${tally(result.attackers.guestOne.answers)}.`,
    ),
    ...(gatehouseChecks.length > 0
      ? [
          `- Gatehouse's own count (\`gatehouse_password_check_seconds_count\` at /api/metrics, over each window): ${gatehouseChecks.map((result) => `${result.site}, round ${result.round + 1}: ${fmt.int(result.serverChecks!)} checks, of which the people's answers account for ${fmt.int(result.legitimateChecks)}`).join("; ")}.`,
        ]
      : []),
  ].join("\n");

  const ours = results.filter((result) => result.site === gatehouseLabel);
  const theirs = results.filter((result) => result.site === PEER_LABEL);
  const summary = (of: readonly RoundFigures[]) =>
    `refused ${range(
      of.map((result) => result.episodes.filter(refusedFirst).length),
      fmt.int,
    )}, never in ${range(
      of.map((result) => result.episodes.filter((episode) => !episode.signedIn).length),
      fmt.int,
    )} of ${fmt.int(of[0]?.episodes.length ?? 0)}, longest wait ${range(
      of.map((result) => longestWait(result.episodes)),
      (value) => `${fmt.int(value)} s`,
    )}, attackers' guesses reaching the hash ${range(
      of.map((result) => ATTACKERS.reduce((sum, attacker) => sum + result.attackers[attacker.id].hashed, 0)),
      fmt.int,
    )}`;
  return {
    markdown,
    headlines: [
      `Precision (office of ${fmt.int(size.office)} behind one address, CGNAT, typists, owners after a reset, beside a guest, stuffing and a code spender): Gatehouse ${summary(ours)}; better-auth ${summary(theirs)}; ${goalLines.map((goal) => goal.text.replace(/\*\*/g, "")).join(" ")}`,
    ],
  };
}

export const precisionPart: Part = {
  id: "precision",
  title: PART_TITLES.precision,
  run: (context) => drill(context),
};
