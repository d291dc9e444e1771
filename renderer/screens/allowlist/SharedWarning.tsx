// What declaring a folder shared with the sandbox gives away, next to the box that declares it.
export function SharedWarning({ what, error }: { what: string; error: string | null }) {
  return (
    <div className="callout callout-warn shared-warning" role="note">
      The program then works on what the sandbox controls: it reads what the sandbox wrote in {what} and may follow links the sandbox
      placed there; what it writes there the sandbox can read or change. Roots that contain the spool may be used only this way.
      {error ? <p className="error-text field-message">{error}</p> : null}
    </div>
  );
}
