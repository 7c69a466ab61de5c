import { pageMessages } from "@/lib/app";
import { Messages } from "./Messages";

/** What every form says: refusals, their waits, the field rules, the shared parts (password toggle, robot check). */
const FORM_NAMESPACES = ["banner", "duration", "messages", "fields", "forms"] as const;

/**
 * A page's client components get their messages here, and only these: the forms' shared
 * namespaces and the page's own, compiled, in the visitor's language.
 */
export async function PageMessages({ namespaces = [], children }: { namespaces?: readonly string[]; children: React.ReactNode }) {
  return <Messages value={await pageMessages([...FORM_NAMESPACES, ...namespaces])}>{children}</Messages>;
}
