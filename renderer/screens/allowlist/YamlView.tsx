// The whole file as text: exactly what Save writes. Editable too; the form follows what is typed here.
import { useId, useMemo } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { describeProblem, type Problem } from './problems';
import { readOperations } from './readForm';
import { setText, usePath, useText } from './store';

export function YamlView({ problems }: { problems: Problem[] }) {
  const text = useText();
  const path = usePath();
  const id = useId();
  const lines = text.split('\n').length;
  const names = useMemo(() => readOperations(text).ops.map((o) => o?.name), [text]);
  return (
    <div className="yaml-view">
      <div className="yaml-head">
        <label htmlFor={id}>
          allowlist.yaml <span className="muted">— the exact text Save writes to {path}</span>
        </label>
        <CopyButton text={text} what="YAML" />
      </div>
      <textarea
        id={id}
        className="yaml-text"
        value={text}
        onChange={(e) => setText(e.target.value)}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        wrap="off"
        rows={Math.min(Math.max(lines + 1, 16), 40)}
        aria-describedby={problems.length ? `${id}-problems` : undefined}
        aria-invalid={problems.length ? true : undefined}
      />
      {problems.length ? (
        <ul id={`${id}-problems`} className="yaml-problems error-text">
          {problems.map((p, i) => (
            <li key={i}>{describeProblem(p, names)}</li>
          ))}
        </ul>
      ) : (
        <p className="muted field-message">Comments and layout are kept when you edit in the form.</p>
      )}
    </div>
  );
}
