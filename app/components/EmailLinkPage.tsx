import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { EMAIL_LINKS, type EmailLinkPurpose } from "./email-links";
import { EmailLinkForm } from "./EmailLinkForm";
import { NoScriptNotice } from "./NoScriptNotice";
import { PageMessages } from "./PageMessages";

/** The page's title; no Referer leaves it (the link's token was in its address when it opened). */
export async function emailLinkMetadata(purpose: EmailLinkPurpose): Promise<Metadata> {
  return { title: (await getTranslations(`recovery.${purpose}`))("title"), referrer: "no-referrer" };
}

/**
 * The page an emailed link opens (reset a password, confirm an address, let this browser sign
 * in): one component, with each purpose's words and settings (./email-links.ts). Opening it does
 * nothing: the person presses the button.
 */
export async function EmailLinkPage({
  purpose,
  searchParams,
}: {
  purpose: EmailLinkPurpose;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const [{ notice }, t] = await Promise.all([searchParams, getTranslations(`recovery.${purpose}`)]);
  const link = EMAIL_LINKS[purpose];
  // The form's words, and the second step's where the link signs in: nothing else ships.
  const namespaces = ["recovery.link", `recovery.${purpose}`, ...(link.secondStep ? ["secondStep"] : [])];
  return (
    <PageMessages namespaces={namespaces}>
      <div className="card">
        <h1>{t("heading")}</h1>
        <NoScriptNotice posted={notice === "javascript"} action={purpose} />
        {/* About the link's account: hidden (globals.css) when the link turns out to have no token. */}
        {link.intro.map((key) => (
          <p key={key} className="link-intro">
            {t(key)}
          </p>
        ))}
        <EmailLinkForm purpose={purpose} />
      </div>
    </PageMessages>
  );
}
