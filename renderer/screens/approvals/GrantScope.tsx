// The request's arguments, and what a time-boxed approval lets later calls carry in each: by default
// the value on this card (what the person saw); the person may widen one to any value, or to values
// matching a pattern they type (the whole value must match). Sent as approve's `widen`; the native
// question that follows says it again, and the Grants table lists it.
import type { GrantArgRule } from '../../../shared/ipc/views';
import { ArgValue } from '../../components/ArgsTable';
import { MUST_SEE } from '../../lib/useAllSeen';

export type ArgChoice = { kind: 'same' } | { kind: 'any' } | { kind: 'match'; pattern: string };
/** By argument name; an argument not named keeps its value. */
export type ArgChoices = Record<string, ArgChoice>;

type Widen = Record<string, Exclude<GrantArgRule, { equals: unknown }>>;

/** approve's `widen`: the arguments left free or matched (undefined when every value stays). */
export function widenOf(choices: ArgChoices): Widen | undefined {
  const widen: Widen = {};
  for (const [name, c] of Object.entries(choices)) {
    if (c.kind === 'any') widen[name] = { any: true };
    else if (c.kind === 'match') widen[name] = { match: c.pattern };
  }
  return Object.keys(widen).length ? widen : undefined;
}

/** The first argument set to match a pattern with none typed yet, or null. */
export function missingPattern(choices: ArgChoices): string | null {
  return Object.entries(choices).find(([, c]) => c.kind === 'match' && c.pattern.trim() === '')?.[0] ?? null;
}

export function GrantScope({
  args,
  choices,
  onChange,
  disabled,
}: {
  args: Record<string, unknown>;
  choices: ArgChoices;
  onChange: (name: string, c: ArgChoice) => void;
  disabled: boolean;
}) {
  const entries = Object.entries(args);
  return (
    <div className="approval-args" role="group" aria-label="Arguments" {...{ [MUST_SEE]: 'args' }}>
      <div className="approval-label">Arguments, and what “Approve for” lets later calls use</div>
      {entries.length === 0 ? (
        <p className="muted">None: approving for a while covers later calls without arguments.</p>
      ) : (
        <table className="kv grant-scope">
          <tbody>
            {entries.map(([name, value]) => {
              const c = choices[name] ?? { kind: 'same' };
              return (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>
                    <ArgValue value={value} />
                    <div className="grant-scope-choice">
                      <span className="muted" aria-hidden="true">
                        later calls:
                      </span>
                      <select
                        value={c.kind}
                        disabled={disabled}
                        aria-label={`What later calls may give as ${name}`}
                        onChange={(e) => onChange(name, e.target.value === 'match' ? { kind: 'match', pattern: '' } : { kind: e.target.value as 'same' | 'any' })}
                      >
                        <option value="same">this value</option>
                        <option value="any">any value</option>
                        <option value="match">values matching…</option>
                      </select>
                      {c.kind === 'match' ? (
                        <input
                          value={c.pattern}
                          disabled={disabled}
                          maxLength={1000}
                          spellCheck={false}
                          aria-label={`Pattern for ${name} (the whole value must match)`}
                          placeholder="a pattern, e.g. ^canary$"
                          onChange={(e) => onChange(name, { kind: 'match', pattern: e.target.value })}
                        />
                      ) : null}
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
