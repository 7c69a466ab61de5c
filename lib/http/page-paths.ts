/**
 * Paths the proxy, the layout and the refusals share, in a module with no imports (proxy.ts loads
 * it on every page request).
 */
/** Where an account whose password is breached is sent until it chooses a new one. */
export const NEW_PASSWORD_PATH = "/account/new-password";
/** The request header proxy.ts sets to the page's path (overwriting any a client sent). */
export const PAGE_PATH_HEADER = "x-gatehouse-page";
