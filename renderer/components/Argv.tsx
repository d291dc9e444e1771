// The exact program and arguments that run: each argv element in its own box, so spaces inside one
// element are visible and nothing looks like shell syntax. Controls and bidi overrides the sandbox put
// in an argument are shown escaped: an override could make the text read in another order.
import { visible } from '../../shared/text/visible';

export function Argv({ argv, cwd }: { argv: string[]; cwd?: string }) {
  return (
    <div className="argv" aria-label="Command that runs">
      {argv.map((a, i) => (
        <code key={i} className={i === 0 ? 'argv-part argv-program' : 'argv-part'}>
          {a === '' ? '""' : visible(a)}
        </code>
      ))}
      {cwd ? <div className="argv-cwd muted">in {visible(cwd)}</div> : null}
    </div>
  );
}
