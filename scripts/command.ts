import { messageOf } from "@/lib/log/message";

/**
 * Runs an operator's command: its message on stdout and exit 0, or the refusal on stderr and exit
 * 1. `Expected` errors are the command's own refusals, shown as they are; anything else is prefixed.
 */
export function runCommand(main: () => Promise<string>, expected: new (...args: never[]) => Error): void {
  main().then(
    (message) => {
      console.log(message);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error instanceof expected ? error.message : `Failed: ${messageOf(error)}`);
      process.exit(1);
    },
  );
}
