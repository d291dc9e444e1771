// The spool folder: whether the one in use is safe (private to you and complete), and moving to
// another one (picked or typed, checked first, used from the host's next start).
import { useState } from 'react';
import type { SpoolCheckView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { useLoad } from '../../lib/useLoad';
import { useStatus } from '../../stores/status';
import { toast } from '../../stores/toasts';

function Verdict({ check }: { check: SpoolCheckView }) {
  return (
    <div className={`callout ${check.ok ? 'callout-good' : 'callout-bad'} spool-verdict`}>
      <span className={`badge ${check.ok ? 'badge-good' : 'badge-bad'}`}>{check.ok ? 'OK' : 'Problem'}</span> <span>{check.message}</span>
    </div>
  );
}

export function SpoolSection({ configured, onMoved }: { configured: string | null; onMoved: () => void }) {
  const inUse = useStatus((s) => s.spool);
  const current = useLoad(() => api.spool.check({}), []);
  const [typed, setTyped] = useState('');
  const [candidate, setCandidate] = useState<SpoolCheckView | null>(null);
  const [busy, setBusy] = useState<'pick' | 'check' | 'use' | null>(null);
  const [moved, setMoved] = useState<SpoolCheckView | null>(null);

  const check = async (path: string) => {
    setBusy('check');
    try {
      setCandidate(await api.spool.check({ path }));
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
    }
  };

  const pick = async () => {
    setBusy('pick');
    let path: string | null = null;
    try {
      path = await api.dialog.pickFolder({ title: 'Choose the spool folder', ...(configured ? { defaultPath: configured } : {}) });
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
    }
    if (path) {
      setTyped(path);
      await check(path);
    }
  };

  const use = async (c: SpoolCheckView) => {
    setBusy('use');
    try {
      // Main asks the person first, natively (a page cannot answer it); null: they said no.
      const r = await api.spool.use({ path: c.path });
      if (!r) return;
      setMoved(r);
      setCandidate(null);
      setTyped('');
      onMoved();
      toast('Spool folder changed: used from the next start');
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
    }
  };

  const next = configured && inUse && configured !== inUse ? configured : null;

  return (
    <section className="card settings-section" aria-labelledby="spool-title">
      <h2 id="spool-title">Spool folder</h2>
      <p className="muted settings-intro">The folder shared with the sandbox: requests come in, results go out. It must be private to you.</p>
      <dl className="facts">
        <dt>In use</dt>
        <dd>
          <code>{inUse ?? current.data?.path ?? '—'}</code>
        </dd>
      </dl>
      {current.error ? <p className="error-text">Could not check the spool: {current.error}</p> : null}
      {current.data ? (
        <div role="status" aria-label="Spool check">
          <Verdict check={current.data} />
        </div>
      ) : null}
      {next ? (
        <div className="callout callout-info spool-next" role="status" aria-label="Spool from the next start">
          <p>
            From the next start: <code>{next}</code>
            {moved?.path === next ? (
              <>
                {' '}
                <span className={`badge ${moved.ok ? 'badge-good' : 'badge-bad'}`}>{moved.ok ? 'OK' : 'Problem'}</span>
              </>
            ) : null}
          </p>
          {moved?.path === next ? moved.message : 'Restart Dumbwaiter to use it, then share this folder with the sandbox.'}
        </div>
      ) : null}
      <div className="row">
        <button type="button" onClick={current.reload} disabled={current.loading}>
          {current.loading ? 'Checking…' : 'Check again'}
        </button>
        <button type="button" onClick={() => void pick()} disabled={busy !== null}>
          Change…
        </button>
      </div>

      <form
        className="spool-typed"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim()) void check(typed.trim());
        }}
      >
        <label htmlFor="spool-path">Or type a folder</label>
        <div className="row">
          <input
            id="spool-path"
            className="spool-path"
            value={typed}
            onChange={(e) => {
              setTyped(e.target.value);
              setCandidate(null);
            }}
            placeholder="/absolute/path/to/spool"
            spellCheck={false}
            autoComplete="off"
          />
          <button type="submit" disabled={!typed.trim() || busy !== null}>
            {busy === 'check' ? 'Checking…' : 'Check'}
          </button>
        </div>
      </form>

      {candidate ? (
        <div className="spool-candidate" role="region" aria-label="New spool folder">
          <dl className="facts">
            <dt>New folder</dt>
            <dd>
              <code>{candidate.path}</code>
            </dd>
          </dl>
          <Verdict check={candidate} />
          {!candidate.ok ? <p className="muted">Using it creates the folder, or completes it and makes it private, where it can.</p> : null}
          <div className="row">
            <button type="button" className="primary" onClick={() => void use(candidate)} disabled={busy !== null}>
              {busy === 'use' ? 'Setting up…' : 'Use this folder'}
            </button>
            <button
              type="button"
              onClick={() => {
                setCandidate(null);
                setTyped('');
              }}
              disabled={busy !== null}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
