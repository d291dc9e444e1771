// The file on disk as the host judged it, when it refuses it: why, and what it serves instead (the last
// good version, since when, or nothing), from status. The editor's own check says what is wrong with
// the text being edited; this says what sandboxes are offered meanwhile.
import { useStatus } from '../../stores/status';
import { formatTime } from '../../lib/format';
import { visible } from '../../../shared/text/visible';

export function RefusedFile() {
  // A string, so that an unchanged status does not render again (a selector's new object would).
  const json = useStatus((s) => (s.allowlist.ok ? '' : JSON.stringify(s.allowlist)));
  if (!json) return null;
  const a = JSON.parse(json) as { error: string | null; operations: string[]; serving: 'file' | 'last_good' | 'none' | null; since: string | null };
  const served =
    a.serving === 'last_good'
      ? `It serves the last good version meanwhile, loaded ${formatTime(a.since)}: ${a.operations.length === 1 ? 'one operation' : `${a.operations.length} operations`} (${a.operations.join(', ') || 'none'}).`
      : a.serving === 'none'
        ? 'It serves no operation until the file is fixed.'
        : 'The host is not running: it will start with the last good version, if it has one.';
  return (
    <div className="callout callout-bad" id="refused-file" role="status">
      <strong>The host refuses allowlist.yaml as it is on disk. {served}</strong>
      {a.error ? <pre>{visible(a.error)}</pre> : null}
    </div>
  );
}
