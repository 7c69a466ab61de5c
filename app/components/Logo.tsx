import { logoPath, type Brand } from "@/lib/brand/brand";
import { LOGO_BOX, logoBox } from "@/lib/brand/logo";

/**
 * The instance's logo (BRAND_LOGO, served by /api/brand/logo/<hash>), or the Gatehouse mark: an
 * arched gate. Decorative beside the name, so hidden from screen readers. A wide wordmark keeps its
 * shape: 28 px high and as wide as its aspect ratio asks, up to 160 px (lib/brand/logo.ts).
 */
export function Logo({ brand }: { brand: Brand }) {
  const src = logoPath(brand);
  if (src && brand.logo) {
    const box = logoBox(brand.logo.aspectRatio, LOGO_BOX.header.heightPx, LOGO_BOX.header.maxWidthPx);
    // A plain <img>: an SVG shown this way runs no script, and next/image would add a loader for one small file.
    // eslint-disable-next-line @next/next/no-img-element
    return <img className="logo" src={src} alt="" width={box.widthPx} height={box.heightPx} data-testid="brand-logo" />;
  }
  return (
    <svg className="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" className="logo-tile" />
      <path d="M8 26V14a8 8 0 0 1 16 0v12h-5v-9a3 3 0 0 0-6 0v9z" className="logo-gate" />
    </svg>
  );
}
