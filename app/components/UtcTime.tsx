/** A moment as people read it (UTC, to the second), machine-readable in dateTime. */
export function UtcTime({ at }: { at: Date }) {
  return <time dateTime={at.toISOString()}>{`${at.toISOString().slice(0, 19).replace("T", " ")} UTC`}</time>;
}
