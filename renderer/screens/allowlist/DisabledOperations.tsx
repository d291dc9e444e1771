// The operations the host disabled although the file is valid: a link now leads one of their folders
// into a spool or Dumbwaiter's home (a sandbox may plant one). Each with why, from status; they come
// back by themselves once their folders are safe.
import { useStatus } from '../../stores/status';
import { visible } from '../../../shared/text/visible';

export function DisabledOperations() {
  // A string, so that an unchanged list does not render again (a selector's new array would).
  const json = useStatus((s) => JSON.stringify(s.allowlist.disabled));
  const disabled = json ? (JSON.parse(json) as { name: string; reason: string }[]) : [];
  if (disabled.length === 0) return null;
  return (
    <div className="callout callout-bad" id="disabled-operations" role="status">
      <strong>
        {disabled.length === 1 ? 'One operation is' : `${disabled.length} operations are`} disabled: a link leads a folder into a spool or Dumbwaiter's home. Sandboxes do not see{' '}
        {disabled.length === 1 ? 'it' : 'them'} until the folder is safe again.
      </strong>
      <ul>
        {disabled.map((d) => (
          <li key={d.name}>
            <code>{visible(d.name)}</code>: {visible(d.reason)}
          </li>
        ))}
      </ul>
    </div>
  );
}
