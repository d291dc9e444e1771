// dw_spawn: starts a run with posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK), so the cost does not grow
// with the caller's memory as fork's does) and reports its end through a pidfd watched on Node's event
// loop, reaping that pid only. Linux only; main/core/exec/nativeSpawn.ts falls back to Node's spawn
// wherever this is not built or the kernel has no pidfd_open. Plain N-API C: ABI-stable across Node
// 20, 22, 24 and Electron.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

extern char **environ;

static int pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

#define CHECK(call)                                                                                                   \
  do {                                                                                                                \
    if ((call) != napi_ok) return fail(env, "internal", "N-API call failed: " #call);                                \
  } while (0)

static napi_value fail(napi_env env, const char *code, const char *message) {
  napi_throw_error(env, code, message);
  return NULL;
}

/** Throws an Error whose `errno` is the negative errno (as Node's), for nativeSpawn.ts to name. */
static napi_value fail_errno(napi_env env, int err, const char *syscall_name) {
  napi_value e, msg, no, sc;
  napi_create_string_utf8(env, strerror(err), NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &e);
  napi_create_int32(env, -err, &no);
  napi_set_named_property(env, e, "errno", no);
  napi_create_string_utf8(env, syscall_name, NAPI_AUTO_LENGTH, &sc);
  napi_set_named_property(env, e, "syscall", sc);
  napi_throw(env, e);
  return NULL;
}

/** A string or Buffer as a NUL-terminated copy (malloc'd); NULL with a JS error thrown when it is neither or holds a NUL. */
static char *bytes_of(napi_env env, napi_value v) {
  bool is_buf = false;
  napi_is_buffer(env, v, &is_buf);
  if (is_buf) {
    void *data;
    size_t len;
    if (napi_get_buffer_info(env, v, &data, &len) != napi_ok) return NULL;
    if (memchr(data, 0, len)) return (fail(env, "ERR_INVALID_ARG_VALUE", "an argument holds a NUL byte"), NULL);
    char *s = malloc(len + 1);
    if (!s) return NULL;
    memcpy(s, data, len);
    s[len] = 0;
    return s;
  }
  size_t len;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return (fail(env, "ERR_INVALID_ARG_TYPE", "expected a string or a Buffer"), NULL);
  char *s = malloc(len + 1);
  if (!s) return NULL;
  napi_get_value_string_utf8(env, v, s, len + 1, &len);
  if (strlen(s) != len) return (free(s), fail(env, "ERR_INVALID_ARG_VALUE", "an argument holds a NUL byte"), NULL);
  return s;
}

static void free_list(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

/** A JS array of strings or Buffers as a NULL-terminated list. */
static char **list_of(napi_env env, napi_value arr) {
  uint32_t n;
  if (napi_get_array_length(env, arr, &n) != napi_ok) return (fail(env, "ERR_INVALID_ARG_TYPE", "expected an array"), NULL);
  char **list = calloc(n + 1, sizeof(char *));
  if (!list) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    napi_get_element(env, arr, i, &el);
    if (!(list[i] = bytes_of(env, el))) return (free_list(list), NULL);
  }
  return list;
}

/**
 * Every signal, glibc's own two (32, 33) included: sigfillset leaves those out, and posix_spawn then
 * sets them to be ignored in the child, which an exec keeps; libuv's fork path (Node's spawn) resets
 * every signal to its default. Set bit by bit, as sigaddset refuses them.
 */
static void every_signal(sigset_t *set) {
  const size_t bits = 8 * sizeof(unsigned long);
  sigfillset(set);
  unsigned long *words = (unsigned long *)set;
  for (int sig = 1; sig < NSIG; sig++) words[(size_t)(sig - 1) / bits] |= 1UL << ((size_t)(sig - 1) % bits);
}

/** `fd` duplicated at `min` or above, close-on-exec; -1 on error. */
static int high(int fd, int min) { return fcntl(fd, F_DUPFD_CLOEXEC, min); }

/** The PATH of the child's environment (execvp's search, as libuv does it: the child's, not ours). */
static const char *path_of(char **envp) {
  for (char **e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) return *e + 5;
  return "/usr/local/bin:/usr/bin:/bin";
}

/** posix_spawn of `file`, searched in PATH when it has no slash, as execvp searches: returns 0 or an errno. */
static int spawn_searched(pid_t *pid, const char *file, posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr, char **argv, char **envp) {
  if (file[0] == 0) return ENOENT;
  if (strchr(file, '/')) return posix_spawn(pid, file, fa, attr, argv, envp);
  const char *p = path_of(envp);
  size_t flen = strlen(file);
  int seen_eacces = 0, err = ENOENT;
  for (;;) {
    const char *end = strchrnul(p, ':');
    size_t dlen = (size_t)(end - p);
    char *full = malloc(dlen + flen + 2);
    if (!full) return ENOMEM;
    if (dlen == 0) {
      memcpy(full, file, flen + 1); // an empty entry is the current folder
    } else {
      memcpy(full, p, dlen);
      full[dlen] = '/';
      memcpy(full + dlen + 1, file, flen + 1);
    }
    err = posix_spawn(pid, full, fa, attr, argv, envp);
    free(full);
    if (err == 0) return 0;
    if (err == EACCES) seen_eacces = 1;
    else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ELOOP && err != ENAMETOOLONG) return err;
    if (*end == 0) break;
    p = end + 1;
  }
  return seen_eacces ? EACCES : err;
}

/** A run that cannot be watched is ended at once and reaped, so that none runs unseen. */
static void end_now(pid_t pid) {
  kill(-pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

typedef struct {
  uv_poll_t poll;
  pid_t pid;
  int pidfd;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
} watch_t;

static void watch_closed(uv_handle_t *h) {
  watch_t *w = (watch_t *)h;
  close(w->pidfd);
  free(w);
}

/** The pidfd is readable: the run's main process has exited. Reaps it (that pid alone) and calls back (code, signal). */
static void on_exit_ready(uv_poll_t *poll, int status, int events) {
  (void)events;
  watch_t *w = (watch_t *)poll;
  int st = 0;
  pid_t r;
  do r = waitpid(w->pid, &st, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) {
    if (status == 0) return; // not yet (a spurious wake-up)
    // The watch itself failed: the run is ended and reaped now rather than left unseen.
    kill(-w->pid, SIGKILL);
    do r = waitpid(w->pid, &st, 0);
    while (r < 0 && errno == EINTR);
  }
  uv_poll_stop(poll);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, args[2], result;
  napi_get_reference_value(env, w->callback, &cb);
  napi_get_global(env, &recv); // napi_make_callback wants an object
  if (r < 0) {
    // Reaped by someone else (a SIGCHLD set to SIG_IGN in this process): the status is lost.
    napi_get_null(env, &args[0]);
    napi_get_null(env, &args[1]);
  } else if (WIFSIGNALED(st)) {
    napi_get_null(env, &args[0]);
    napi_create_int32(env, WTERMSIG(st), &args[1]);
  } else {
    napi_create_int32(env, WEXITSTATUS(st), &args[0]);
    napi_get_null(env, &args[1]);
  }
  napi_make_callback(env, w->context, recv, cb, 2, args, &result);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->context);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, watch_closed);
}

/**
 * spawn(file, argv, envp, cwd, fds, onExit) -> { pid, stdout, stderr }: the run in a session (and
 * process group) of its own, stdin /dev/null, stdout and stderr pipes whose read ends are returned,
 * fds[i] as the child's 3 + i, cwd entered after those are in place (so /proc/self/fd/N names the
 * child's N), every other descriptor closed, signals at their defaults and none blocked. onExit(code,
 * signal number) is called once, later, from the event loop.
 */
static napi_value Spawn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  CHECK(napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 6) return fail(env, "ERR_INVALID_ARG_TYPE", "spawn(file, argv, envp, cwd, fds, onExit)");
  uv_loop_t *loop;
  CHECK(napi_get_uv_event_loop(env, &loop));

  char *file = NULL, *cwd = NULL, **argv = NULL, **envp = NULL;
  int *src = NULL, out[2] = {-1, -1}, err[2] = {-1, -1}, pidfd = -1;
  uint32_t nfds = 0;
  napi_value ret = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int fa_ok = 0, attr_ok = 0;

  if (!(file = bytes_of(env, args[0])) || !(argv = list_of(env, args[1])) || !(envp = list_of(env, args[2])) || !(cwd = bytes_of(env, args[3]))) goto done;
  if (napi_get_array_length(env, args[4], &nfds) != napi_ok) { fail(env, "ERR_INVALID_ARG_TYPE", "fds: expected an array"); goto done; }
  src = calloc(nfds + 1, sizeof(int));
  if (!src) { fail_errno(env, ENOMEM, "spawn"); goto done; }
  for (uint32_t i = 0; i < nfds; i++) src[i] = -1;
  // Every source above the numbers the child's descriptors take (3 .. 3+nfds-1), so that no dup2 below
  // overwrites a source a later one reads.
  const int floor_fd = 3 + (int)nfds;
  for (uint32_t i = 0; i < nfds; i++) {
    napi_value el;
    int32_t fd;
    napi_get_element(env, args[4], i, &el);
    if (napi_get_value_int32(env, el, &fd) != napi_ok) { fail(env, "ERR_INVALID_ARG_TYPE", "fds: expected descriptors"); goto done; }
    if ((src[i] = high(fd, floor_fd)) < 0) { fail_errno(env, errno, "dup"); goto done; }
  }
  int tmp[2];
  if (pipe2(tmp, O_CLOEXEC) < 0) { fail_errno(env, errno, "pipe"); goto done; }
  out[0] = tmp[0];
  out[1] = high(tmp[1], floor_fd);
  close(tmp[1]);
  if (pipe2(tmp, O_CLOEXEC) < 0) { fail_errno(env, errno, "pipe"); goto done; }
  err[0] = tmp[0];
  err[1] = high(tmp[1], floor_fd);
  close(tmp[1]);
  if (out[1] < 0 || err[1] < 0) { fail_errno(env, errno, "dup"); goto done; }

  posix_spawn_file_actions_init(&fa);
  fa_ok = 1;
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  for (uint32_t i = 0; i < nfds; i++) posix_spawn_file_actions_adddup2(&fa, src[i], 3 + (int)i);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Whatever the host holds without close-on-exec (inherited from what started it) stays out of the run.
  posix_spawn_file_actions_addclosefrom_np(&fa, floor_fd);
#endif
  if (posix_spawn_file_actions_addchdir_np(&fa, cwd) != 0) { fail_errno(env, ENOMEM, "spawn"); goto done; }

  posix_spawnattr_init(&attr);
  attr_ok = 1;
  sigset_t none, all;
  sigemptyset(&none);
  every_signal(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all); // Node ignores SIGPIPE; an ignored signal would stay ignored across exec
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid;
  int e = spawn_searched(&pid, file, &fa, &attr, argv, envp);
  if (e != 0) { fail_errno(env, e, "spawn"); goto done; }
  pidfd = pidfd_open(pid);
  if (pidfd < 0) {
    // Without a pidfd its end cannot be waited for here without blocking: it must not run unwatched.
    int pe = errno;
    end_now(pid);
    fail_errno(env, pe, "pidfd_open");
    goto done;
  }
  watch_t *w = calloc(1, sizeof(watch_t));
  napi_value name;
  if (!w) { fail_errno(env, ENOMEM, "spawn"); goto done; }
  w->pid = pid;
  w->pidfd = pidfd;
  w->env = env;
  napi_create_string_utf8(env, "dw_spawn", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, args[5], 1, &w->callback);
  napi_async_init(env, NULL, name, &w->context);
  int ue = uv_poll_init(loop, &w->poll, pidfd);
  if (ue == 0 && (ue = uv_poll_start(&w->poll, UV_READABLE, on_exit_ready)) != 0) {
    uv_close((uv_handle_t *)&w->poll, watch_closed); // closes the pidfd
    pidfd = -1;
  }
  if (ue != 0) {
    end_now(pid); // not watched, it would never be reaped
    napi_delete_reference(env, w->callback);
    napi_async_destroy(env, w->context);
    if (pidfd >= 0) free(w);
    fail_errno(env, -ue, "uv_poll");
    goto done;
  }
  pidfd = -1; // the watch owns it

  napi_value v;
  napi_create_object(env, &ret);
  napi_create_int32(env, pid, &v);
  napi_set_named_property(env, ret, "pid", v);
  napi_create_int32(env, out[0], &v);
  napi_set_named_property(env, ret, "stdout", v);
  napi_create_int32(env, err[0], &v);
  napi_set_named_property(env, ret, "stderr", v);
  out[0] = err[0] = -1; // the caller's now

done:
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  if (attr_ok) posix_spawnattr_destroy(&attr);
  for (uint32_t i = 0; src && i < nfds; i++)
    if (src[i] >= 0) close(src[i]);
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
  }
  if (pidfd >= 0) close(pidfd);
  free(src);
  free(file);
  free(cwd);
  free_list(argv);
  free_list(envp);
  return ret;
}

/** Whether this kernel has pidfd_open (Linux 5.3): without it, runs go through Node's spawn. */
static napi_value HasPidfd(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = pidfd_open(getpid());
  napi_value v;
  napi_get_boolean(env, fd >= 0, &v);
  if (fd >= 0) close(fd);
  return v;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, Spawn, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  napi_create_function(env, "hasPidfd", NAPI_AUTO_LENGTH, HasPidfd, NULL, &fn);
  napi_set_named_property(env, exports, "hasPidfd", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
