import { NextRequest } from "next/server";
import type { MailMessage } from "@/lib/mail/types";
import { freshAddress, PEER_HEADER } from "./peer";

/** POSTs an emailed link's token to its route, as the button on the link's page does. */
export async function pressLink(
  path: "/api/email-change/confirm" | "/api/email-change/undo" | "/api/not-me",
  token: string,
  cookie = "",
): Promise<Response> {
  const route = (await import(`@/app${path}/route`)) as { POST: (request: Request) => Promise<Response> };
  return route.POST(
    new NextRequest(`http://localhost${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...(cookie ? { cookie } : {}) },
      body: JSON.stringify({ token }),
    }),
  );
}

/** The token of the link a mail carries to `page`. */
export function tokenIn(message: MailMessage | undefined, page: string): string {
  const url = message?.links.find((link) => link.url.includes(page))?.url ?? "";
  return new URL(url).hash.replace("#token=", "");
}
