// What decides a run besides its command: the environment the host adds (names and values, from the
// allowlist: they may hold what an argument filled in, so they are shown escaped), the time limit, the
// output kept (the operation's: a request may only lower them, hence "at most"); and the warning when
// what it starts may outlive it. Host-side only: never in the sandbox's view.
import type { HostRunView } from '../../shared/ipc/views';
import { visible } from '../../shared/text/visible';
import { formatSpan } from '../lib/format';

export function RunFacts({ run }: { run: HostRunView }) {
  const env = Object.entries(run.env);
  const limits = [
    run.timeout_s !== null ? `runs at most ${formatSpan(run.timeout_s)}` : null,
    run.max_output_bytes !== null ? `logs at most ${run.max_output_bytes.toLocaleString('en')} bytes of output` : null,
  ].filter((x) => x !== null);
  return (
    <dl className="facts run-facts">
      <dt>Environment</dt>
      <dd>
        {env.length === 0 ? (
          <span className="muted">nothing added to the host’s own</span>
        ) : (
          <ul className="env-list" aria-label="Environment added">
            {env.map(([name, value]) => (
              <li key={name}>
                <code className="env-name">{visible(name)}</code>=<code className="env-value">{value === '' ? '""' : visible(value)}</code>
              </li>
            ))}
          </ul>
        )}
      </dd>
      {limits.length ? (
        <>
          <dt>Limits</dt>
          <dd>{limits.join(' · ')}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** What the command starts may outlive it: its operation declares `leaves_processes`. */
export function LeavesWarning() {
  return (
    <div className="callout callout-warn approval-leaves" role="note">
      What this command starts may <strong>keep running after it ends</strong>: its operation leaves processes running (they are not stopped with it).
    </div>
  );
}
