// A message to the sandbox: written as a file into the spool's inbox/ folder, where the agent reads it.
import { useState } from 'react';
import type { InboxMessage } from '../../../shared/protocol/types';
import { api, errorText } from '../../api';
import { formatTime } from '../../lib/format';
import { toast } from '../../stores/toasts';

const MAX = 4000;

export function InboxSection() {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<InboxMessage[]>([]);
  const trimmed = text.trim();

  const send = async () => {
    if (!trimmed || trimmed.length > MAX || busy) return;
    setBusy(true);
    try {
      const msg = await api.inbox.send({ text: trimmed });
      setSent((s) => [msg, ...s].slice(0, 5));
      setText('');
      toast('Message sent to the sandbox');
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
            Written as a file into the spool's <code>inbox/</code> folder, where the agent reads it. {text.length}/{MAX} characters · Ctrl+Enter sends.
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
            {sent.map((m) => (
              <li key={m.id}>
                <div className="muted inbox-meta">
                  {formatTime(m.created_at)} · <code>inbox/{m.id}.json</code>
                </div>
                <blockquote>{m.text}</blockquote>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
