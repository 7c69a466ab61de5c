import { EmailLinkPage, emailLinkMetadata } from "../components/EmailLinkPage";

export const dynamic = "force-dynamic";

export const generateMetadata = () => emailLinkMetadata("verify");

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default function VerifyEmailPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  return <EmailLinkPage purpose="verify" searchParams={searchParams} />;
}
