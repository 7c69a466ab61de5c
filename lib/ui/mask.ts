/**
 * An address as a page may show it to whoever holds a link for it: enough for the owner to
 * recognise ("j•••@example.com"), not enough to read it off a shoulder or a shared screen.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "•••";
  const first = [...email.slice(0, at)][0]!;
  return `${first}•••${email.slice(at)}`;
}
