// The question a Quit asks while runs are going: leave them running (recorded when Dumbwaiter starts
// again) or stop them (ended, recorded as uncertain), or not quit. Native, so that a page gone wrong
// can neither answer it nor hide it; the runs_on_stop setting is its default answer.
import { dialog } from 'electron';
import type { Settings } from '../core/settings';

type RunsOnStop = Settings['runs_on_stop'];

const LEAVE = 0;
const STOP = 1;
const CANCEL = 2;

/** What to do with the `running` runs going, as the person answers: null to keep the app running. */
export async function askQuitWithRuns(running: number, settings: Pick<Settings, 'runs_on_stop' | 'shutdown_grace_s'>): Promise<RunsOnStop | null> {
  const one = running === 1;
  const runs = one ? '1 run' : `${running} runs`;
  const grace = settings.shutdown_grace_s;
  const { response } = await dialog.showMessageBox({
    type: 'question',
    title: 'Quit Dumbwaiter',
    message: `${runs} ${one ? 'is' : 'are'} still going. Quit anyway?`,
    detail:
      `Leave ${one ? 'it' : 'them'} running: ${one ? 'it goes' : 'they go'} on, and ${one ? 'is' : 'are'} recorded when Dumbwaiter starts again.\n\n` +
      `Stop ${one ? 'it' : 'them'}: ${one ? 'it' : 'they'} ${grace > 0 ? `${one ? 'gets' : 'get'} up to ${grace} s to finish, then ${one ? 'is' : 'are'}` : one ? 'is' : 'are'} ended and recorded as uncertain.`,
    buttons: [`Leave ${runs} running`, one ? 'Stop it' : 'Stop them', 'Cancel'],
    defaultId: settings.runs_on_stop === 'leave' ? LEAVE : STOP,
    cancelId: CANCEL,
    noLink: true,
  });
  return response === LEAVE ? 'leave' : response === STOP ? 'stop' : null;
}
