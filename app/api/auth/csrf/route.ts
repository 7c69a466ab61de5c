import { callNextAuth } from "@/lib/auth/next-auth/call";
import { limited } from "@/lib/auth/limited";

export const dynamic = "force-dynamic";

export const GET = limited("/api/auth/csrf", (request, { gate }) => callNextAuth(gate, request, ["csrf"]));
