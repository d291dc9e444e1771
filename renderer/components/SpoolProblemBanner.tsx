// Above every screen while the spool is not served: what is wrong with it, in the words of the daemon
// (which stopped touching it) or of the folder check, so nobody wonders why the sandbox gets no answers.
import { visible } from '../../shared/text/visible';
import { useStatus } from '../stores/status';

export function SpoolProblemBanner() {
  const problem = useStatus((s) => s.spool_problem);
  const running = useStatus((s) => s.daemon.running);
  if (!problem) return null;
  return (
    <div className="callout callout-bad spool-problem" role="alert" aria-label="Spool problem">
      <p>
        <strong>The spool needs attention.</strong>{' '}
        {running ? 'Requests in it are not taken until this is fixed; the host picks them up again once it is.' : 'The host cannot use it until this is fixed.'}
      </p>
      <p className="spool-problem-text">{visible(problem)}</p>
      <a href="#/settings">The spool folder in Settings</a>
    </div>
  );
}
