import { logoResponse } from "@/lib/brand/logo-response";
import { limited } from "@/lib/auth/limited";

export const dynamic = "force-dynamic";

/** The instance's logo (BRAND_LOGO), from memory: its bytes were read and checked at start. */
export const GET = limited<{ params: Promise<{ hash: string }> }>("/api/brand/logo/[hash]", async (request, { gate }, { params }) =>
  logoResponse(gate.brand.logo, (await params).hash, request.headers.get("if-none-match"), gate.config.nodeEnv === "production"),
);
