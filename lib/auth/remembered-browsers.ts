import type { Gatehouse } from "@/lib/app";

/**
 * Ends every "Remember this browser" grant of the account (docs/decisions/0033): its second step
 * is asked again at the next password sign-in on each of its browsers. For what changes who may
 * skip that step: a factor turned on or off, new recovery codes, "sign out everywhere". (A password
 * change, a reset and "Forget device" delete the device rows, and the grants with them.)
 */
export async function endRememberedBrowsers(gate: Gatehouse, userId: string): Promise<number> {
  const user = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  return user ? gate.devices.forgetRemembered(gate.usernameKey(user.email)) : 0;
}
