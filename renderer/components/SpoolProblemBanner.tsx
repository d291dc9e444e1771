// Above every screen while a spool is not served: which one (when there are several), what is wrong with it, in the words of the daemon
// (which stopped touching it) or of the folder check, so nobody wonders why the sandbox gets no answers.
import { visible } from '../../shared/text/visible';
import { useStatus } from '../stores/status';

export function SpoolProblemBanner() {
  const problem = useStatus((s) => s.spool_problem);
  const running = useStatus((s) => s.daemon.running);
  // Named only when the home has several: the host's text then names each spool too.
  const named = useStatus((s) => (s.spools.length > 1 ? s.spools.filter((x) => x.problem).map((x) => x.name).join(', ') : ''));
  if (!problem) return null;
  return (
    <div className="callout callout-bad spool-problem" role="alert" aria-label="Spool problem">
      <p>
        <strong>{named ? `${named.includes(',') ? 'Spools' : 'Spool'} ${named} ${named.includes(',') ? 'need' : 'needs'} attention.` : 'The spool needs attention.'}</strong>{' '}
        {running ? 'Requests in it are not taken until this is fixed; the host picks them up again once it is.' : 'The host cannot use it until this is fixed.'}
      </p>
      <p className="spool-problem-text">{visible(problem)}</p>
      <a href="#/settings">{named ? 'The spools in Settings' : 'The spool folder in Settings'}</a>
    </div>
  );
}
