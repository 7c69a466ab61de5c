import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { adminRequestSchema, type AdminReply, type AdminRequest } from "@/lib/ops/admin-request";

/**
 * The running instance's admin channel on the embedded database (docs/decisions/0024): a Unix
 * socket in a private folder beside the PGlite folder and its lock (`.data/pglite.admin/admin.sock`
 * by default). The folder is 0700 and the socket 0600, so only the instance's own OS user can
 * connect; nothing listens on the network and no token exists to leak.
 */
export function adminSocketPath(dataDir: string): string {
  return path.join(`${dataDir}.admin`, "admin.sock");
}

/** A request is one JSON line; anything longer is not one the command line sends. */
const MAX_REQUEST_BYTES = 16 * 1024;
/** A connection that sends no whole request by then is closed: it holds nothing for long. */
const REQUEST_TIMEOUT_MS = 5_000;
/** Linux's sun_path holds 108 bytes with the terminating NUL; macOS's 104. */
const MAX_SOCKET_PATH_BYTES = 103;
/** The command line's wait for the instance's answer (a delete-user on a big account included). */
const REPLY_TIMEOUT_MS = 120_000;

export type AdminChannelServer = { path: string; close(): Promise<void> };

/**
 * Listens on the data folder's admin socket and answers each request with `handle`. Returns null
 * (and says why through `warn`) when the socket cannot be made private; the instance runs on, and
 * the command line then finds the folder locked and says so.
 */
export async function openAdminChannel(
  dataDir: string,
  handle: (request: AdminRequest) => Promise<AdminReply>,
  warn: (message: string) => void,
): Promise<AdminChannelServer | null> {
  const socketPath = adminSocketPath(dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    warn(`the admin socket's path ${socketPath} is longer than a Unix socket allows: npm run admin needs the instance stopped`);
    return null;
  }
  const folder = path.dirname(socketPath);
  try {
    privateFolder(folder);
    // This process holds the data folder's lock, so a socket left here is a killed instance's.
    fs.rmSync(socketPath, { force: true });
  } catch (error) {
    warn(
      `the admin socket's folder ${folder} is not private to this user (${(error as Error).message}): npm run admin needs the instance stopped`,
    );
    return null;
  }
  const server = net.createServer((socket) => serveConnection(socket, handle));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    // The folder already keeps everyone else out; the socket's own mode says the same to a reader.
    fs.chmodSync(socketPath, 0o600);
  } catch (error) {
    server.close();
    warn(`the admin socket ${socketPath} could not be opened (${(error as Error).message}): npm run admin needs the instance stopped`);
    return null;
  }
  return {
    path: socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        fs.rmSync(socketPath, { force: true });
      }),
  };
}

/** Creates `folder` as 0700, or accepts it only if it is a real folder of this user's with no access for others. */
function privateFolder(folder: string): void {
  try {
    fs.mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stats = fs.lstatSync(folder);
  if (!stats.isDirectory()) throw new Error("not a folder");
  if (process.getuid && stats.uid !== process.getuid()) throw new Error(`owned by uid ${stats.uid}`);
  if ((stats.mode & 0o077) !== 0) fs.chmodSync(folder, 0o700);
}

function serveConnection(socket: net.Socket, handle: (request: AdminRequest) => Promise<AdminReply>): void {
  let received = "";
  let answered = false;
  socket.setEncoding("utf8");
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: string) => {
    if (answered) return;
    received += chunk;
    if (Buffer.byteLength(received) > MAX_REQUEST_BYTES) return reply({ ok: false, message: "The request is too long." });
    const end = received.indexOf("\n");
    if (end === -1) return;
    answered = true;
    socket.setTimeout(0);
    let request: AdminRequest;
    try {
      request = adminRequestSchema.parse(JSON.parse(received.slice(0, end)));
    } catch {
      return reply({ ok: false, message: "The request is not one npm run admin sends." });
    }
    handle(request).then(reply, (error: unknown) => reply({ ok: false, message: `Failed: ${(error as Error).message}` }));
  });

  function reply(answer: AdminReply): void {
    answered = true;
    if (!socket.destroyed) socket.end(`${JSON.stringify(answer)}\n`);
  }
}

/**
 * Asks the instance running on `dataDir` to run `request`. Null when none listens there (no
 * socket, or one a killed instance left): the caller opens the database itself.
 */
export function askRunningInstance(dataDir: string, request: AdminRequest): Promise<AdminReply | null> {
  const socketPath = adminSocketPath(dataDir);
  return new Promise((resolve, reject) => {
    let received = "";
    const socket = net.connect(socketPath);
    socket.setEncoding("utf8");
    socket.setTimeout(REPLY_TIMEOUT_MS, () =>
      socket.destroy(new Error(`the running instance did not answer within ${REPLY_TIMEOUT_MS / 1000} s`)),
    );
    socket.once("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => (received += chunk));
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") return resolve(null);
      if (error.code === "EACCES") {
        return reject(
          new Error(`The running instance's admin socket ${socketPath} refuses this user: run the command as the instance's own user.`),
        );
      }
      reject(error);
    });
    socket.once("end", () => {
      try {
        const answer = JSON.parse(received) as AdminReply;
        resolve({ ok: answer.ok === true, message: String(answer.message) });
      } catch {
        reject(new Error("The running instance's answer was cut off."));
      }
    });
  });
}
