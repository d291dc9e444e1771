// A request's arguments as a table of names and values (never raw JSON). The values are the sandbox's:
// shown escaped (controls and bidi overrides made visible), and a list's items each in a box of its own,
// so that an item holding ", " cannot pass for two.
import { visible, visibleJson } from '../../shared/text/visible';

export function ArgsTable({ args }: { args: Record<string, unknown> }) {
  const entries = Object.entries(args);
  if (entries.length === 0) return <p className="muted">No arguments.</p>;
  return (
    <table className="kv">
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>
              <ArgValue value={v} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One argument's value: a list item by item, anything else as one value. */
export function ArgValue({ value }: { value: unknown }) {
  if (!Array.isArray(value)) return <code className="arg-value">{valueText(value)}</code>;
  if (value.length === 0) return <span className="muted">an empty list</span>;
  // A list, so that a screen reader too hears each item apart.
  return (
    <ul className="argv arg-items">
      {value.map((item, i) => (
        <li key={i}>
          <code className="argv-part">{valueText(item)}</code>
        </li>
      ))}
    </ul>
  );
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return v === '' ? '""' : visible(v);
  return visibleJson(JSON.stringify(v) ?? String(v));
}
