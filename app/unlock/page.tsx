import { EmailLinkPage, emailLinkMetadata } from "../components/EmailLinkPage";

export const dynamic = "force-dynamic";

export const generateMetadata = () => emailLinkMetadata("unlock");

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default function UnlockPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  return <EmailLinkPage purpose="unlock" searchParams={searchParams} />;
}
