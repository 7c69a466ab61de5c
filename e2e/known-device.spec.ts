import { PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { expect, signInApi, test } from "./helpers/serverGrid";

test("the owner signs in again from the same browser while an attacker keeps the account locked", async ({ page, newClient }) => {
  const email = uniqueEmail("owner");
  await registerThroughUi(page, email);
  await signInThroughUi(page, email);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
  const cookies = await page.context().cookies();
  const device = cookies.find((cookie) => /gatehouse-device$/.test(cookie.name));
  expect(device, "the browser keeps a device cookie").toBeDefined();
  expect(device!.httpOnly).toBe(true);
  expect(device!.sameSite).toBe("Lax");
  expect(device!.value).not.toContain(email.split("@")[0]);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");

  // An attacker, from other addresses and with no cookie, locks the username.
  for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++)
    expect((await signInApi(await newClient(), email, "wrong password")).kind).toBe("invalid");
  const stranger = await signInApi(await newClient(), email, PASSWORD);
  expect(stranger.status).toBe(429);
  expect(stranger.body).toMatchObject({ error: "locked" });
  expect(stranger.body).not.toHaveProperty("lockedUntil");

  // The owner, from the browser that signed in before, is not refused.
  await page.goto("/sign-in");
  await signInThroughUi(page, email);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
  // …and the account page tells the owner that strangers are still kept out.
  await page.goto("/account");
  await expect(page.getByTestId("new-devices-paused")).toContainText("Devices you have signed in from before still work");
});
