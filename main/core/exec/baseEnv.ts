// The fixed environment of every run: a minimal base from the host, never anything from the request.
const BASE_VARS = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'USER', 'LOGNAME', 'TMPDIR', 'TZ'];
const WINDOWS_VARS = ['SystemRoot', 'SystemDrive', 'PATHEXT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'ComSpec'];

/**
 * Set to a random token of each run, so that the processes a run leaves behind can be found even
 * after they left its process group (leftovers.ts). Not the request id: the sandbox chooses that, and
 * the same id runs on other hosts and in other test runs on this machine.
 */
export const RUN_MARKER_VAR = 'DUMBWAITER_RUN_MARKER';

/** Set by the host for every run: an operation's `env` cannot set them. */
export const HOST_VARS = ['DUMBWAITER_REQUEST_ID', RUN_MARKER_VAR];

export function runEnv(opEnv: Record<string, string>, requestId: string, runMarker: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of process.platform === 'win32' ? [...BASE_VARS, ...WINDOWS_VARS] : BASE_VARS) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return { ...env, ...opEnv, DUMBWAITER_REQUEST_ID: requestId, [RUN_MARKER_VAR]: runMarker };
}
