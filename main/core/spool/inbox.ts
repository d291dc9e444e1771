// inbox/<msg-id>.json: messages from the host to the sandbox. Ids sort by time.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeJsonAtomic } from '../fs/atomicWrite';
import type { InboxKind, InboxMessage } from '../../../shared/protocol/types';

export function newMessageId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

export function writeInboxMessage(inboxDir: string, kind: InboxKind, ref: string | null, text: string): InboxMessage {
  const now = new Date();
  const msg: InboxMessage = { v: 1, id: newMessageId(now), kind, created_at: now.toISOString(), ref, text };
  writeJsonAtomic(path.join(inboxDir, `${msg.id}.json`), msg, 0o644);
  return msg;
}
