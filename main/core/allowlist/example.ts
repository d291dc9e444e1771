// The commented allowlist that `dumbwaiter init` writes into a new home.
import { existsSync } from 'node:fs';
import path from 'node:path';

export const EXAMPLE_ALLOWLIST = `# Dumbwaiter allowlist: the only things a sandbox may ask this machine to do.
#
# Each operation is an argv template: the program and its arguments as a list, never a shell string.
# A request's arguments fill the {placeholders}; each value stays inside its own argv element, so
# "; rm -rf ~" is passed as one literal argument, never run. The request can never choose the
# program, the working folder or the environment.
#
# Argument types: string (pattern, max_length, enum), integer (min, max), boolean (flag),
# path (within: [folders], must_exist, shared_with_sandbox), array (items, max_items). Patterns use
# RE2 syntax (no backreferences or lookaround) and must match the whole value.
# Write {{ and }} for literal braces. The daemon reloads this file when it changes; if the new
# version is invalid it keeps the last good one and says so in the log and the audit log.
version: 1
operations:
  - name: echo
    description: Print a message (a harmless first operation to try)
    command: [echo, "{msg}"]
    args:
      msg: {type: string, max_length: 200}
    scope: read                 # read | write
    approval: never             # never | always (default: always for write, never for read)
    timeout_s: 10
    max_output_bytes: 65536

  # A path root ("within") may not contain Dumbwaiter's own folders: not the spool, which the sandbox
  # writes (it could swap a folder there for a link to elsewhere), and never the host's home with the
  # ledger of keys. So not "~": a folder of your documents instead. A root the sandbox can write into
  # must say shared_with_sandbox: true, and the approval card then warns about it.
  - name: list-documents
    description: List a folder inside ~/Documents
    command: [ls, -la, "{dir}"]
    cwd: "~/Documents"         # quoted: a bare ~ means "nothing" in YAML
    args:
      dir: {type: path, within: ["~/Documents"], must_exist: true, default: "."}
    scope: read
    approval: never
    timeout_s: 10

  # A project's tests, with a filter the agent may choose. Uncomment and adapt:
  # - name: test
  #   description: Run the unit tests of the app
  #   command: [npm, test, "--", "--grep={filter}"]
  #   cwd: ~/code/app
  #   env: {CI: "1"}
  #   args:
  #     filter: {type: string, pattern: "[A-Za-z0-9 _./-]*", max_length: 200, default: ""}
  #   scope: read
  #   approval: never
  #   timeout_s: 600
  #   max_output_bytes: 1048576
  #   concurrency: 1            # at most this many runs of this operation at once
  #   cost: 1                   # spend units charged per run
  #   leaves_processes: false   # true only for one that starts a service: otherwise whatever it
  #                             # leaves running is ended when it exits
  #   spools: [default]         # only the agents of these spools see it (left out: every spool)

# A task for a coding agent on this machine (Claude Code here: adapt to yours). It works with your
# rights in its folder, so a human reads each task first; the request picks its budget, at most the
# integer's max. Uncomment (the lines starting "  # ") and adapt:
  # - name: agent-task
  #   description: Hand a coding task to the local agent, in the app's repository
  #   command: [claude, --print, --max-turns, "{max_turns}", "{task}"]
  #   cwd: ~/code/app
  #   args:
  #     task: {type: string, max_length: 4000, description: "What to do, in plain words"}
  #     max_turns: {type: integer, min: 1, max: 50, default: 10}
  #   scope: write
  #   approval: always
  #   timeout_s: 3600

# Git in a repository the sandbox can write. Git obeys the repository's own .git/config, which can
# name programs for it to run (gpg.program with log.showSignature, core.fsmonitor, diff drivers,
# hooks, core.worktree pointing elsewhere): the options below switch off what a command line can.
# Filter drivers and a .git file pointing at another repository still work: see docs/SECURITY.md,
# "Running tools on folders the sandbox writes". Uncomment (the lines starting "  # ") and adapt:
  # - name: git-status
  #   description: Show which files of the app's repository changed
  #   command: [git, --no-pager, --work-tree=., -c, core.fsmonitor=false, -c, core.hooksPath=/dev/null,
  #             -c, gpg.program=false, -c, gpg.ssh.program=false, -c, gpg.x509.program=false,
  #             -c, protocol.allow=never, status, --porcelain=v1, --ignore-submodules=all]
  #   cwd: ~/code/app
  #   env: &git-env {GIT_CONFIG_NOSYSTEM: "1", GIT_OPTIONAL_LOCKS: "0", GIT_NO_REPLACE_OBJECTS: "1", GIT_NO_LAZY_FETCH: "1", GIT_TERMINAL_PROMPT: "0"}
  #   scope: read
  #   approval: never
  #   timeout_s: 30
  # - name: git-log
  #   description: Show the latest commits of the app's repository
  #   command: [git, --no-pager, --work-tree=., -c, core.fsmonitor=false, -c, core.hooksPath=/dev/null,
  #             -c, gpg.program=false, -c, gpg.ssh.program=false, -c, gpg.x509.program=false,
  #             -c, protocol.allow=never, log, --no-show-signature, "--max-count={count}", "--format=%h %ad %an %s", --date=short]
  #   cwd: ~/code/app
  #   env: *git-env
  #   args:
  #     count: {type: integer, min: 1, max: 200, default: 20}
  #   scope: read
  #   approval: never
  #   timeout_s: 30
  # - name: git-diff
  #   description: Show the uncommitted changes of the app's repository
  #   command: [git, --no-pager, --work-tree=., -c, core.fsmonitor=false, -c, core.hooksPath=/dev/null,
  #             -c, gpg.program=false, -c, gpg.ssh.program=false, -c, gpg.x509.program=false,
  #             -c, protocol.allow=never, diff, --no-ext-diff, --no-textconv, --no-color, --ignore-submodules=all]
  #   cwd: ~/code/app
  #   env: *git-env
  #   scope: read
  #   approval: never
  #   timeout_s: 30
  #   max_output_bytes: 1048576
# A write with a reconcile command: if the host loses track of a run (it stopped while the run was
# going), it asks the lookup whether the tag was made. Exit 0: yes; 1: no (safe to run again);
# anything else: it cannot tell, and a human settles it. Uncomment and adapt:
  # - name: git-tag
  #   description: Tag the current commit of the app's repository as a release
  #   command: [git, --no-pager, --work-tree=., -c, core.fsmonitor=false, -c, core.hooksPath=/dev/null,
  #             -c, gpg.program=false, -c, gpg.ssh.program=false, -c, gpg.x509.program=false,
  #             -c, protocol.allow=never, tag, --no-sign, "v{version}"]
  #   cwd: ~/code/app
  #   env: *git-env
  #   args:
  #     version: {type: string, pattern: "[0-9]+[.][0-9]+[.][0-9]+"}
  #   scope: write
  #   approval: always
  #   timeout_s: 30
  #   reconcile:
  #     command: [git, --no-pager, -c, core.fsmonitor=false, rev-parse, --verify, --quiet, "refs/tags/v{version}"]
  #     timeout_s: 10
`;

/** The list-documents operation of EXAMPLE_ALLOWLIST: from its entry to the blank line after it. */
const LIST_DOCUMENTS = /^ {2}- name: list-documents\n(?: {4}.*\n)+/m;

/**
 * The example allowlist for a machine whose home folder is `home`: as it is where ~/Documents exists;
 * elsewhere (a server, a container) list-documents would fail every call, so it is written commented
 * out, saying why, for the person to point at a folder of theirs.
 */
export function exampleAllowlistFor(home: string): string {
  if (existsSync(path.join(home, 'Documents'))) return EXAMPLE_ALLOWLIST;
  return EXAMPLE_ALLOWLIST.replace(LIST_DOCUMENTS, (entry) =>
    [
      '  # This machine had no ~/Documents when this file was written: create it (or point cwd and within',
      '  # at a folder of yours), then uncomment (the lines starting "  # ").',
      ...entry.trimEnd().split('\n').map((line) => `  # ${line.slice(2)}`),
      '',
    ].join('\n'),
  );
}
