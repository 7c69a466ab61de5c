import type { PrismaClient } from "@/lib/generated/prisma/client";
import { newDeviceCodeSeed } from "./device-confirmation";

/**
 * The account's device-code seed (docs/decisions/0040), or null for no account: a stand-in reads
 * for nobody, so both pay the same read.
 */
export async function deviceCodeSeedOf(prisma: PrismaClient, userId: string): Promise<string | null> {
  const row = await prisma.user.findUnique({ where: { id: userId }, select: { deviceCodeSeed: true } });
  return row?.deviceCodeSeed ?? null;
}

/**
 * Replaces the seed, only if it is still `seed` (compare-and-set): of two pending sign-ins racing
 * with one code, one replaces it and goes on, and the other finds it gone.
 */
export async function replaceDeviceCodeSeed(prisma: PrismaClient, userId: string, seed: string): Promise<boolean> {
  const { count } = await prisma.user.updateMany({
    where: { id: userId, deviceCodeSeed: seed },
    data: { deviceCodeSeed: newDeviceCodeSeed() },
  });
  return count === 1;
}
