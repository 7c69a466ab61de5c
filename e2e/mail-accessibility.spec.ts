import AxeBuilder from "@axe-core/playwright";
import { everyMail } from "../tests/fixtures/mails";
import { expect, test } from "./helpers/serverGrid";

/**
 * Every mail kind's HTML, in English and German, rendered in Chromium as a mail client would show
 * it, with axe-core run on it: contrast of the button and the small print, the language, the
 * title, link names. Mail clients strip much, never add: what fails here fails in an inbox.
 */
for (const locale of ["en", "de"]) {
  for (const mail of everyMail(locale)) {
    test(`the ${mail.kind} mail's HTML passes axe (${locale})`, async ({ page }) => {
      // Nothing from the network: a mail's images load from the instance, and the test needs none.
      await page.route("**/*", (route) => route.fulfill({ status: 204 }));
      await page.setContent(mail.html);
      await expect(page.locator("html")).toHaveAttribute("lang", locale);
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((violation) => `${violation.id} (${violation.nodes.length}) ${violation.help}`)).toEqual([]);
    });
  }
}
