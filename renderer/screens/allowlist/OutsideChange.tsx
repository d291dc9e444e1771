// allowlist.yaml changed on disk while there were unsaved edits: nothing is overwritten. The person
// sees both versions and chooses: take the file from disk (dropping the edits), apply the edits to
// the disk version (operation by operation), or keep the edits (then Save replaces the version shown
// here, and only that one).
import { Fragment, useState } from 'react';
import { confirmAction } from '../../stores/confirm';
import { keepMine, mergeIntoDisk, reloadFromDisk, useOutside, useText } from './store';

export function OutsideChange() {
  const outside = useOutside();
  const mine = useText();
  const [showBoth, setShowBoth] = useState(false);
  if (!outside) return null;
  const reload = async () => {
    const ok = await confirmAction({
      title: 'Reload allowlist.yaml from disk?',
      body: 'Your unsaved changes are discarded and the editor shows the file as it is on disk now.',
      confirmLabel: 'Reload from disk',
      danger: true,
    });
    if (ok) await reloadFromDisk();
  };
  return (
    <div className="callout callout-warn outside-change" role="alert">
      <p>
        <strong>allowlist.yaml changed on disk</strong> while you were editing{outside.refusedSave ? ', so your changes were not saved' : ''}. Nothing
        has been overwritten: your changes are still here, unsaved.
      </p>
      <div className="row">
        <button type="button" onClick={() => setShowBoth((v) => !v)} aria-expanded={showBoth}>
          {showBoth ? 'Hide both versions' : 'Show both versions'}
        </button>
        <button type="button" onClick={() => void reload()}>
          Reload from disk
        </button>
        <button
          type="button"
          onClick={mergeIntoDisk}
          title="Apply the operations you added, changed or deleted to the version on disk (refused if the same operation changed on both sides)"
        >
          Merge my changes into it
        </button>
        <button type="button" onClick={keepMine} title="Save will then replace the version on disk shown here">
          Keep my version
        </button>
      </div>
      {showBoth ? (
        <>
        <p className="muted both-note">Highlighted: lines only in that version.</p>
        <div className="both-versions">
          <div>
            <h3>On disk now</h3>
            <pre className="output" aria-label="Version on disk">
              <Marked text={outside.text} other={mine} />
            </pre>
          </div>
          <div>
            <h3>Your version (unsaved)</h3>
            <pre className="output" aria-label="Your version">
              <Marked text={mine} other={outside.text} />
            </pre>
          </div>
        </div>
        </>
      ) : null}
    </div>
  );
}

/** The text with the lines the other version does not have highlighted. */
function Marked({ text, other }: { text: string; other: string }) {
  const theirs = new Set(other.split('\n'));
  return (
    <>
      {text.split('\n').map((line, i) => (
        <Fragment key={i}>
          {theirs.has(line) ? line : <mark className="diff-line">{line}</mark>}
          {'\n'}
        </Fragment>
      ))}
    </>
  );
}
