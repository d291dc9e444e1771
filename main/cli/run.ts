// The command line's entry: what bin/dumbwaiter.js loads (bundled into dist/host/cli.mjs). `--version`
// answers before the rest of the host is loaded (a chunk of its own in the bundle).
import { APP_VERSION } from '../core/version';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === 'version')) {
  process.stdout.write(`${APP_VERSION}\n`);
} else {
  const { main } = await import('./main');
  process.exitCode = await main(argv);
}
