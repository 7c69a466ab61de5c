import fs from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/** Only the owner: the folder holds password hashes, sealed TOTP secrets and token digests. */
const OTHERS = 0o077;
export const PRIVATE_FOLDER_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Makes `dir` and everything under it the owner's alone (folders 0700, files 0600), whoever made
 * them: an operator's `mkdir` (0755), an older Gatehouse, PGlite's initdb, a restore. Only what is
 * open to others is changed, so an open that finds it private costs one lstat per file.
 */
export function keepPrivate(dir: string): void {
  const tighten = (entry: string) => {
    const stats = fs.lstatSync(entry);
    if (stats.isSymbolicLink() || (stats.mode & OTHERS) === 0) return;
    fs.chmodSync(entry, stats.isDirectory() ? PRIVATE_FOLDER_MODE : PRIVATE_FILE_MODE);
  };
  tighten(dir);
  for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) tighten(path.join(dir, name));
}

type ModeOps = { setattr?: (node: unknown, attr: { mode?: number }) => unknown; mknod?: (...args: unknown[]) => unknown };

/**
 * PGlite's file system on a folder, writing what it creates for the owner alone. Emscripten's
 * NODEFS creates every file 0666 by an explicit chmod, past the process's umask, so the modes are
 * stripped where it sets them (its mknod and setattr). Should a PGlite upgrade move them, the
 * folder stays 0700 (keepPrivate) and lib/db/adapters.test.ts fails on the files' modes.
 */
export class PrivateNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS["init"]>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun ?? [];
    result.emscriptenOpts.preRun = [
      ...preRun,
      (module: { NODEFS?: { node_ops?: ModeOps; stream_ops?: ModeOps } }) => {
        const nodefs = module.NODEFS;
        for (const ops of [nodefs?.node_ops, nodefs?.stream_ops]) {
          const setattr = ops?.setattr;
          if (ops && setattr)
            ops.setattr = (node, attr) => setattr.call(ops, node, attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~OTHERS });
        }
        const mknod = nodefs?.node_ops?.mknod;
        if (nodefs?.node_ops && mknod)
          nodefs.node_ops.mknod = (parent, name, mode, dev) =>
            mknod.call(nodefs.node_ops, parent, name, typeof mode === "number" ? mode & ~OTHERS : mode, dev);
      },
    ];
    return result;
  }
}
