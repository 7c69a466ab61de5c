import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { PageMessages } from "../components/PageMessages";
import { NewPasskeyForm } from "./NewPasskeyForm";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  // No Referer leaves it: the link's token was in its address when it opened.
  return { title: (await getTranslations("recovery.newPasskey"))("title"), referrer: "no-referrer" };
}

/** Opened from an emailed link (an account started with a passkey, or one recovering): nothing happens until the button is pressed. */
export default async function NewPasskeyPage() {
  const t = await getTranslations("recovery.newPasskey");
  return (
    <PageMessages namespaces={["recovery.newPasskey"]}>
      <div className="card">
        <h1>{t("heading")}</h1>
        <p>{t("explain")}</p>
        <p>{t("explainRecovery")}</p>
        <noscript>
          <p className="hint">{t("needsJavaScript")}</p>
        </noscript>
        <NewPasskeyForm />
      </div>
    </PageMessages>
  );
}
