import { gunzipSync, gzipSync } from "node:zlib";

const BLOCK = 512;

/**
 * A copy of a PGlite backup (gzipped tar) with one 8 KiB page of one relation file overwritten,
 * as a disk fault or a bad copy would: the tar and gzip stay valid, only the page is garbage.
 * `file` is the relation's path inside the data folder (pg_relation_filepath), e.g. base/5/16394.
 */
export function damagePage(backup: Buffer, file: string, page: number, pageSize = 8192): Buffer {
  const tar = Buffer.from(gunzipSync(backup));
  for (let offset = 0; offset + BLOCK <= tar.length;) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const name = `${cString(header.subarray(345, 500))}${cString(header.subarray(345, 500)) ? "/" : ""}${cString(header.subarray(0, 100))}`;
    const size = parseInt(cString(header.subarray(124, 136)).trim() || "0", 8);
    const data = offset + BLOCK;
    if (name.endsWith(`/${file}`) || name === file) {
      if ((page + 1) * pageSize > size) throw new Error(`${file} has ${size / pageSize} pages; page ${page} does not exist`);
      tar.fill(0xa5, data + page * pageSize, data + (page + 1) * pageSize);
      return gzipSync(tar);
    }
    offset = data + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error(`${file} is not in the backup`);
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("latin1");
}
