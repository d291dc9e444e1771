// The home's spools, one folder per sandbox: each with its folder, keys, open requests, what is wrong
// with it (if anything) and what the probe of its mount found; probing again, adding one (a name and
// a picked folder) and removing one (its folder is left as it is). Main asks natively before adding
// or removing; the host's refusals are shown as it words them.
import { useId, useState } from 'react';
import type { SpoolInfo } from '../../../shared/ipc/views';
import { CHECK_TITLES, type ProbeReport } from '../../../shared/protocol/probe';
import { SPOOL_NAME, SPOOL_NAME_RULE } from '../../../shared/protocol/ids';
import { visible } from '../../../shared/text/visible';
import { api, errorText } from '../../api';
import { Field } from '../../components/Field';
import { Time } from '../../components/Time';
import { chooseSpool, chosenSpoolNow, useSpools } from '../../stores/spool';
import { toast } from '../../stores/toasts';

const VERDICT: Record<ProbeReport['verdict'], [tone: string, label: string]> = {
  ok: ['good', 'OK'],
  degraded: ['warn', 'Degraded'],
  unusable: ['bad', 'Unusable'],
};

function Probe({ report }: { report: ProbeReport | null }) {
  if (!report) return <p className="muted spool-probe">Not probed yet: “Check again” looks at what its filesystem does.</p>;
  const [tone, label] = VERDICT[report.verdict];
  return (
    <div className="spool-probe">
      <p>
        <span className={`badge badge-${tone}`}>{label}</span> <span>{visible(report.summary)}</span>{' '}
        <span className="muted">
          (probed <Time iso={report.at} />)
        </span>
      </p>
      <details>
        <summary>The checks</summary>
        {/* A table, not preformatted lines: a detail too long for the card wraps under its own text. */}
        <table className="spool-checks" aria-label="The checks">
          <tbody>
            <tr>
              <td />
              <th scope="row">filesystem</th>
              <td>
                {visible(report.fs_type)}; probed {report.at}
              </td>
            </tr>
            {report.checks.map((c) => (
              <tr key={c.name}>
                <td>{c.ok ? 'ok' : 'FAIL'}</td>
                <th scope="row">{CHECK_TITLES[c.name]}</th>
                <td>{visible(c.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}

function SpoolCard({ spool }: { spool: SpoolInfo }) {
  const [busy, setBusy] = useState<'check' | 'remove' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reasonId = useId();
  const titleId = useId();

  const check = async () => {
    setBusy('check');
    setError(null);
    try {
      const r = await api.spools.check({ name: spool.name });
      toast(`Spool ${spool.name} probed: ${r.verdict}`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(null);
    }
  };

  const remove = async () => {
    setBusy('remove');
    setError(null);
    try {
      // Main asks the person first, natively; null: they said no.
      const r = await api.spools.remove({ name: spool.name });
      if (!r) return;
      if (chosenSpoolNow() === spool.name) chooseSpool(null);
      toast(`Spool ${r.name} removed: ${r.dir} was left as it is`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(null);
    }
  };

  const checkWords = busy === 'check' ? 'Checking…' : 'Check again';
  const refusal = spool.open > 0 ? `It has ${spool.open} open request${spool.open === 1 ? '' : 's'}: settle or cancel ${spool.open === 1 ? 'it' : 'them'} first.` : null;
  return (
    <li className="spool-card" aria-labelledby={titleId}>
      <h3 id={titleId}>
        Spool {spool.name}
        {spool.problem ? <span className="badge badge-bad">Needs attention</span> : null}
      </h3>
      <dl className="facts">
        <dt>Folder</dt>
        <dd>
          <code>{spool.dir}</code>
        </dd>
        <dt>Keys</dt>
        <dd>{spool.keys}</dd>
        <dt>Open requests</dt>
        <dd>{spool.open}</dd>
      </dl>
      {spool.problem ? (
        <div className="callout callout-bad" role="alert">
          {visible(spool.problem)}
        </div>
      ) : null}
      <Probe report={spool.probe} />
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      <div className="row">
        {/* Named by its visible words first (what a voice user says), then which spool. */}
        <button type="button" onClick={() => void check()} disabled={busy !== null} aria-label={`${checkWords}: spool ${spool.name}`}>
          {checkWords}
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => void remove()}
          disabled={busy !== null || refusal !== null}
          aria-label={`Remove spool ${spool.name}`}
          aria-describedby={refusal ? reasonId : undefined}
        >
          {busy === 'remove' ? 'Removing…' : 'Remove…'}
        </button>
        {refusal ? (
          <span id={reasonId} className="muted">
            {refusal}
          </span>
        ) : null}
      </div>
    </li>
  );
}

function AddSpool({ taken, onDone }: { taken: string[]; onDone: () => void }) {
  const [name, setName] = useState('');
  const [dir, setDir] = useState<string | null>(null);
  const [busy, setBusy] = useState<'pick' | 'add' | null>(null);
  const [touched, setTouched] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const trimmed = name.trim();
  const nameError = !SPOOL_NAME.test(trimmed)
    ? `A name of ${SPOOL_NAME_RULE} (e.g. the sandbox it is for).`
    : taken.includes(trimmed)
      ? `There is already a spool named ${trimmed}.`
      : null;

  const pick = async () => {
    setBusy('pick');
    try {
      const picked = await api.dialog.pickFolder({ title: 'Choose the folder to share with the sandbox' });
      if (picked) setDir(picked);
    } catch (e) {
      setFailure(errorText(e));
    } finally {
      setBusy(null);
    }
  };

  const add = async () => {
    setTouched(true);
    if (nameError || !dir) return;
    setBusy('add');
    setFailure(null);
    try {
      const r = await api.spools.add({ name: trimmed, dir });
      if (!r) return setFailure('Not added: you cancelled in the confirmation dialog.');
      toast(`Spool ${r.name} added`);
      onDone();
    } catch (e) {
      setFailure(errorText(e));
    } finally {
      setBusy(null);
    }
  };

  return (
    <form
      className="spool-add"
      aria-label="Add a spool"
      onSubmit={(e) => {
        e.preventDefault();
        void add();
      }}
    >
      <Field label="Spool name" hint="What the app and the audit log call it." error={touched || name ? nameError : null}>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={32} placeholder="e.g. work" autoComplete="off" spellCheck={false} />
      </Field>
      <div className="field">
        <span className="field-label">Folder</span>
        <div className="row">
          {dir ? <code aria-label="Chosen folder">{dir}</code> : <span className="muted">{touched ? 'Choose the folder first.' : 'None chosen yet.'}</span>}
          <button type="button" onClick={() => void pick()} disabled={busy !== null}>
            {busy === 'pick' ? 'Choosing…' : 'Choose folder…'}
          </button>
        </div>
        <div className="field-message muted">A new or empty folder: Dumbwaiter makes it private to you and puts the sandbox's clients in it.</div>
      </div>
      {failure ? (
        <div className="callout callout-bad" role="alert">
          Could not add the spool: {failure}
        </div>
      ) : null}
      <div className="row">
        <button type="submit" className="primary" disabled={busy !== null}>
          {busy === 'add' ? 'Adding…' : 'Add spool'}
        </button>
        <button type="button" onClick={onDone} disabled={busy !== null}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function SpoolsSection() {
  const spools = useSpools();
  const [adding, setAdding] = useState(false);
  return (
    <section className="card settings-section" aria-labelledby="spools-title">
      <h2 id="spools-title">Spools</h2>
      <p className="muted settings-intro">
        One folder per sandbox: its requests come in there and its results go out there. A key works through its own spool only, and each spool is served
        on its own.
      </p>
      {spools.length === 0 ? <p className="muted">No spool yet: add one to share with a sandbox.</p> : null}
      <ul className="spool-list" aria-label="Spools">
        {spools.map((s) => (
          <SpoolCard key={s.name} spool={s} />
        ))}
      </ul>
      {adding ? (
        <AddSpool taken={spools.map((s) => s.name)} onDone={() => setAdding(false)} />
      ) : (
        <button type="button" onClick={() => setAdding(true)}>
          Add spool…
        </button>
      )}
    </section>
  );
}
