// Whether a waiting request may be approved where a notification or the tray menu shows it, without
// the approval card, and the very texts they show for it. One decision for both surfaces: Approve is
// offered in place only when everything that decides the run (each argv element, the folder, the
// environment, the warnings) is in those texts, whole, unambiguous (plain ASCII, each element told
// apart) and within what the OS shows; anything else gets an action that opens the card.
//
// The limits, measured on the text as shown (after shared/text/visible.ts), in UTF-16 code units:
// - A notification's body: 200, what Windows documents for a notification's text (NOTIFYICONDATA's
//   szInfo: 256 with its NUL, to be kept to 200 characters in English). macOS documents no figure (its
//   body text "is truncated to a length appropriate for display"), nor does the freedesktop
//   specification; the decisive lines come first, so whatever a desktop cuts, it cuts from the
//   agent's reason, which comes last.
// - A menu item's label: 80. No OS documents a maximum (a menu widens to its longest label, and what
//   passes the screen's edge is cut), so each label is kept to one line that a narrow screen still
//   shows, the width the tray's other labels are kept to.
import type { PendingApprovalView } from '../../../shared/ipc/views';
import { visible } from '../../../shared/text/visible';
import { capitalized, ellipsis, plural } from './words';

export const NOTIFICATION_BODY_MAX = 200;
export const MENU_LABEL_MAX = 80;
const REASON = "The agent's reason: ";

export interface Notice {
  title: string;
  body: string;
}

export type InPlace =
  /** `menu`: the labels the tray's entry shows above Approve (the command, the folder, each warning). */
  | { fits: true; notification: Notice; menu: string[] }
  /** `why`: what keeps it off the notification and the menu, for a person ("a plan of 50 steps"). */
  | { fits: false; why: string; notification: Notice };

/** An argv element that reads as itself, unquoted, between spaces. `~` and `$` are left out: a reader
 *  would take them for the shell's, which nothing here has. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Printable ASCII only: no line feed, control or bidi mark (shown escaped, a reader could not tell them
 *  from the same text typed literally), no look-alike (a no-break space reads as a space, a Cyrillic а
 *  as a Latin a). Anything else is for the card. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** One line that tells every element apart: plain ones as they are, others in single quotes. Null when
 *  an element cannot be shown so: it holds a quote or a character beyond printable ASCII. */
export function argvLine(argv: string[]): string | null {
  const shown: string[] = [];
  for (const e of argv) {
    if (!PRINTABLE_ASCII.test(e) || e.includes("'")) return null;
    shown.push(PLAIN.test(e) ? e : `'${e}'`);
  }
  return shown.join(' ');
}

/**
 * `nameSpool`: the home has several spools, so the texts say which one the request came through. Whether
 * it fits does not depend on it (it is measured with the spool named), so the menu, the notification
 * and the check on dispatch always agree.
 */
export function approvalInPlace(p: PendingApprovalView, nameSpool = false): InPlace {
  const a = p.approval;
  const who = `${nameSpool ? `spool ${visible(p.spool)}: ` : ''}${visible(a.key_name)}`;
  const longestWho = `spool ${visible(p.spool)}: ${visible(a.key_name)} wants to run `;
  const steps = a.steps ?? p.steps;
  const refuse = (why: string): InPlace => ({
    fits: false,
    why,
    notification: {
      title: steps ? `Approve a plan of ${plural(steps.length, 'step')}?` : `Approve ${visible(a.operation)}?`,
      body: `${who} asks to run ${steps ? `a plan of ${plural(steps.length, 'step')}` : visible(a.operation)}.\n${capitalized(why)}: open the card to see all of it before you decide.`,
    },
  });

  // A plan's approval lets each of its steps run later without asking: only the card, which arms once
  // every step has been on screen, may approve it.
  if (steps) return refuse('once approved, its steps run later without asking');
  // The person must read how it differs from the plan it cites: that is the card's to show.
  if (a.plan_claim) return refuse('it claims a plan but differs from its steps');
  // Environment values may be secrets (a notification stays in the OS's history and on the lock
  // screen), and names with values seldom fit a line. No run at all: nothing to say it has none.
  if (!p.run) return refuse('what it runs is not known here');
  if (Object.keys(p.run.env).length > 0) return refuse(`it sets ${plural(Object.keys(p.run.env).length, 'environment variable')}`);
  const command = argvLine(a.argv);
  if (command === null || !PRINTABLE_ASCII.test(a.cwd)) return refuse('its command or folder has characters other than plain ASCII');
  if (a.cwd.trim() !== a.cwd) return refuse('its folder begins or ends with a space');

  const warnings = [
    ...(a.ceiling ? [`Would cross ${visible(a.ceiling)}`] : []),
    ...(a.shared_with_sandbox?.length ? [`Works on folders the sandbox can write: ${a.shared_with_sandbox.map(visible).join(', ')}`] : []),
    ...(p.run.leaves_processes || a.leaves_processes ? ['May leave processes running'] : []),
  ];
  const menu = [`Command: ${command}`, `Folder: ${a.cwd}`, ...warnings];
  const rest = [command, `in ${a.cwd}`, ...warnings].join('\n');
  if (longestWho.length + rest.length > NOTIFICATION_BODY_MAX || menu.some((l) => l.length > MENU_LABEL_MAX)) return refuse('its command is too long to show here');
  const decisive = `${who}${nameSpool ? ' wants to run ' : ': '}${rest}`;

  // The agent's reason decides nothing that runs: it comes last, named so that it cannot pass for a
  // line above, cut (visibly) to what room is left.
  const room = NOTIFICATION_BODY_MAX - decisive.length - 1;
  const intent = a.intent && room >= REASON.length + 2 ? [ellipsis(`${REASON}${visible(a.intent)}`, room)] : [];
  return { fits: true, notification: { title: `Approve ${visible(a.operation)}?`, body: [decisive, ...intent].join('\n') }, menu };
}

/** What an Approve from a notification or the menu does, decided again on the request as it waits now
 *  (what was shown may be stale): approve it in place, open its card, or nothing (it is decided). */
export function approveInPlace(id: string, waiting: PendingApprovalView[]): 'approve' | 'card' | 'gone' {
  const p = waiting.find((x) => x.id === id);
  if (!p) return 'gone';
  return approvalInPlace(p).fits ? 'approve' : 'card';
}
