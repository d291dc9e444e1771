// A request's arguments as a table of names and values (never raw JSON).
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
              <code>{Array.isArray(v) ? v.map(String).join(', ') : typeof v === 'string' ? v : JSON.stringify(v)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
