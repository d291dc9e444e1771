// The first start: what Dumbwaiter is, and the three steps to a working sandbox.
import { Page } from '../components/Page';
import { useStatus } from '../stores/status';
import { navigate } from '../stores/route';

export function Welcome() {
  const spool = useStatus((s) => s.spool);
  const several = useStatus((s) => s.spools.length > 1) ?? false;
  const keys = useStatus((s) => s.keys.active) ?? 0;
  const ops = useStatus((s) => s.allowlist.operations.length) ?? 0;
  return (
    <Page title="Welcome to Dumbwaiter" description="An agent in a sandbox asks this machine to run the operations you allow, and nothing else. No port is opened: requests are signed files in a shared folder.">
      <ol className="steps">
        <li className={ops > 0 ? 'done' : undefined}>
          <h2>Choose what the agent may do</h2>
          <p>The allowlist lists each operation: the exact program, its arguments, where it runs. An example is in place ({ops} operations).</p>
          <button type="button" onClick={() => navigate('allowlist')}>
            Open the allowlist
          </button>
        </li>
        <li className={keys > 0 ? 'done' : undefined}>
          <h2>Create a key for the sandbox</h2>
          <p>Each sandbox signs its requests with its own key, so you can see and revoke what it does.</p>
          <button type="button" className={keys > 0 ? undefined : 'primary'} onClick={() => navigate('keys')}>
            Create a key
          </button>
        </li>
        <li>
          <h2>Share the spool folder with the sandbox</h2>
          <p>
            {several ? (
              <>Mount each sandbox's own spool folder into it (Settings lists them)</>
            ) : (
              <>
                Mount <code>{spool ?? 'the spool folder'}</code> into the sandbox
              </>
            )}{' '}
            (for Docker: <code>-v</code>), and run the sandbox as your own user: the spool is yours alone, so a sandbox running as another
            user id cannot open it (for Docker: <code>--user "$(id -u):$(id -g)"</code>). The key's page shows the lines to paste there.
          </p>
          <button type="button" onClick={() => navigate('activity')}>
            Done: show activity
          </button>
        </li>
      </ol>
    </Page>
  );
}
