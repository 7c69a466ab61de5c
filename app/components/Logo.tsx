/** The Gatehouse mark: an arched gate. Decorative beside the name, so hidden from screen readers. */
export function Logo() {
  return (
    <svg className="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" className="logo-tile" />
      <path d="M8 26V14a8 8 0 0 1 16 0v12h-5v-9a3 3 0 0 0-6 0v9z" className="logo-gate" />
    </svg>
  );
}
