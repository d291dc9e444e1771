// The commented allowlist that `dumbwaiter init` writes into a new home.
export const EXAMPLE_ALLOWLIST = `# Dumbwaiter allowlist: the only things a sandbox may ask this machine to do.
#
# Each operation is an argv template: the program and its arguments as a list, never a shell string.
# A request's arguments fill the {placeholders}; each value stays inside its own argv element, so
# "; rm -rf ~" is passed as one literal argument, never run. The request can never choose the
# program, the working folder or the environment.
#
# Argument types: string (pattern, max_length, enum), integer (min, max), boolean (flag),
# path (within: [folders], must_exist), array (items, max_items). Patterns must match the whole value.
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

  - name: list-home
    description: List a folder inside your home folder
    command: [ls, -la, "{dir}"]
    cwd: "~"                   # quoted: a bare ~ means "nothing" in YAML
    args:
      dir: {type: path, within: ["~"], must_exist: true, default: "."}
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
`;
