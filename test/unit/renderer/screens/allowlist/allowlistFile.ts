// The allowlist file the editor's tests edit: two operations, with comments that must survive.
import { parse } from 'yaml';
import { readOperations } from '../../../../../renderer/screens/allowlist/readForm';
import type { OpForm } from '../../../../../renderer/screens/allowlist/form';

export const FILE = `# Top comment: must survive.
version: 1
operations:
  - name: say
    description: Print a message
    command: [/bin/echo, "{msg}"]   # the program never comes from a request
    args:
      msg: {type: string, max_length: 200}   # short messages only
    scope: read                 # read | write
    approval: never

  # The second operation.
  - name: count
    description: Count to a number
    command: [/usr/bin/seq, "{n}"]
    args:
      n: {type: integer, min: 1, max: 100}
    scope: read
    timeout_s: 5
`;

export const form = (text: string, i: number): OpForm => readOperations(text).ops[i]!;
export const lines = (t: string) => t.split('\n');
export const ops = (t: string) => (parse(t) as { operations: Record<string, unknown>[] }).operations;
