// Messages a person writes to a sandbox (`dumbwaiter inbox`, the app's inbox.send): into its spool's
// inbox, signed for each of that spool's active keys.
import { UserError } from '../errors';
import { writeInboxMessage } from '../spool/inbox';
import type { InboxMessage } from '../../../shared/protocol/types';
import type { HostContext } from './context';

export class Inbox {
  constructor(private readonly ctx: HostContext) {}

  /** A message typed by the human, for a sandbox's inbox (by default the spool commands act on): one
   *  copy signed for each of that spool's active keys. */
  send(text: string, actor: string, spool = this.ctx.requireSpool().name): InboxMessage[] {
    const { keys, results, audit } = this.ctx.core;
    const pinned = results.reach(spool);
    if (!pinned) throw new UserError(`spool ${spool} is not reachable or not safe: no message can be written`);
    const to = keys
      .list()
      .filter((k) => k.spool === spool && !k.revoked_at)
      .map((k) => keys.signer(k.key_id))
      .filter((k) => k !== null);
    if (to.length === 0) throw new UserError(`no active key of spool ${spool} whose secret this process can open: nobody could read the message`);
    const msgs = to.map((k) => writeInboxMessage(pinned.paths.inbox, k, 'notice', null, text));
    audit.record({ kind: 'notice_sent', actor, spool, message: `${actor} wrote to the sandbox of spool ${spool} (${to.length} key${to.length === 1 ? '' : 's'}): ${text.slice(0, 200)}` });
    return msgs;
  }
}
