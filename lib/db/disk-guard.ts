import { statfs } from "node:fs/promises";

/**
 * The embedded database's disk, one threshold for everything (issue 59: readiness said 503 at 64
 * MiB free while the instance still served). Below DISK_MIN_FREE_MB the start refuses
 * (checkDataFolder), readiness answers 503, and requests that may write are answered 503
 * `unavailable` (cause disk) before PGlite meets a full disk, which aborts it until a restart.
 * Below twice that, a warning: one log line as the disk crosses it, and the gauge.
 */

export type DiskState = "ok" | "low" | "full";

export type DiskReading = {
  freeBytes: number;
  /** DISK_MIN_FREE_MB: readiness and writes stop below it. */
  minFreeBytes: number;
  /** Twice that: the warning. */
  warnBelowBytes: number;
  state: DiskState;
};

export type DiskLogger = { warn(entry: object): void; error(entry: object): void; info(entry: object): void };

/** Free bytes for an unprivileged writer on the filesystem holding `folder`. */
export async function freeBytes(folder: string): Promise<number> {
  const stats = await statfs(folder);
  return stats.bavail * stats.bsize;
}

export function diskState(free: number, minFreeBytes: number): DiskState {
  if (free < minFreeBytes) return "full";
  return free < 2 * minFreeBytes ? "low" : "ok";
}

export class DiskGuard {
  private reading: DiskReading | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly minFreeBytes: number,
    private readonly log: DiskLogger,
    private readonly onReading: (reading: DiskReading) => void = () => {},
    private readonly measure: (folder: string) => Promise<number> = freeBytes,
  ) {}

  /** Measures now (a folder that cannot be read counts as full: nothing can be written there either). */
  async sample(): Promise<DiskReading> {
    const free = await this.measure(this.dataDir).catch(() => 0);
    const reading: DiskReading = {
      freeBytes: free,
      minFreeBytes: this.minFreeBytes,
      warnBelowBytes: 2 * this.minFreeBytes,
      state: diskState(free, this.minFreeBytes),
    };
    const before = this.reading?.state ?? "ok";
    this.reading = reading;
    this.onReading(reading);
    if (reading.state !== before) this.tell(before, reading);
    return reading;
  }

  /** Whether requests that may write are refused now (the last reading was below DISK_MIN_FREE_MB). */
  refusing(): boolean {
    return this.reading?.state === "full";
  }

  private tell(before: DiskState, reading: DiskReading): void {
    const figures = { freeBytes: reading.freeBytes, minFreeBytes: reading.minFreeBytes, folder: this.dataDir };
    if (reading.state === "full")
      this.log.error({
        event: "disk_space_refusing",
        ...figures,
        effect: "readiness answers 503 and requests that may write are answered 503 unavailable until space is freed",
      });
    else if (reading.state === "low")
      this.log.warn({
        event: "disk_space_low",
        ...figures,
        effect: `at DISK_MIN_FREE_MB readiness answers 503 and writes are refused; ${before === "full" ? "writes are served again" : "free some space"}`,
      });
    else this.log.info({ event: "disk_space_ok", ...figures });
  }
}
