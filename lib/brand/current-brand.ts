import { gatehouse } from "@/lib/auth/gatehouse";
import type { Brand } from "./brand";

/** This instance's brand, for server components: the one place pages get the name, logo and colours from. */
export async function currentBrand(): Promise<Brand> {
  return (await gatehouse()).brand;
}
