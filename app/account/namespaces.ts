/**
 * What the account pages' client components say: only these parts of the `account` catalogue
 * ship to the browser; the rest (the events, the sessions, the notices) is rendered on the server.
 */
export const ACCOUNT_CLIENT_NAMESPACES = [
  "account.time",
  "account.passkeys",
  "account.factors",
  "account.password",
  "account.confirm",
  // "Confirm it's you" may ask for the second step (app/components/SecondStep.tsx).
  "secondStep",
] as const;
