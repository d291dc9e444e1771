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
  const w = one ? { them: 'it', they: 'it', are: 'is', go: 'goes', get: 'gets' } : { them: 'them', they: 'they', are: 'are', go: 'go', get: 'get' };
  const grace = settings.shutdown_grace_s;
  const ended = grace > 0 ? `${w.get} up to ${grace} s to finish, then ${w.are} ended` : `${w.are} ended`;
  const { response } = await dialog.showMessageBox({
    type: 'question',
    title: 'Quit Dumbwaiter',
    message: `${runs} ${w.are} still going. Quit anyway?`,
    detail:
      `Leave ${w.them} running: ${w.they} ${w.go} on, and ${w.are} recorded when Dumbwaiter starts again.\n\n` +
      `Stop ${w.them}: ${w.they} ${ended} and recorded as uncertain.`,
    buttons: [`Leave ${runs} running`, `Stop ${w.them}`, 'Cancel'],
    defaultId: settings.runs_on_stop === 'leave' ? LEAVE : STOP,
    cancelId: CANCEL,
    noLink: true,
  });
  return response === LEAVE ? 'leave' : response === STOP ? 'stop' : null;
}
