// inbox/<msg-id>.json: messages from the host to the sandbox, each signed for the key it is meant for
// (docs/PROTOCOL.md, "Authenticated results and inbox messages"). Ids sort by time.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '../fs/atomicWrite';
import { signHostDoc, type HostDocKey } from '../../../shared/protocol/hostAuth';
import type { InboxKind, InboxMessage } from '../../../shared/protocol/types';

export function newMessageId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

export function writeInboxMessage(
  inboxDir: string,
  to: HostDocKey,
  kind: InboxKind,
  ref: string | null,
  text: string,
  extra: Pick<InboxMessage, 'request_hash'> = {},
): InboxMessage {
  const now = new Date();
  const msg: InboxMessage = { v: 1, id: newMessageId(now), kind, created_at: now.toISOString(), ref, text, ...extra };
  const body = JSON.stringify(msg, null, 2) + '\n';
  writeFileAtomic(path.join(inboxDir, `${msg.id}.json`), signHostDoc('inbox', to, body), 0o644);
  return msg;
}
