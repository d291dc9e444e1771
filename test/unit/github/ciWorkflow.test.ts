// .github/workflows/ci.yml, checked here because GitHub Actions cannot run on this machine: against
// GitHub's own workflow schema (a broken copy must fail it), and for what the project relies on: `npm test`
// on Linux, macOS and Windows (and on every supported Node line: test/unit/readme.test.ts), the installers packaged by electron-builder and kept, and a smoke start
// of the packaged app on Linux that watches the signs the app really gives.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { APP_NAME, homePaths } from '../../../main/core/home.ts';
import { workflowErrors } from './workflowSchema.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const WORKFLOW = read('.github/workflows/ci.yml');

interface Step {
  name?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  strategy?: { matrix?: Record<string, unknown> & { include?: Record<string, string>[] } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  concurrency?: { group: string; 'cancel-in-progress': boolean };
  jobs: Record<string, Job>;
}

const workflow = YAML.parse(WORKFLOW) as Workflow;
const job = (id: string): Job => {
  const j = workflow.jobs[id];
  if (!j) throw new Error(`ci.yml has no job '${id}'`);
  return j;
};

/** A job's matrix as GitHub expands it: the axes' combinations; each `include` entry is added to every
 *  combination whose axis values it does not change, or else becomes a combination of its own. */
function matrixRows(j: Job): Record<string, unknown>[] {
  const { include = [], ...axes } = j.strategy?.matrix ?? {};
  let combos: Record<string, unknown>[] = Object.keys(axes).length > 0 ? [{}] : [];
  for (const [key, values] of Object.entries(axes)) combos = combos.flatMap((c) => (values as unknown[]).map((v) => ({ ...c, [key]: v })));
  const extra: Record<string, unknown>[] = [];
  for (const inc of include) {
    const matching = combos.filter((c) => Object.keys(axes).every((k) => !(k in inc) || c[k] === inc[k]));
    for (const c of matching) Object.assign(c, inc);
    if (matching.length === 0) extra.push({ ...inc });
  }
  return [...combos, ...extra];
}

const stepsRunning = (j: Job, re: RegExp) => j.steps.filter((s) => s.run !== undefined && re.test(s.run));
const onlyStep = (j: Job, re: RegExp): Step => {
  const found = stepsRunning(j, re);
  expect(found, `exactly one step runs ${re}`).toHaveLength(1);
  return found[0] as Step;
};
const indexOfRun = (j: Job, re: RegExp) => j.steps.findIndex((s) => s.run !== undefined && re.test(s.run));

/** The workflow with one change made through the YAML document (so that the rest stays as written). */
function broken(change: (doc: YAML.Document) => void): string {
  const doc = YAML.parseDocument(WORKFLOW);
  change(doc);
  return doc.toString();
}

const OSES = ['ubuntu-latest', 'macos-latest', 'windows-latest'];

describe('.github/workflows/ci.yml against GitHub’s workflow schema', () => {
  it('has no errors', async () => {
    expect(await workflowErrors(WORKFLOW)).toEqual([]);
  });

  it('has no errors after a round trip through the YAML library (so the broken copies below fail for their change)', async () => {
    expect(await workflowErrors(broken(() => {}))).toEqual([]);
  });

  it.each([
    ['an unknown key under a job', "Unexpected value 'runs-onn'", (d: YAML.Document) => d.setIn(['jobs', 'test', 'runs-onn'], 'ubuntu-latest')],
    ['a step with neither uses nor run', 'not enough info', (d: YAML.Document) => d.setIn(['jobs', 'package', 'steps', 3], d.createNode({ name: 'does nothing' }))],
    ['a step with both uses and run', "Unexpected value 'run'", (d: YAML.Document) => d.setIn(['jobs', 'test', 'steps', 1, 'run'], 'echo')],
    ['the runner context where a job’s env is read (before a runner is chosen)', "Unrecognized named-value: 'runner'", (d: YAML.Document) => d.setIn(['jobs', 'package', 'env'], d.createNode({ OS: '${{ runner.os }}' }))],
    ['an unclosed expression', 'expression is not closed', (d: YAML.Document) => d.setIn(['jobs', 'package', 'runs-on'], '${{ matrix.os')],
    ['a job that needs a job that does not exist', "depends on unknown job 'tests'", (d: YAML.Document) => d.setIn(['jobs', 'package', 'needs'], 'tests')],
    ['a permission level that does not exist', "Unexpected value 'reed'", (d: YAML.Document) => d.setIn(['permissions', 'contents'], 'reed')],
  ])('a broken copy is reported: %s', async (_name, message, change) => {
    const errors = await workflowErrors(broken(change));
    expect(errors.some((e) => e.includes(message)), `expected an error containing "${message}", got:\n${errors.join('\n')}`).toBe(true);
  });

  it('reports YAML that does not parse', async () => {
    expect(await workflowErrors(`${WORKFLOW}\n  oops: [\n`)).not.toEqual([]);
  });
});

describe('what the project relies on in ci.yml', () => {
  it('runs on pushes and pull requests, reads the repository only, and cancels superseded runs', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(workflow.concurrency?.['cancel-in-progress']).toBe(true);
  });

  it('uses only GitHub’s own actions, pinned to a major version, with inputs those versions declare', () => {
    // From each action's action.yml at that major version.
    const declared: Record<string, string[]> = {
      'actions/checkout@v4': [
        'repository', 'ref', 'token', 'ssh-key', 'ssh-known-hosts', 'ssh-strict', 'ssh-user', 'persist-credentials', 'path', 'clean', 'filter',
        'sparse-checkout', 'sparse-checkout-cone-mode', 'fetch-depth', 'fetch-tags', 'show-progress', 'lfs', 'submodules', 'set-safe-directory', 'github-server-url',
      ],
      'actions/setup-node@v4': [
        'always-auth', 'node-version', 'node-version-file', 'architecture', 'check-latest', 'registry-url', 'scope', 'token', 'cache', 'cache-dependency-path', 'mirror', 'mirror-token',
      ],
      'actions/upload-artifact@v4': ['name', 'path', 'if-no-files-found', 'retention-days', 'compression-level', 'overwrite', 'include-hidden-files'],
    };
    for (const [id, j] of Object.entries(workflow.jobs)) {
      for (const s of j.steps.filter((st) => st.uses !== undefined)) {
        const uses = s.uses as string;
        expect(Object.keys(declared), `${id}: ${uses}`).toContain(uses);
        for (const input of Object.keys(s.with ?? {})) expect(declared[uses], `${id}: ${uses} with ${input}`).toContain(input);
      }
    }
  });

  it('never skips Electron’s download: the packaging needs Electron’s binary', () => {
    expect(WORKFLOW).not.toContain('ELECTRON_SKIP_BINARY_DOWNLOAD');
  });

  describe('job test', () => {
    const test = job('test');

    it('runs `npm ci` then `npm test` on Linux, macOS and Windows under Node 24, and on Linux under 20.19 and 22 too, with npm’s cache', () => {
      expect(test['runs-on']).toBe('${{ matrix.os }}');
      expect(matrixRows(test).map((r) => [r.os, r.node])).toEqual([
        ...OSES.map((os) => [os, '24']),
        ['ubuntu-latest', '20.19'],
        ['ubuntu-latest', '22'],
      ]);
      const setupNode = test.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
      expect(setupNode?.with).toEqual({ 'node-version': '${{ matrix.node }}', cache: 'npm' });
      // One job per OS and Node: the artifacts of a failed run must not collide.
      const artifacts = test.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'));
      expect(artifacts?.with?.name).toBe('test-artifacts-${{ matrix.os }}-node-${{ matrix.node }}');
      const npmTest = onlyStep(test, /^npm test$/);
      expect(npmTest.if, 'npm test runs on every OS').toBeUndefined();
      expect(indexOfRun(test, /^npm ci$/)).toBeGreaterThan(test.steps.findIndex((s) => s.uses?.startsWith('actions/checkout@')));
      expect(indexOfRun(test, /^npm ci$/)).toBeLessThan(indexOfRun(test, /^npm test$/));
    });

    it('points the renderer’s tests at the runner’s Google Chrome on macOS and Windows, before `npm test`', () => {
      expect(Object.fromEntries(matrixRows(test).map((r) => [r.os, r.chromium]))).toEqual({
        'ubuntu-latest': undefined,
        'macos-latest': '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
        'windows-latest': 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
      });
      const setPath = onlyStep(test, /CHROMIUM_PATH=/);
      expect(setPath.if).toBe('matrix.chromium');
      expect(setPath.run).toContain('>> "$GITHUB_ENV"');
      expect(test.steps.indexOf(setPath)).toBeLessThan(indexOfRun(test, /^npm test$/));
    });
  });

  describe('job package', () => {
    const pkg = job('package');
    const builder = YAML.parse(read('electron-builder.yml')) as {
      directories: { output: string };
      linux: { target: string[]; executableName: string };
      mac: { target: { target: string }[] };
      win: { target: { target: string }[] };
    };
    const output = builder.directories.output;

    it('builds, then packages with electron-builder for each OS’s own targets, publishing nothing', () => {
      expect(pkg['runs-on']).toBe('${{ matrix.os }}');
      // Node 24: electron-builder's @electron/rebuild and node-abi want 22.12 or later.
      expect(pkg.steps.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with).toEqual({ 'node-version': '24', cache: 'npm' });
      expect(matrixRows(pkg)).toEqual([
        { os: 'ubuntu-latest', target: '--linux' },
        { os: 'macos-latest', target: '--mac' },
        { os: 'windows-latest', target: '--win' },
      ]);
      const packaging = onlyStep(pkg, /electron-builder/);
      expect(packaging.run).toMatch(/^npx electron-builder \$\{\{ matrix\.target \}\} --publish never$/);
      expect(packaging.if).toBeUndefined();
      const order = [/^npm ci$/, /^npm run build$/, /electron-builder/].map((re) => indexOfRun(pkg, re));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    });

    it('keeps the installers of every configured target, from electron-builder.yml’s output folder', () => {
      const uploads = pkg.steps.filter((s) => s.uses?.startsWith('actions/upload-artifact@'));
      expect(uploads).toHaveLength(1);
      const upload = uploads[0] as Step;
      expect(upload.with?.['if-no-files-found']).toBe('error');
      expect(upload.with?.name).toContain('${{ runner.os }}'); // one artifact per OS
      const paths = String(upload.with?.path).trim().split('\n');
      for (const p of paths) expect(p.startsWith(`${output}/`), p).toBe(true);
      const extension: Record<string, string> = { AppImage: 'AppImage', deb: 'deb', dmg: 'dmg', nsis: 'exe' };
      const targets = [...builder.linux.target, ...builder.mac.target.map((t) => t.target), ...builder.win.target.map((t) => t.target)];
      for (const t of targets) expect(paths, `the ${t} installer`).toContain(`${output}/*.${extension[t] ?? `(unknown target ${t})`}`);
      expect(pkg.steps.indexOf(upload)).toBeGreaterThan(indexOfRun(pkg, /electron-builder/));
    });

    describe('the smoke start on Linux', () => {
      const smoke = onlyStep(pkg, /xvfb-run/);
      const script = smoke.run ?? '';

      it('runs on Linux only, under Xvfb, the packaged app from the unpacked folder, with bounded waits', () => {
        expect(smoke.if).toBe("runner.os == 'Linux'");
        expect(smoke.shell).toBe('bash');
        expect(script).toMatch(/xvfb-run -a /);
        expect(script).toContain(`unpacked=${output}/linux-unpacked`);
        expect(script).toContain(`"$unpacked/${builder.linux.executableName}"`);
        expect(script).toMatch(/^timeout \d+ bash -c 'until /m); // waiting for the app to come up
        expect(script).toMatch(/^timeout \d+ tail --pid=/m); // waiting for it to quit
        expect(smoke).toHaveProperty('timeout-minutes');
        expect(pkg.steps.indexOf(smoke)).toBeGreaterThan(indexOfRun(pkg, /electron-builder/));
      });

      it('gives the app a temporary home and a temporary spool (the default spool is under HOME)', () => {
        expect(smoke.env?.DUMBWAITER_HOME).toMatch(/^\$\{\{ runner\.temp \}\}\//);
        expect(smoke.env?.SMOKE_HOME).toMatch(/^\$\{\{ runner\.temp \}\}\//);
        expect(script).toMatch(/HOME="\$SMOKE_HOME" xvfb-run /);
        // main/core/home.ts: defaultSpoolDir() is ~/<APP_NAME>/spool; the daemon's heartbeat is host.json in it.
        expect(script).toContain(`host_json="$SMOKE_HOME/${APP_NAME}/spool/host.json"`);
      });

      it('waits for the signs the app gives: its daemon’s lock and heartbeat, and a clean quit on SIGTERM', () => {
        const lockInfo = path.basename(homePaths('/').lockInfo);
        expect(script).toContain(`"$DUMBWAITER_HOME/${lockInfo}"`);
        expect(script).toContain('\\"up\\": true');
        expect(script).toContain(`grep -q '"up": false'`);
        expect(script).toContain(`test ! -e "$DUMBWAITER_HOME/${lockInfo}"`);
        expect(script).toMatch(/kill -TERM "\$pid"/);
        // The lock names the app's daemon by the command main/electron/main.ts gives it.
        const command = /test "\$\(jq -r \.command [^)]*\)" = "([^"]+)"/.exec(script)?.[1];
        expect(command).toBeDefined();
        expect(read('main/electron/main.ts')).toContain(`command: '${command}'`);
      });
    });
  });
});
