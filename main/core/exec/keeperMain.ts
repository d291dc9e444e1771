// The run keeper's entry (keeperServe.ts) as a plain Node process: `keeperMain <keeper folder>
// [version]`, started by the daemon (keeper.ts) in a session of its own. It says `ready` on stdout
// once it listens, and writes nothing there again (its reader may be gone).
import { serveKeeper } from './keeperServe';

const [dir, version] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('the run keeper is started by the daemon: keeperMain <keeper folder> [version]\n');
  process.exit(2);
}
process.stdout.on('error', () => {}); // the daemon that started it died before reading `ready`
serveKeeper(dir, version || undefined, (then) => process.stdout.write('ready\n', () => then?.()));
