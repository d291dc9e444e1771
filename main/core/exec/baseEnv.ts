// The fixed environment of every run: a minimal base from the host, never anything from the request.
const BASE_VARS = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'USER', 'LOGNAME', 'TMPDIR', 'TZ'];
const WINDOWS_VARS = ['SystemRoot', 'SystemDrive', 'PATHEXT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'ComSpec'];

export function runEnv(opEnv: Record<string, string>, requestId: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of process.platform === 'win32' ? [...BASE_VARS, ...WINDOWS_VARS] : BASE_VARS) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return { ...env, ...opEnv, DUMBWAITER_REQUEST_ID: requestId };
}
