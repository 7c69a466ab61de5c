"use client";

import { handled } from "../components/handled";
import type { DOWNLOAD_WORDS } from "./action-words";
import { FreshActionPrompts, type ActionProps } from "./FreshPostForm";
import { postForm, useFreshAction } from "./useFreshAction";

const ACTION = "/api/account/data";

/** The file name the server gave (Content-Disposition), or a plain one. */
function fileNameOf(res: Response): string {
  return /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "account-data.json";
}

/** Hands the answer to the browser as a download, as the plain form post would have. */
async function saveFile(res: Response): Promise<void> {
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = fileNameOf(res);
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the file over: the object URL is only needed for it.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * "Download my data": a plain form post without JavaScript (the answer is a file, or the page
 * asking to confirm first); with it, "Confirm it's you" in place when the server asks for it.
 */
export function DownloadData({ formToken, email, ways, words }: ActionProps<typeof DOWNLOAD_WORDS>) {
  const action = useFreshAction();
  const { pending, freshly } = action;
  return (
    <>
      <FreshActionPrompts action={action} formToken={formToken} email={email} ways={ways} testId="download-data-error" />
      <form
        method="post"
        action={ACTION}
        onSubmit={(event) => {
          event.preventDefault();
          if (!pending) handled(freshly(words.reason, () => postForm(ACTION, { formToken, json: "true" }), saveFile));
        }}
      >
        <input type="hidden" name="formToken" value={formToken} />
        <button type="submit" className="secondary" aria-disabled={pending ? true : undefined}>
          {words.download}
        </button>
      </form>
    </>
  );
}
