// The sandbox's keys: create one (shown once, with what to paste into the sandbox), see what each key
// has done and when it was last used, rotate or revoke it. Revoked keys stay listed, dimmed, below.
import { useState } from 'react';
import type { KeyView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { confirmAction } from '../../stores/confirm';
import { refreshKeys, useKeys, useKeysError } from '../../stores/keys';
import { toast } from '../../stores/toasts';
import { SpoolSwitcher } from '../../components/SpoolSwitcher';
import { useChosenSpool, useSeveralSpools } from '../../stores/spool';
import { CreateKeyForm } from './CreateKeyForm';
import { NewKeyPanel, type NewKey } from './NewKeyPanel';
import './keys.css';

export function KeysScreen() {
  // The list follows the host: new requests change the counts and "last used", revocations the lists.
  const keys = useKeys();
  const keysError = useKeysError();
  const [creating, setCreating] = useState(false);
  const [fresh, setFresh] = useState<NewKey | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const spool = useChosenSpool();
  const list = (keys ?? []).filter((k) => !spool || k.spool === spool);
  const active = list.filter((k) => !k.revoked_at);
  const revoked = list.filter((k) => k.revoked_at);

  const rotate = async (k: KeyView) => {
    const ok = await confirmAction({
      title: `Rotate key “${k.name}”?`,
      body: `A new key replaces ${k.key_id}, which is revoked at once: requests signed with the old key are rejected until the sandbox has the new key file. The new key is shown once.`,
      confirmLabel: 'Rotate key',
    });
    if (!ok) return;
    setBusy(k.key_id);
    try {
      const r = await api.keys.rotate({ keyId: k.key_id });
      if (!r) return toast(`Key ${k.key_id} not rotated: cancelled`);
      setCreating(false);
      setFresh({ ...r, rotatedFrom: k.key_id });
      toast(`Key ${k.key_id} rotated: ${r.key.key_id} replaces it`);
      void refreshKeys();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
    }
  };

  const revoke = async (k: KeyView) => {
    const ok = await confirmAction({
      title: `Revoke key “${k.name}”?`,
      body: `Requests signed with ${k.key_id} are rejected from now on, including any still waiting. The sandbox is told in its inbox. This cannot be undone: to give the sandbox access again, create a new key.`,
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (!ok) return;
    setBusy(k.key_id);
    try {
      const r = await api.keys.revoke({ keyId: k.key_id });
      toast(r.changed ? `Key ${k.key_id} revoked` : `Key ${k.key_id} was already revoked`);
      void refreshKeys();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setBusy(null);
    }
  };

  return (
    <Page
      title="Keys"
      description="Each sandbox signs its requests with its own key. A key's secret is shown once, when it is made; revoke a key to cut its sandbox off at once."
      actions={
        <>
          <SpoolSwitcher />
          {creating || fresh ? null : (
            <button type="button" className="primary" onClick={() => setCreating(true)}>
              New key…
            </button>
          )}
        </>
      }
    >
      {fresh ? <NewKeyPanel created={fresh} onDone={() => setFresh(null)} /> : null}
      {creating ? (
        <CreateKeyForm
          onCancel={() => setCreating(false)}
          onCreated={(r) => {
            setCreating(false);
            setFresh(r);
            void refreshKeys();
          }}
        />
      ) : null}
      {keys === undefined ? keysError ? <p className="error-text" role="alert">The keys could not be loaded: {keysError}</p> : <p className="muted">Loading…</p> : null}
      {keys && active.length === 0 && !creating && !fresh ? (
        <EmptyState
          title={`${revoked.length ? 'No active keys' : 'No keys yet'}${spool ? ` for spool ${spool}` : ''}`}
          action={
            <button type="button" className="primary" onClick={() => setCreating(true)}>
              Create the first key
            </button>
          }
        >
          A sandbox needs a key to sign its requests. Create one, save its key file where the sandbox can read it, and paste the lines shown into
          the sandbox.
        </EmptyState>
      ) : null}
      {active.length > 0 ? (
        <>
          <h2 id="active-keys" className="keys-section">Active keys</h2>
          <KeyTable keys={active} labelledBy="active-keys" busy={busy} onRotate={(k) => void rotate(k)} onRevoke={(k) => void revoke(k)} />
        </>
      ) : null}
      {revoked.length > 0 ? (
        <>
          <h2 id="revoked-keys" className="keys-section">Revoked keys</h2>
          <p className="muted keys-note">Requests signed with these keys are rejected. They stay listed so the audit log and the activity read clearly.</p>
          <KeyTable keys={revoked} labelledBy="revoked-keys" />
        </>
      ) : null}
    </Page>
  );
}

function Operations({ ops }: { ops: string[] | null }) {
  if (!ops) return <span className="muted">All operations</span>;
  if (ops.length === 0) return <span className="muted">None</span>;
  return (
    <span className="key-ops">
      {ops.map((o) => (
        <code key={o}>{o}</code>
      ))}
    </span>
  );
}

function KeyTable({
  keys,
  labelledBy,
  busy = null,
  onRotate,
  onRevoke,
}: {
  keys: KeyView[];
  labelledBy: string;
  busy?: string | null;
  onRotate?: (k: KeyView) => void;
  onRevoke?: (k: KeyView) => void;
}) {
  const revoked = !onRevoke;
  const several = useSeveralSpools();
  return (
    <table className={`list keys-table${revoked ? ' keys-revoked' : ''}`} aria-labelledby={labelledBy}>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key id</th>
          {several ? <th scope="col">Spool</th> : null}
          <th scope="col">Scope</th>
          <th scope="col">Operations</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col" className="num">
            Requests
          </th>
          <th scope="col">{revoked ? 'Revoked' : <span className="offscreen">Actions</span>}</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr key={k.key_id} aria-label={`Key ${k.name}`}>
            <td className="key-name">{k.name}</td>
            <td>
              <code>{k.key_id}</code>
            </td>
            {several ? <td>{k.spool}</td> : null}
            <td>
              <span className={`badge ${k.scope === 'write' ? 'badge-warn' : 'badge-info'}`}>{k.scope === 'write' ? 'Read & write' : 'Read only'}</span>
            </td>
            <td>
              <Operations ops={k.ops} />
            </td>
            <td>
              <Time iso={k.created_at} />
            </td>
            <td>{k.last_used_at ? <Time iso={k.last_used_at} /> : <span className="muted">Never</span>}</td>
            <td className="num" aria-label={`${k.requests} request${k.requests === 1 ? '' : 's'}`}>
              {k.requests}
            </td>
            <td>
              {revoked ? (
                <>
                  <Time iso={k.revoked_at} />
                  {k.rotated_to ? (
                    <div className="muted keys-rotated">
                      rotated to <code>{k.rotated_to}</code>
                    </div>
                  ) : null}
                </>
              ) : (
                <div className="row keys-actions">
                  <button type="button" onClick={() => onRotate?.(k)} disabled={busy === k.key_id} aria-label={`Rotate ${k.name}`}>
                    Rotate…
                  </button>
                  <button type="button" className="danger" onClick={() => onRevoke?.(k)} disabled={busy === k.key_id} aria-label={`Revoke ${k.name}`}>
                    Revoke…
                  </button>
                </div>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
