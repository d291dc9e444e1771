// A message to the sandbox: written into the spool's inbox/ folder, where the agent reads it, as one file
// signed for each active key (a sandbox trusts only what is signed for its own key).
import { useState } from 'react';
import type { InboxMessage } from '../../../shared/protocol/types';
import { api, errorText } from '../../api';
import { formatTime } from '../../lib/format';
import { toast } from '../../stores/toasts';

const MAX = 4000;

export function InboxSection() {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<InboxMessage[][]>([]);
  const trimmed = text.trim();

  const send = async () => {
    if (!trimmed || trimmed.length > MAX || busy) return;
    setBusy(true);
    try {
      const copies = await api.inbox.send({ text: trimmed });
      setSent((s) => [copies, ...s].slice(0, 5));
      setText('');
      toast(`Message sent to the sandbox${copies.length > 1 ? ` (one copy for each of ${copies.length} keys)` : ''}`);
    } catch (e) {
      toast(`Could not send the message: ${errorText(e)}`, 'error');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card settings-section" aria-labelledby="inbox-title">
      <h2 id="inbox-title">Send a message to the sandbox</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <div className="field">
          <label htmlFor="inbox-text">Message</label>
          <textarea
            id="inbox-text"
            className="inbox-text"
            rows={3}
            value={text}
            maxLength={MAX}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                void send();
              }
            }}
            placeholder="e.g. The test database is down until 3 pm: don't run the integration tests."
            aria-describedby="inbox-note"
          />
          <div id="inbox-note" className="field-message muted">
            Written into the spool's <code>inbox/</code> folder, where the agent reads it: one file signed for each active key. {text.length}/{MAX} characters · Ctrl+Enter sends.
          </div>
        </div>
        <button type="submit" className="primary" disabled={!trimmed || busy}>
          {busy ? 'Sending…' : 'Send message'}
        </button>
      </form>
      {sent.length > 0 ? (
        <div role="status" aria-label="Sent messages" className="inbox-sent">
          <h3>Sent</h3>
          <ul>
            {sent.map((copies) => (
              <li key={copies[0]!.id}>
                <div className="muted inbox-meta">
                  {formatTime(copies[0]!.created_at)} ·{' '}
                  {copies.map((m, i) => (
                    <span key={m.id}>
                      {i > 0 ? ', ' : ''}
                      <code>inbox/{m.id}.json</code>
                    </span>
                  ))}
                </div>
                <blockquote>{copies[0]!.text}</blockquote>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
