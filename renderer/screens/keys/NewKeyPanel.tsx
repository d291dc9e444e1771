// A key just made (or rotated): its file, shown this once with copy and save buttons, and the lines
// to paste into the sandbox. The host never shows the secret again.
import { useState } from 'react';
import type { KeyFile } from '../../../shared/protocol/types';
import type { KeyView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { useFocusOnMount } from '../../lib/useFocusOnMount';
import { confirmAction } from '../../stores/confirm';
import { useLeaveGuard } from '../../stores/route';
import { toast } from '../../stores/toasts';

export interface NewKey {
  key: KeyView;
  keyFile: KeyFile;
  pasteLines: string;
  /** Set when this key replaces a rotated one. */
  rotatedFrom?: string;
}

/** A file name from the key's name: letters, digits, _ . - only. */
function keyFileName(name: string): string {
  const safe = name
    .trim()
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 60);
  return `dumbwaiter-key-${safe || 'key'}.json`;
}

const PLACEHOLDER = '/path/where/you/saved/the/key.json';

/** Why leaving (or closing) before the key is saved or copied asks first. */
const LOST =
  'The secret is shown only now: once it is gone, nobody can show it again. Without it the sandbox cannot sign requests, and you would have to rotate the key.';

export function NewKeyPanel({ created, onDone }: { created: NewKey; onDone: () => void }) {
  const { key, keyFile, pasteLines, rotatedFrom } = created;
  // Where the key file was saved; whether it was copied. Either keeps the key.
  const [savedTo, setSavedTo] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [saving, setSaving] = useState(false);
  const kept = savedTo !== null || copied;
  const headingRef = useFocusOnMount<HTMLHeadingElement>();
  const text = `${JSON.stringify(keyFile, null, 2)}\n`;
  const fileName = keyFileName(key.name);
  const lines = pasteLines.replace(/^\n+/, '');
  useLeaveGuard(!kept, { title: 'Leave without saving the key?', body: LOST, confirmLabel: 'Leave anyway' });

  const save = async () => {
    setSaving(true);
    try {
      // Main shows the save dialog and writes the file readable by the user only.
      const r = await api.keys.saveFile({ keyFile, fileName });
      if (r.saved && r.path) {
        setSavedTo(r.path);
        toast('Key file saved');
      }
    } catch (e) {
      toast(`Could not save the key file: ${errorText(e)}`, 'error');
    } finally {
      setSaving(false);
    }
  };

  const done = async () => {
    if (!kept && !(await confirmAction({ title: 'Close without saving the key?', body: LOST, confirmLabel: 'Close anyway', danger: true }))) return;
    onDone();
  };

  return (
    <section className="card new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title" ref={headingRef} tabIndex={-1}>
        {rotatedFrom ? `New key for “${key.name}”` : `Key “${key.name}” created`} <code className="new-key-id">{key.key_id}</code>
      </h2>
      <div className="callout callout-warn once-warning" role="alert">
        <strong>Save this key now: it is shown only once.</strong> Copy the key file or save it, then give it to the sandbox. Once you close
        this panel or leave the screen, Dumbwaiter will not show the secret again.
        {rotatedFrom ? (
          <>
            {' '}
            The old key <code>{rotatedFrom}</code> is already revoked: put this file into the sandbox in its place.
          </>
        ) : null}
      </div>

      <h3 id="key-file-label">Key file</h3>
      <pre className="output key-secret" aria-labelledby="key-file-label" tabIndex={0}>
        {text}
      </pre>
      <div className="row">
        <button type="button" className="primary" onClick={() => void save()} disabled={saving}>
          {saving ? 'Saving…' : `Save as ${fileName}…`}
        </button>
        <CopyButton text={text} label="Copy key file" what="Key file" onCopied={() => setCopied(true)} />
      </div>
      {savedTo ? (
        <div className="callout callout-good key-saved" role="status" aria-label="Where it was saved">
          Saved to <code>{savedTo}</code>, readable only by you. Give the sandbox this file (keep it private there too).
        </div>
      ) : (
        <p className="muted keys-note">The file is saved readable only by you: anyone with it can make requests as this key.</p>
      )}

      <h3 id="paste-label">Paste into the sandbox</h3>
      <pre className="output" aria-labelledby="paste-label" tabIndex={0}>
        {lines}
      </pre>
      <div className="row">
        <CopyButton text={lines} label="Copy lines" what="Lines" />
        {pasteLines.includes(PLACEHOLDER) ? (
          <span className="muted">
            Replace <code>{PLACEHOLDER}</code> with where the key file is inside the sandbox.
          </span>
        ) : null}
      </div>

      <div className="row new-key-done">
        <button type="button" onClick={() => void done()}>
          Done
        </button>
      </div>
    </section>
  );
}
