/**
 * What a failure says, for a log line or an operator: its message only. A stack or a driver's
 * fields (a query's parameters, a row's values) can carry what a log must not.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
