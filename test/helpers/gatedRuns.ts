// Runs that record themselves and then wait for a file: for the tests that kill the daemon with
// SIGKILL while they run (orphans, reconcile). Each run appends its request id to `runs.txt`, so a
// second run of anything would show, and writes nothing to its output, whose pipe dies with the run keeper.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually, type TestHost } from './host';
import { trackGroup } from './processes';
import type { KeyFile } from '../../shared/protocol/types';
import { GO_ARG, countingCommand, operation, type OpSpec } from './allowlists';

/** Waits until the file named by $1 exists. */
const GATE = 'while [ ! -e "$1" ]; do sleep 0.05; done';

export class GatedRuns {
  readonly runsFile: string;

  constructor(private readonly host: TestHost) {
    this.runsFile = path.join(host.root, 'runs.txt');
  }

  /** An operation whose run waits until the file named by its `go` argument exists; `fields`: more of its fields. */
  spec(name: string, fields: Partial<OpSpec> = {}): OpSpec {
    return { name, command: countingCommand(this.runsFile, GATE, '{go}'), args: GO_ARG, ...fields };
  }

  /** The same as an allowlist entry; `extra`: more YAML lines of the entry (indented by four spaces). */
  op(name: string, extra = ''): string {
    return `${operation(this.spec(name))}${extra}`;
  }

  goFile(id: string): string {
    return path.join(this.host.root, `go-${id}`);
  }

  /** How many times the request `id` has run. */
  runs(id: string): number {
    return existsSync(this.runsFile) ? readFileSync(this.runsFile, 'utf8').split('\n').filter((x) => x === id).length : 0;
  }

  /** Starts a daemon, starts each request and waits until each runs, then kills the daemon and its
   *  run keeper with SIGKILL (the host crashed: TestHost.crash). Returns the runs' process groups
   *  (tracked: ended after the test). */
  async startThenKill9(key: KeyFile, reqs: [id: string, op: string][]): Promise<number[]> {
    const d = await this.host.startDaemon();
    for (const [id, op] of reqs) this.host.submit(key, id, op, { go: this.goFile(id) });
    const pids: number[] = [];
    for (const [id] of reqs) {
      await this.host.waitResult(id, ['running']);
      pids.push(trackGroup(await this.host.runPid(id)));
      await eventually(`${id} to have started`, () => (this.runs(id) === 1 ? true : undefined));
    }
    await this.host.crash(d);
    return pids;
  }
}
