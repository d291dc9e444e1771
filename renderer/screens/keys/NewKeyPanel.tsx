// A key just made (or rotated): its file, shown this once with copy and save buttons, and the lines
// to paste into the sandbox. The host never shows the secret again.
import { useState } from 'react';
import type { KeyFile } from '../../../shared/protocol/types';
import type { KeyView } from '../../../shared/ipc/views';
import { copyText } from '../../lib/clipboard';
import { saveAs } from '../../lib/download';
import { confirmAction } from '../../stores/confirm';
import { toast } from '../../stores/toasts';
import { useFocusOnMount } from './useFocusOnMount';

export interface NewKey {
  key: KeyView;
  keyFile: KeyFile;
  pasteLines: string;
  /** Set when this key replaces a rotated one. */
  rotatedFrom?: string;
}

/** A file name from the key's name: letters, digits, _ . - only. */
export function keyFileName(name: string): string {
  const safe = name
    .trim()
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 60);
  return `dumbwaiter-key-${safe || 'key'}.json`;
}

const PLACEHOLDER = '/path/where/you/saved/the/key.json';

export function NewKeyPanel({ created, onDone }: { created: NewKey; onDone: () => void }) {
  const { key, keyFile, pasteLines, rotatedFrom } = created;
  const [kept, setKept] = useState(false);
  const headingRef = useFocusOnMount<HTMLHeadingElement>();
  const text = `${JSON.stringify(keyFile, null, 2)}\n`;
  const fileName = keyFileName(key.name);

  const copy = async (what: string, value: string, keeps: boolean) => {
    try {
      await copyText(value);
      if (keeps) setKept(true);
      toast(`${what} copied`);
    } catch (e) {
      toast(`Could not copy: ${(e as Error).message}`, 'error');
    }
  };

  const done = async () => {
    if (!kept) {
      const ok = await confirmAction({
        title: 'Close without saving the key?',
        body: 'The secret is shown only now: once this closes, nobody can show it again. Without it the sandbox cannot sign requests, and you would have to rotate the key.',
        confirmLabel: 'Close anyway',
        danger: true,
      });
      if (!ok) return;
    }
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
        <button type="button" className="primary" onClick={() => (saveAs(text, fileName, 'application/json'), setKept(true))}>
          Save as {fileName}…
        </button>
        <button type="button" onClick={() => void copy('Key file', text, true)}>
          Copy key file
        </button>
      </div>
      <p className="muted keys-note">Keep it readable only by you (and the sandbox): anyone with this file can make requests as this key.</p>

      <h3 id="paste-label">Paste into the sandbox</h3>
      <pre className="output" aria-labelledby="paste-label" tabIndex={0}>
        {pasteLines.replace(/^\n+/, '')}
      </pre>
      <div className="row">
        <button type="button" onClick={() => void copy('Lines', pasteLines.replace(/^\n+/, ''), false)}>
          Copy lines
        </button>
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
