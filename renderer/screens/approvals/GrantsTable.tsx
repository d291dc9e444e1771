// The time-boxed approvals in force ("this key may run this operation, with these arguments, without
// asking until…"), each revocable at once.
import { useState } from 'react';
import type { GrantArgRule } from '../../../shared/ipc/views';
import { visible } from '../../../shared/text/visible';
import { api, errorText } from '../../api';
import { ArgValue } from '../../components/ArgsTable';
import { EmptyState } from '../../components/EmptyState';
import { Time } from '../../components/Time';
import { formatTime } from '../../lib/format';
import { useLoad } from '../../lib/useLoad';
import { useNow } from '../../lib/useNow';
import { confirmAction } from '../../stores/confirm';
import { useKeys } from '../../stores/keys';
import { useHostVersion } from '../../stores/status';
import { toast } from '../../stores/toasts';

export function GrantsTable() {
  // Again on every change of the host's state (a grant made, used or ended) and as time passes (expired
  // grants drop off), keeping the table on screen meanwhile.
  const version = useHostVersion();
  const now = useNow();
  const grants = useLoad(() => api.grants.list(), [], `${version}/${now}`);
  const keys = useKeys();
  const [revoking, setRevoking] = useState<string | null>(null);
  const keyName = (id: string) => keys?.find((k) => k.key_id === id)?.name;

  const revoke = async (id: string, op: string, key: string) => {
    const ok = await confirmAction({
      title: 'Revoke this time-boxed approval?',
      body: `From now on, every ${op} request from ${key} waits for your approval again.`,
      confirmLabel: 'Revoke',
      danger: true,
    });
    if (!ok) return;
    setRevoking(id);
    try {
      const out = await api.grants.revoke({ id });
      toast(out.changed ? `Approval for ${op} revoked` : 'It had already ended');
      grants.reload();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setRevoking(null);
    }
  };

  const list = grants.data ?? [];
  return (
    <section className="grants" aria-labelledby="grants-title">
      <h2 id="grants-title">Time-boxed approvals</h2>
      {grants.error ? <p className="error-text">{grants.error}</p> : null}
      {grants.data === undefined && !grants.error ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        <EmptyState title="No time-boxed approvals in force">
          “Approve for …” on a waiting request lets that key run that operation again without asking, until the time is up: with the same arguments,
          or with those you let vary. They are listed here, and you can revoke them early.
        </EmptyState>
      ) : (
        <table className="list" aria-labelledby="grants-title">
          <thead>
            <tr>
              <th scope="col">Operation</th>
              <th scope="col">Key</th>
              <th scope="col">Arguments</th>
              <th scope="col">Approved</th>
              <th scope="col">Ends</th>
              <th scope="col">Runs since</th>
              <th scope="col">
                <span className="offscreen">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((g) => {
              const name = keyName(g.key_id);
              return (
                <tr key={g.id}>
                  <td>
                    <code>{g.op}</code>
                  </td>
                  <td>
                    {name ?? <span className="muted">unknown key</span>} <code className="muted">{g.key_id}</code>
                  </td>
                  <td>
                    <ArgRules rules={g.args} />
                  </td>
                  <td>
                    <Time iso={g.created_at} /> <span className="muted">by {g.created_by}</span>
                  </td>
                  <td title={formatTime(g.expires_at)}>
                    <Time iso={g.expires_at} />
                  </td>
                  <td>{g.uses}</td>
                  <td className="cell-actions">
                    <button type="button" className="danger" disabled={revoking === g.id} onClick={() => void revoke(g.id, g.op, name ?? g.key_id)} aria-label={`Revoke the approval of ${g.op} for ${name ?? g.key_id}`}>
                      {revoking === g.id ? 'Revoking…' : 'Revoke'}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** What a grant lets later calls carry, argument by argument. */
function ArgRules({ rules }: { rules: Record<string, GrantArgRule> | undefined }) {
  if (rules === undefined) return <span className="muted">any (made before grants named their arguments)</span>;
  const entries = Object.entries(rules);
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="grant-rules">
      {entries.map(([name, rule]) => (
        <li key={name}>
          <code>{name}</code>{' '}
          {'any' in rule ? (
            'any value'
          ) : 'match' in rule ? (
            <>
              matching <code>{visible(rule.match)}</code>
            </>
          ) : (
            <>
              = <ArgValue value={rule.equals} />
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
