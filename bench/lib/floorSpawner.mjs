// The floor's Node spawner (floorSteps.mjs, `spawner`): a minimal Node process that starts the floor
// host's runs over an IPC channel, as the daemon's spawner does (the host's heap is never forked), and
// exits once the host is gone.
import { runOne } from './floorSteps.mjs';

process.on('message', (m) => runOne(m.argv, (r) => process.send({ id: m.id, ...r })));
process.on('disconnect', () => process.exit(0));
