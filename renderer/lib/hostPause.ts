// Pausing and resuming the host, said the same way wherever it is done (the sidebar, Activity's banner).
import { api, errorText } from '../api';
import { toast } from '../stores/toasts';

/** Returns whether the host took the change. */
export async function setHostPaused(paused: boolean): Promise<boolean> {
  try {
    await api.host.setPaused({ paused });
    toast(paused ? 'Host paused: nothing new starts' : 'Host resumed');
    return true;
  } catch (e) {
    toast(errorText(e), 'error');
    return false;
  }
}
