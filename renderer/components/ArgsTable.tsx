// A request's arguments as a table of names and values (never raw JSON). Values come from the sandbox:
// shown escaped (controls and bidi overrides visible), and an array's elements each apart, so an
// element holding ", " cannot pass for two.
import { visible } from '../../shared/text/visible';

const text = (v: unknown): string => (v === '' ? '""' : visible(typeof v === 'string' ? v : JSON.stringify(v)));

export function ArgsTable({ args }: { args: Record<string, unknown> }) {
  const entries = Object.entries(args);
  if (entries.length === 0) return <p className="muted">No arguments.</p>;
  return (
    <table className="kv">
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{visible(k)}</th>
            <td>
              {Array.isArray(v) ? (
                v.length === 0 ? (
                  <span className="muted">an empty list</span>
                ) : (
                  <ul className="argv arg-items">
                    {v.map((item, i) => (
                      <li key={i}>
                        <code className="argv-part">{text(item)}</code>
                      </li>
                    ))}
                  </ul>
                )
              ) : (
                <code>{text(v)}</code>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
