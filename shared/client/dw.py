#!/usr/bin/env python3
"""dw: the Dumbwaiter client for a sandbox (Python 3.8 or later, standard library only).

Asks the host to run allowlisted operations by writing signed request files into the shared spool
folder, and reads their results back (protocol v1; docs/SANDBOX.md describes the commands).

    dw ops [--json]
    dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S] [LIMITS]
    dw status ID [--json]
    dw wait ID [--timeout S] [--json]
    dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S] [LIMITS]
    dw plan FILE|- [--intent TEXT] [--expires DURATION] [--id ID] [--timeout S] [--json]
    dw cancel ID
    dw inbox [--json]
    dw doctor

The spool is --spool DIR or $DUMBWAITER_SPOOL; the key file is --key-file FILE or $DUMBWAITER_KEY_FILE.
"""

import base64
import binascii
import errno
import hashlib
import hmac
import json
import math
import os
import re
import signal
import stat
import sys
import time
import unicodedata
from datetime import datetime, timedelta, timezone

PROTOCOL = 1
MAX_REQUEST_BYTES = 64 * 1024
MAX_INTENT_CHARS = 2000
HEARTBEAT_FRESH_S = 20.0  # the host beats every 5 s: older than this, it is not running
HEARTBEAT_FUTURE_S = 60.0  # further ahead than this, host.json's clock or the file itself is wrong
PING_WAIT_S = 10.0
PING_WAIT_DOWN_S = 5.0  # doctor's ping when host.json says the host is down: a signed answer proves it wrong
UNSIGNED_GRACE_S = 2.0  # how long an unsigned refusal waits for a signed answer once the request left queue/
CONFLICT_GRACE_S = 2.0  # how long a conflict seen in a result waits for the host's inbox message
DOMAIN = "dumbwaiter-request-v1\n"
HOST_DOMAINS = {"result": b"dumbwaiter-result-v1\n", "inbox": b"dumbwaiter-inbox-v1\n"}
# docs/PROTOCOL.md, "Authenticated results and inbox messages": the fixed prefix of a signed host document.
HOST_DOC_PREFIX_RE = re.compile(rb'\{"auth":\{"key_id":"([A-Za-z0-9_-]{1,64})","mac":"([0-9a-f]{64})"\},')
RESULT_MAX_BYTES = 64 * 1024 * 1024
SPOOL_FILE_MAX_BYTES = 8 * 1024 * 1024
LOG_STEP_BYTES = 1 << 20  # read of the live log per poll: a huge (sparse) log never holds up --timeout
LIVE_LOG_MAX_BYTES = 65 * 1024 * 1024  # streamed at most (the largest output kept, 64 MiB, and the host's lines past it); past it the host's signed output is shown instead
# inbox/: only names the host gives (newest first), each message small; the host writes every one anew.
INBOX_NAME_RE = re.compile(r"\d{8}T\d{9}Z-[0-9a-f]{8}\.json")
INBOX_KEEP = 256
INBOX_MESSAGE_MAX_BYTES = 64 * 1024
HOST_WORD_RE = re.compile(r"[A-Za-z0-9_.+-]{1,40}")  # host.json's app_version and host_id, as shown
# Refusals of a file the host could not authenticate: their results cannot be signed for any key.
UNSIGNED_REFUSAL_CODES = ("bad_envelope", "unknown_key", "revoked_key", "bad_signature")

REQUEST_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
KEY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
SECRET_RE = re.compile(r"[A-Za-z0-9_-]+")
MAC_RE = re.compile(r"[0-9a-f]{64}")
RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
INTEGER_RE = re.compile(r"[+-]?[0-9]+")
MAX_SAFE_INTEGER = 2 ** 53 - 1

OP_NAME_RE = re.compile(r"[a-z][a-z0-9._-]{0,63}")
WHOLE_RE = re.compile(r"[0-9]+")
DURATION_RE = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")
# Copies of shared/protocol/envelope.ts and plan.ts (this file imports nothing of ours); a test holds them equal.
MAX_REQUEST_LIMIT = 2 ** 31 - 1  # what the host takes as a per-request limit (timeout_s, max_output_bytes)
PLAN_OP = "dumbwaiter.plan"
MAX_PLAN_STEPS = 50
MAX_PLAN_LIFETIME_S = 24 * 3600  # the host refuses a plan's expiry further ahead
DEFAULT_PLAN_EXPIRES_S = 3600  # how long an approved plan may be used unless the agent says

FINAL_STATES = ("succeeded", "failed", "rejected", "denied", "expired", "cancelled")
TERMINAL_STATES = FINAL_STATES + ("uncertain",)

# Exit codes (docs/SANDBOX.md).
EXIT_OK = 0
EXIT_USAGE = 64
EXIT_BAD_ARGS = 65
EXIT_NO_KEY = 66
EXIT_NO_SPOOL = 69
EXIT_NO_PERM = 77
EXIT_REJECTED = 80
EXIT_DENIED = 81
EXIT_EXPIRED = 82
EXIT_CANCELLED = 83
EXIT_UNCERTAIN = 84
EXIT_TIMEOUT = 85
EXIT_NO_EXIT_CODE = 86
EXIT_CONFLICT = 87
EXIT_INTERRUPTED = 130

STATE_EXIT = {
    "rejected": EXIT_REJECTED,
    "denied": EXIT_DENIED,
    "expired": EXIT_EXPIRED,
    "cancelled": EXIT_CANCELLED,
    "uncertain": EXIT_UNCERTAIN,
    "conflict": EXIT_CONFLICT,
}


class DwError(Exception):
    """An error to report on stderr, with the exit code to leave with."""

    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Output (always UTF-8, whatever the locale)


def _write(stream, text):
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        stream.flush()
        buf.write(text.encode("utf-8", "replace") if isinstance(text, str) else text)
        buf.flush()
    else:
        stream.write(text if isinstance(text, str) else text.decode("utf-8", "replace"))
        stream.flush()


def out(text=""):
    _write(sys.stdout, text)


def outln(text=""):
    _write(sys.stdout, text + "\n")


def err(text):
    _write(sys.stderr, text if text.endswith("\n") else text + "\n")


def warn(text):
    err("dw: " + text)


# ---------------------------------------------------------------------------------------------
# Protocol helpers: ids, time, canonical JSON, keys and signing


def is_request_id(s):
    return isinstance(s, str) and REQUEST_ID_RE.fullmatch(s) is not None and not s.endswith(".tmp")


def _base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    s = ""
    while n:
        n, r = divmod(n, 36)
        s = digits[r] + s
    return s


def fresh_id():
    """A time-sortable unique id: "r-" + milliseconds in base 36 + "-" + 64 random bits in hex."""
    ms = int(time.time() * 1000)
    return "r-" + _base36(ms).rjust(9, "0") + "-" + binascii.hexlify(os.urandom(8)).decode("ascii")


def now_iso(ts=None):
    """RFC 3339 UTC with milliseconds and "Z", like JavaScript's toISOString()."""
    if ts is None:
        ts = time.time()
    dt = datetime.fromtimestamp(ts, timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def parse_time(s):
    """Seconds since the epoch of an RFC 3339 time, or None when it is not one."""
    if not isinstance(s, str):
        return None
    m = RFC3339_RE.fullmatch(s)
    if not m:
        return None
    year, month, day, hour, minute, second = [int(m.group(i)) for i in range(1, 7)]
    frac = float(m.group(7)) if m.group(7) else 0.0
    zone = m.group(8)
    try:  # anyone can write host.json: a zone of +99:00 or the year 1 must not crash dw
        if zone in ("Z", "z"):
            tz = timezone.utc
        else:
            zh, zm = int(zone[1:3]), int(zone[4:6])
            if zh > 23 or zm > 59:
                return None
            tz = timezone((1 if zone[0] == "+" else -1) * timedelta(hours=zh, minutes=zm))
        dt = datetime(year, month, day, hour, minute, min(second, 59), tzinfo=tz)
        return dt.timestamp() + frac
    except (ValueError, OverflowError):
        return None


def _js_number(x):
    """A number as JavaScript's JSON.stringify writes it."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        # JavaScript holds every number as a double: a larger integer has already been rounded there
        # (and one beyond the largest double is Infinity, which JSON.stringify writes as null).
        if abs(x) <= MAX_SAFE_INTEGER:
            return str(x)
        try:
            return _js_number(float(x))
        except OverflowError:
            return "null"
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    # Shortest round-trip digits (Python's repr gives the same digits as JavaScript), laid out the
    # way ECMAScript's Number::toString does.
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    if "e" in r:
        mant, exp = r.split("e")
        exp = int(exp)
    else:
        mant, exp = r, 0
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    digits = (ip + fp).lstrip("0")
    lead = len(ip + fp) - len((ip + fp).lstrip("0"))
    n = len(ip) + exp - lead  # position of the decimal point relative to the digits
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + es
    return sign + s


def _js_string(s):
    """A string as JavaScript's JSON.stringify writes it (lone surrogates escaped)."""
    outp = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            outp.append('\\"')
        elif ch == "\\":
            outp.append("\\\\")
        elif c < 0x20:
            outp.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(c, "\\u%04x" % c))
        elif 0xD800 <= c <= 0xDFFF:
            outp.append("\\u%04x" % c)
        else:
            outp.append(ch)
    outp.append('"')
    return "".join(outp)


def canonical_json(value):
    """Sorted keys (by UTF-16 code units, as JavaScript sorts), no spaces, non-ASCII kept as is:
    the same text as the TypeScript canonicalJson() (shared/protocol/canonicalJson.ts)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value.keys(), key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(_js_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError("not JSON: %r" % (value,))


def stable_id(key_id, op, args, intent=""):
    """A deterministic request id for (key_id, op, args, intent): "s-" + 32 hex digits of the SHA-256
    of the canonical JSON of {"args", "intent", "key_id", "op"} (docs/PROTOCOL.md, "Stable ids"). A
    caller that retries after a crash gets the same id; another sandbox cannot foresee it."""
    if not isinstance(key_id, str) or not KEY_ID_RE.fullmatch(key_id):
        raise ValueError("not a key id: %r" % (key_id,))
    if not isinstance(op, str):
        raise ValueError("the operation must be a string, got %r" % (op,))
    text = canonical_json({"args": args if args is not None else {}, "intent": intent if intent is not None else "", "key_id": key_id, "op": op})
    return "s-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def decode_secret(secret):
    if not isinstance(secret, str) or not SECRET_RE.fullmatch(secret) or len(secret) % 4 == 1:
        raise ValueError("the secret is not base64url without padding")
    raw = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    if len(raw) != 32:
        raise ValueError("the secret must decode to 32 bytes, got %d" % len(raw))
    return raw


def compute_mac(secret_bytes, key_id, payload):
    msg = (DOMAIN + key_id + "\n" + payload).encode("utf-8")
    return hmac.new(secret_bytes, msg, hashlib.sha256).hexdigest()


def verify_envelope(envelope, key_file):
    """True when `envelope` is well formed and signed by `key_file` (used by the self-test)."""
    if not isinstance(envelope, dict) or envelope.get("v") != 1 or type(envelope.get("v")) is not int:
        return False
    key_id, payload, mac = envelope.get("key_id"), envelope.get("payload"), envelope.get("mac")
    if not isinstance(key_id, str) or not KEY_ID_RE.fullmatch(key_id) or key_id != key_file.get("key_id"):
        return False
    if not isinstance(payload, str) or not isinstance(mac, str) or not MAC_RE.fullmatch(mac):
        return False
    try:
        secret = decode_secret(key_file.get("secret"))
    except ValueError:
        return False
    return hmac.compare_digest(compute_mac(secret, key_id, payload), mac)


def request_hash(key_id, op, args):
    """What the host binds a request id to (docs/PROTOCOL.md): sha256 hex of the canonical JSON of
    {args, key_id, op}. A signed result with another hash answers another request of this key."""
    text = canonical_json({"args": args, "key_id": key_id, "op": op})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def open_host_doc(kind, data, key_id, secret):
    """Verifies a host document (the file's bytes) for this key: ("ok", doc) when the host signed it
    for us, else (why, key id in its prefix or None) with why "unsigned", "other_key" or "bad_mac".
    The MAC is over the exact bytes of T, the document after the prefix with its brace put back."""
    m = HOST_DOC_PREFIX_RE.match(data)
    if not m:
        return "unsigned", None
    signer = m.group(1).decode("ascii")
    if signer != key_id:
        return "other_key", signer
    text = b"{" + data[m.end():]
    msg = HOST_DOMAINS[kind] + key_id.encode("ascii") + b"\n" + text
    if not hmac.compare_digest(hmac.new(secret, msg, hashlib.sha256).hexdigest(), m.group(2).decode("ascii")):
        return "bad_mac", signer
    # Signed by the host, so its JSON is the host's own: a parse failure is not expected; treated as bad.
    try:
        doc = json.loads(text.decode("utf-8"), parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return "bad_mac", signer
    return ("ok", doc) if isinstance(doc, dict) else ("bad_mac", signer)


class Key(object):
    def __init__(self, path, key_id, secret):
        self.path = path
        self.key_id = key_id
        self.secret = secret


def load_key(path):
    """Reads and checks a key file; DwError 66 when it is missing or not valid."""
    if not path:
        raise DwError(EXIT_NO_KEY, "no key file: pass --key-file FILE or set DUMBWAITER_KEY_FILE")
    try:
        with open(path, "rb") as f:
            raw = f.read(65536)
    except OSError as e:
        raise DwError(EXIT_NO_KEY, "cannot read the key file %s: %s" % (path, e.strerror or e))
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise DwError(EXIT_NO_KEY, "the key file %s is not JSON" % path)
    if not isinstance(doc, dict) or doc.get("v") != 1:
        raise DwError(EXIT_NO_KEY, 'the key file %s is not a Dumbwaiter key file (expected {"v": 1, "key_id", "secret"})' % path)
    key_id = doc.get("key_id")
    if not isinstance(key_id, str) or not KEY_ID_RE.fullmatch(key_id):
        raise DwError(EXIT_NO_KEY, "the key file %s has no valid key_id" % path)
    try:
        secret = decode_secret(doc.get("secret"))
    except ValueError as e:
        raise DwError(EXIT_NO_KEY, "the key file %s is not valid: %s" % (path, e))
    return Key(path, key_id, secret)


# ---------------------------------------------------------------------------------------------
# The spool


def _uid():
    return getattr(os, "geteuid", lambda: -1)()


def read_spool_file(path, cap):
    """(bytes, None, version) for a regular file of at most `cap` bytes, else (None, why, version):
    why is None when the file is simply not there. A link is never followed and nothing blocks: a
    FIFO planted at the name is opened without waiting for a writer, then refused by fstat."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return None, (None if e.errno in (errno.ENOENT, errno.ENOTDIR) else "it cannot be read: %s" % (e.strerror or e)), None
    version = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if not stat.S_ISREG(st.st_mode):
        return None, "it is not a regular file", version
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, None, None
        return None, "it cannot be read: %s" % ("it is a link" if e.errno == errno.ELOOP else e.strerror or e), version
    try:
        st = os.fstat(fd)  # what was opened, which may have been swapped in after the look
        version = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if not stat.S_ISREG(st.st_mode):
            return None, "it is not a regular file", version
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        return None, "it cannot be read: %s" % (e.strerror or e), version
    finally:
        os.close(fd)
    if total > cap:
        return None, "it is larger than %d bytes" % cap, version
    return b"".join(chunks), None, version


def parse_spool_json(data):
    """The JSON in bytes any writer of the spool may have put there, or None when they are not JSON:
    a deep nest ('[' * 100000) raises RecursionError, not ValueError, and must not crash dw either."""
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def _denied_errno(e):
    return isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM)


class Spool(object):
    def __init__(self, root):
        self.root = root

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def denied(self, path=None):
        """DwError 77 saying who owns the folder this may not use, and who this runs as."""
        blame = path or self.root
        while True:  # the folder itself when it can be seen, else the nearest one above it that can
            try:
                st = os.stat(blame)
                break
            except OSError:
                up = os.path.dirname(blame)
                if up == blame:
                    return DwError(EXIT_NO_PERM, "permission denied: %s cannot be reached by uid %d" % (path or self.root, _uid()))
                blame = up
        me, mode = _uid(), stat.S_IMODE(st.st_mode)
        if st.st_uid == me:
            return DwError(EXIT_NO_PERM, 'permission denied: %s (mode %04o) does not let even its owner, uid %d (this process), in: restore its mode on the host (chmod 700); see docs/SANDBOX.md, "Permission denied"' % (blame, mode, me))
        return DwError(EXIT_NO_PERM, 'permission denied: %s is owned by uid %d (mode %04o) and this runs as uid %d: run the sandbox as uid %d (docker run --user %d:%d ...); see docs/SANDBOX.md, "Permission denied"' % (
            blame, st.st_uid, mode, me, st.st_uid, st.st_uid, st.st_gid))

    def _folder(self, path, access):
        """True when `path` is a folder this can use as `access` says; False when it is not there; DwError 77."""
        try:
            st = os.stat(path)
        except OSError as e:
            if _denied_errno(e):
                raise self.denied(os.path.dirname(path))
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
        if not os.access(path, access):
            raise self.denied(path)
        return True

    def check(self, need):
        """DwError unless the spool and the folders in `need` are there and usable (77: permission denied)."""
        if not self._folder(self.root, os.R_OK | os.X_OK):
            raise DwError(EXIT_NO_SPOOL, "the spool %s is not there (or not a folder): check --spool / DUMBWAITER_SPOOL and the mount" % self.root)
        missing = []
        for d in need:
            writes = d in ("tmp", "queue")
            if not self._folder(self.p(d), os.X_OK | (os.W_OK if writes else os.R_OK)):
                missing.append(d)
        if "queue" in missing or (missing and not os.path.isdir(self.p("queue"))):
            raise DwError(EXIT_NO_SPOOL, "%s is not a Dumbwaiter spool (no queue/ folder): check --spool / DUMBWAITER_SPOOL" % self.root)
        if missing:
            raise DwError(EXIT_NO_SPOOL, "the spool %s is not usable: %s missing (was it made with `dumbwaiter init`?)" % (self.root, ", ".join(d + "/" for d in missing)))
        return self

    def read_json(self, *parts):
        """The parsed JSON of a regular file in the spool (at most 8 MiB); None when absent or not JSON."""
        data, _why, _version = read_spool_file(self.p(*parts), SPOOL_FILE_MAX_BYTES)
        return None if data is None else parse_spool_json(data)

    def in_queue(self, rid):
        return os.path.lexists(self.p("queue", rid + ".json"))

    def host(self):
        doc = self.read_json("host.json")
        return doc if isinstance(doc, dict) else None

    def catalog(self):
        doc = self.read_json("catalog.json")
        if doc is None:
            if not os.path.lexists(self.p("catalog.json")):
                raise DwError(EXIT_NO_SPOOL, "no catalog.json in %s: the host has not published its operations yet (is it set up? `dumbwaiter init`)" % self.root)
            raise DwError(EXIT_NO_SPOOL, "catalog.json in %s is not readable JSON" % self.root)
        ops = doc.get("operations") if isinstance(doc, dict) else None
        if not isinstance(ops, list):
            raise DwError(EXIT_NO_SPOOL, "catalog.json in %s has no operations list" % self.root)
        return checked_operations(ops)

    def catalog_ops(self):
        """The catalog's well-formed operations (see checked_operations), without the notes."""
        return self.catalog()[0]

    def write_request(self, rid, text):
        """tmp/ then rename into queue/, with fsyncs: readers never see a partial file."""
        data = text.encode("utf-8")
        tmp = self.p("tmp", "%s.%d.%s.tmp" % (rid, os.getpid(), binascii.hexlify(os.urandom(6)).decode("ascii")))
        folder = self.p("tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)
            folder = self.p("queue")
            os.rename(tmp, self.p("queue", rid + ".json"))
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if _denied_errno(e):
                raise self.denied(folder)
            raise DwError(EXIT_NO_SPOOL, "cannot write the request into %s: %s" % (self.root, e.strerror or e))
        _fsync_dir(self.p("queue"))


def _fsync_dir(path):
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def heartbeat_age(host_doc, now=None):
    """Seconds since host.json's heartbeat_at (negative when it is in our future), or None."""
    if not host_doc:
        return None
    t = parse_time(host_doc.get("heartbeat_at"))
    if t is None:
        return None
    return (time.time() if now is None else now) - t


class HostDown(str):
    """Why the host is not running; `ran`: host.json has a heartbeat of it, so it may come back (else it is yet to run)."""

    def __new__(cls, text, ran=False):
        down = str.__new__(cls, text)
        down.ran = ran
        return down


def host_down(spool):
    """None while the host runs (host.json up, heartbeat under 20 s old), else a HostDown saying since when it does not.
    The words are dw.cjs's (shared/client/hostState.ts) where the two see the same."""
    doc = spool.host()
    if doc is None and os.path.lexists(spool.p("host.json")):
        return HostDown("the host is not running (host.json is not a JSON file as the host writes it)")
    if doc is None:
        return HostDown("the host has never run on this spool (no host.json)")
    age = heartbeat_age(doc)
    if age is not None and -HEARTBEAT_FUTURE_S <= age < HEARTBEAT_FRESH_S and doc.get("up") is not False:
        return None
    if age is None:
        return HostDown("the host is not running (host.json has no heartbeat)")
    if age < -HEARTBEAT_FUTURE_S:
        # Else a heartbeat planted far ahead would say "running" for as long as it is in the future.
        return HostDown("the host is not running as far as host.json tells: its heartbeat is in the future, so its clock or the file is wrong")
    t = time.time() - age
    fmt = "%H:%M:%S" if time.strftime("%Y-%m-%d", time.localtime(t)) == time.strftime("%Y-%m-%d") else "%Y-%m-%d %H:%M:%S"
    return HostDown("the host is not running (since %s, per host.json)" % time.strftime(fmt, time.localtime(t)), ran=True)


def host_held(spool):
    """While the host runs but takes no new requests (no room for its ledger, say): dw.cjs's words for it
    (shared/client/hostState.ts), the reason escaped (anyone can write host.json); else None."""
    if host_down(spool):
        return None
    doc = spool.host() or {}
    held = doc.get("held")
    if not isinstance(held, str):
        return None
    return "%s, but takes no new requests: %s" % (_running_text(doc), _plain(held[:300]))


def _running_text(doc):
    """A running host, as host.json tells (hostState.ts's words)."""
    version = doc.get("app_version")
    running = "the host is running (%sper host.json)" % ("Dumbwaiter %s, " % host_word(version) if isinstance(version, str) else "")
    if doc.get("paused") is True:
        running += ", paused: requests are checked but nothing starts until it is resumed"
    return running


def host_word(value):
    """host.json's app_version or host_id fit to show ("?" when not a plain word): anyone can write it."""
    return value if isinstance(value, str) and HOST_WORD_RE.fullmatch(value) else "?"


def _no_constants(name):
    raise ValueError("%s is not valid JSON" % name)


class NotFinite(ValueError):
    """A JSON number the host cannot hold: it reads numbers as doubles, where 1e400 is Infinity."""


def _finite_float(text):
    v = float(text)
    if not math.isfinite(v):
        raise NotFinite(text)
    return v


def _finite_int(text):
    v = int(text)
    try:
        float(v)
    except OverflowError:
        raise NotFinite(text)
    return v


def _not_finite(what, e):
    return DwError(EXIT_BAD_ARGS, "%s holds the number %s, which is not finite where the host reads it (a double): nothing was written" % (what, _plain(str(e)[:40])))


def loads_args(text):
    """JSON the caller gives as arguments: no NaN/Infinity, no number past a double (NotFinite)."""
    return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float, parse_int=_finite_int)


def parse_json_text(text, what):
    try:
        return loads_args(text)
    except NotFinite as e:
        raise _not_finite(what, e)
    except RecursionError:
        raise DwError(EXIT_BAD_ARGS, "%s is nested too deeply" % what)
    except ValueError as e:
        raise DwError(EXIT_BAD_ARGS, "%s is not valid JSON: %s" % (what, e))


def _type_name(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def _pattern_matches(pattern, value):
    """True/False, or None when the pattern cannot be checked here (JavaScript-only syntax)."""
    try:
        rx = re.compile(pattern, re.ASCII)
    except (re.error, TypeError):
        return None
    return rx.fullmatch(value) is not None


def check_value(where, schema, v):
    """Checks a JSON value against a property's schema; returns it (integers as int)."""
    if not isinstance(schema, dict):
        return v
    t = schema.get("type")
    if t == "array":
        if not isinstance(v, list):
            raise DwError(EXIT_BAD_ARGS, "%s must be an array, got %s" % (where, _type_name(v)))
        items = schema.get("items", {})
        v = [check_value("%s[%d]" % (where, i), items, item) for i, item in enumerate(v)]
        max_items = schema.get("maxItems")
        if isinstance(max_items, int) and len(v) > max_items:
            raise DwError(EXIT_BAD_ARGS, "%s has %d items, more than %d" % (where, len(v), max_items))
        min_items = schema.get("minItems")
        if isinstance(min_items, int) and len(v) < min_items:
            raise DwError(EXIT_BAD_ARGS, "%s needs at least %d items" % (where, min_items))
    elif t == "string":
        if not isinstance(v, str):
            raise DwError(EXIT_BAD_ARGS, "%s must be a string, got %s" % (where, _type_name(v)))
        if "\0" in v:
            raise DwError(EXIT_BAD_ARGS, "%s contains a NUL character" % where)
        max_len = schema.get("maxLength")
        if isinstance(max_len, int) and len(v) > max_len:
            raise DwError(EXIT_BAD_ARGS, "%s is longer than %d characters" % (where, max_len))
        min_len = schema.get("minLength")
        if isinstance(min_len, int) and len(v) < min_len:
            raise DwError(EXIT_BAD_ARGS, "%s must not be empty" % where if min_len == 1 else "%s is shorter than %d characters" % (where, min_len))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and _pattern_matches(pattern, v) is False:
            raise DwError(EXIT_BAD_ARGS, "%s does not match the pattern %s" % (where, pattern))
    elif t == "integer":
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise DwError(EXIT_BAD_ARGS, "%s must be an integer, got %s" % (where, _type_name(v)))
        if abs(v) > MAX_SAFE_INTEGER:
            raise DwError(EXIT_BAD_ARGS, "%s is too large" % where)
        _check_range(where, schema, v)
    elif t == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DwError(EXIT_BAD_ARGS, "%s must be a number, got %s" % (where, _type_name(v)))
        _check_range(where, schema, v)
    elif t == "boolean":
        if not isinstance(v, bool):
            raise DwError(EXIT_BAD_ARGS, "%s must be true or false, got %s" % (where, _type_name(v)))
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(type(e) is type(v) and e == v for e in enum):
        raise DwError(EXIT_BAD_ARGS, "%s must be one of %s" % (where, ", ".join(json.dumps(e, ensure_ascii=False) for e in enum)))
    return v


def _check_range(where, schema, v):
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if isinstance(lo, (int, float)) and not isinstance(lo, bool) and v < lo:
        raise DwError(EXIT_BAD_ARGS, "%s must be at least %s, got %s" % (where, _js_number(lo), _js_number(v)))
    if isinstance(hi, (int, float)) and not isinstance(hi, bool) and v > hi:
        raise DwError(EXIT_BAD_ARGS, "%s must be at most %s, got %s" % (where, _js_number(hi), _js_number(v)))
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(xlo, (int, float)) and not isinstance(xlo, bool) and v <= xlo:
        raise DwError(EXIT_BAD_ARGS, "%s must be more than %s" % (where, _js_number(xlo)))
    if isinstance(xhi, (int, float)) and not isinstance(xhi, bool) and v >= xhi:
        raise DwError(EXIT_BAD_ARGS, "%s must be less than %s" % (where, _js_number(xhi)))


TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def convert_text(where, schema, text):
    """A command-line value (`name=value`) typed by the property's schema, then checked."""
    t = schema.get("type") if isinstance(schema, dict) else None
    if t == "integer":
        if not INTEGER_RE.fullmatch(text):
            raise DwError(EXIT_BAD_ARGS, '%s must be an integer, got "%s"' % (where, text))
        v = int(text)
    elif t == "number":
        try:
            v = float(text)
            if not math.isfinite(v):
                raise ValueError()
            if v.is_integer() and INTEGER_RE.fullmatch(text):
                v = int(text)
        except ValueError:
            raise DwError(EXIT_BAD_ARGS, '%s must be a number, got "%s"' % (where, text))
    elif t == "boolean":
        low = text.strip().lower()
        if low in TRUE_WORDS:
            v = True
        elif low in FALSE_WORDS:
            v = False
        else:
            raise DwError(EXIT_BAD_ARGS, '%s must be true or false, got "%s"' % (where, text))
    elif t in ("array", "object"):
        v = parse_json_text(text, where)
    else:
        v = text
    return check_value(where, schema, v)


def _array_items(where, schema, text):
    """The items one `name=value` adds to an array argument: a JSON array, or one item."""
    items_schema = schema.get("items", {}) if isinstance(schema, dict) else {}
    if text.lstrip().startswith("["):
        try:
            parsed = loads_args(text)
        except NotFinite as e:
            raise _not_finite(where, e)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            outl = []
            for item in parsed:
                if isinstance(item, str) and isinstance(items_schema, dict) and items_schema.get("type") not in (None, "string"):
                    outl.append(convert_text(where, items_schema, item))
                else:
                    outl.append(item)
            return outl
    return [convert_text(where, items_schema, text)]


def build_args(op_name, pairs, args_json, catalog_ops):
    """The args object of a request, typed and checked by the catalog (DwError 65 when it does not fit)."""
    base = {}
    if args_json is not None:
        base = parse_json_text(args_json, "--args-json")
        if not isinstance(base, dict):
            raise DwError(EXIT_BAD_ARGS, "--args-json must be a JSON object, got %s" % _type_name(base))
    return typed_args(op_name, pairs, base, catalog_ops)


def typed_args(op_name, pairs, base, catalog_ops):
    """`base` (a dict) with the `name=value` pairs added, typed and checked by the catalog."""
    if op_name.startswith("dumbwaiter."):
        # Built-in operations are not in the catalog: their arguments go through as given.
        args = dict(base)
        for name, value in pairs:
            if name in args:
                raise DwError(EXIT_BAD_ARGS, 'argument "%s" is given more than once' % name)
            args[name] = value
        return args
    op = None
    for o in catalog_ops:
        if o.get("name") == op_name:
            op = o
            break
    if op is None:
        names = ", ".join(o["name"] for o in catalog_ops) or "none"
        raise DwError(EXIT_BAD_ARGS, 'unknown operation "%s" (this host offers: %s; see `dw ops`)' % (op_name, names))
    schema = op.get("args_schema") if isinstance(op.get("args_schema"), dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    closed = schema.get("additionalProperties") is False
    expected = ("expected: " + ", ".join(props.keys())) if props else "this operation takes none"

    for name in list(base.keys()) + [n for n, _ in pairs]:
        if closed and name not in props:
            raise DwError(EXIT_BAD_ARGS, 'unknown argument "%s" for %s (%s)' % (name, op_name, expected))

    args = {}
    for name, value in base.items():
        args[name] = check_value('argument "%s"' % name, props.get(name, {}), value)
    from_pairs = set()
    for name, value in pairs:
        where = 'argument "%s"' % name
        prop = props.get(name, {})
        if name in base:
            raise DwError(EXIT_BAD_ARGS, '%s is given both in --args-json and as %s=...' % (where, name))
        if isinstance(prop, dict) and prop.get("type") == "array":
            args.setdefault(name, [])
            args[name].extend(_array_items(where, prop, value))
        else:
            if name in from_pairs:
                raise DwError(EXIT_BAD_ARGS, "%s is given more than once (it is not an array)" % where)
            args[name] = convert_text(where, prop, value)
        from_pairs.add(name)
    for name in from_pairs:
        prop = props.get(name, {})
        if isinstance(prop, dict) and prop.get("type") == "array":
            args[name] = check_value('argument "%s"' % name, prop, args[name])
    for name in required:
        if name not in args:
            raise DwError(EXIT_BAD_ARGS, 'missing required argument "%s" for %s' % (name, op_name))
    return args


# ---------------------------------------------------------------------------------------------
# Plans: the steps an agent proposes for one human approval (checked here for shape, so that a
# mistake is named before anything is written; the host checks every step again), and the words for
# a plan the host answered.


def check_plan_shape(value):
    """The steps of {"steps": [...]} or the bare list, checked for the shape every plan has, in the words
    of shared/protocol/plan.ts (which the host uses): 1 to 50 {"op", "args"} (args may be left out),
    nothing else, no built-in."""
    if isinstance(value, list):
        value = {"steps": value}
    if not isinstance(value, dict):
        raise DwError(EXIT_BAD_ARGS, 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]} or just that list')
    extra = [k for k in value if k != "steps"]
    if extra:
        raise DwError(EXIT_BAD_ARGS, 'a plan has only "steps", not "%s"' % _plain(extra[0]))
    steps = value.get("steps")
    if not isinstance(steps, list):
        raise DwError(EXIT_BAD_ARGS, 'a plan is {"steps": [{"op": ..., "args": {...}}, ...]}')
    if not steps:
        raise DwError(EXIT_BAD_ARGS, "a plan needs at least one step")
    if len(steps) > MAX_PLAN_STEPS:
        raise DwError(EXIT_BAD_ARGS, "a plan has at most %d steps, this one has %d" % (MAX_PLAN_STEPS, len(steps)))
    checked = []
    for i, step in enumerate(steps):
        at = "steps[%d]" % i
        if not isinstance(step, dict):
            raise DwError(EXIT_BAD_ARGS, '%s must be an object {"op": ..., "args": {...}}' % at)
        extra = [k for k in step if k not in ("op", "args")]
        if extra:
            raise DwError(EXIT_BAD_ARGS, '%s has only "op" and "args", not "%s"' % (at, _plain(extra[0])))
        op, args = step.get("op"), step.get("args", {})
        if not isinstance(op, str) or not OP_NAME_RE.fullmatch(op):
            raise DwError(EXIT_BAD_ARGS, "%s.op must be an operation name" % at)
        if op.startswith("dumbwaiter."):
            raise DwError(EXIT_BAD_ARGS, "%s: %s is built in, not an operation a plan can hold" % (at, op))
        if not isinstance(args, dict):
            raise DwError(EXIT_BAD_ARGS, "%s.args must be an object" % at)
        checked.append({"op": op, "args": args})
    return checked


def check_plan_steps(value, catalog_ops):
    """The steps of a plan of the right shape (check_plan_shape) and, when the catalog could be read
    (catalog_ops not None), each op one it offers with args that fit."""
    checked = check_plan_shape(value)
    if catalog_ops is None:
        return checked
    for i, step in enumerate(checked):
        at, op = "steps[%d]" % i, step["op"]
        if not any(o.get("name") == op for o in catalog_ops):
            raise DwError(EXIT_BAD_ARGS, '%s: the host offers no operation "%s" (it offers: %s)' % (at, op, ", ".join(o["name"] for o in catalog_ops) or "none"))
        try:
            step["args"] = typed_args(op, [], step["args"], catalog_ops)
        except DwError as e:
            raise DwError(EXIT_BAD_ARGS, "%s (%s): %s" % (at, op, e.message))
    return checked


def read_plan(source, catalog_ops):
    """The checked steps of the plan file `source` (- for stdin), read up to the largest request there can be."""
    try:
        if source == "-":
            data = getattr(sys.stdin, "buffer", sys.stdin).read(MAX_REQUEST_BYTES + 1)
        else:
            with open(source, "rb") as f:
                data = f.read(MAX_REQUEST_BYTES + 1)
    except OSError as e:
        raise DwError(EXIT_USAGE, "cannot read the plan %s: %s" % (source, e.strerror or e))
    if len(data) > MAX_REQUEST_BYTES:
        raise DwError(EXIT_BAD_ARGS, "the plan %s is larger than %d bytes, more than a request may have" % (source, MAX_REQUEST_BYTES))
    where = "the plan on stdin" if source == "-" else source
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return check_plan_steps(parse_json_text(text, "the plan"), catalog_ops)
    except UnicodeDecodeError:
        raise DwError(EXIT_BAD_ARGS, "%s: the plan is not UTF-8 text" % where)
    except DwError as e:
        raise DwError(e.code, "%s: %s" % (where, e.message))


def _json_line(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def is_plan(res):
    return res.get("op") == PLAN_OP and "v" in res


def plan_steps_of(res):
    """The steps as the host signed them: once approved the plan's own, before that the approval card's."""
    for holder in (res.get("plan"), res.get("approval")):
        if isinstance(holder, dict) and isinstance(holder.get("steps"), list):
            return [st for st in holder["steps"] if isinstance(st, dict)]
    return []


def plan_head(res):
    """The first line about a plan: its decision (or that it waits for one)."""
    rid, state = res.get("id"), res.get("state")
    if state == "succeeded":
        by = (res.get("approval") or {}).get("decided_by")
        until = utc_text((res.get("plan") or {}).get("expires_at")) or "it expires"
        return "plan %s: approved%s, usable until %s" % (rid, " by " + _plain(by) if by else "", until)
    return "plan %s: %s" % (rid, "waiting for a human to approve it" if state == "awaiting_approval" else state)


def plan_body(res):
    """Each step on one line (what it asks, what it runs and where, the request that used it), and once
    approved how to use them."""
    lines = []
    for i, st in enumerate(plan_steps_of(res)):
        used = "not used yet" if st.get("request_id") is None else "used by %s%s" % (st["request_id"], " (%s)" % st["state"] if st.get("state") else "")
        lines.append(_plain("  %d. %s %s: runs %s in %s (%s); %s" % (
            i + 1, st.get("op"), _json_line(st.get("args")), _json_line(st.get("argv")), st.get("cwd"), st.get("scope"), used)))
    if res.get("state") == "succeeded":
        lines.append("run each step with: dw run OP name=value ... --plan %s (the operation and arguments of a step, each step once: it then runs without asking)" % res.get("id"))
    return lines


# How a request ended, in the words of shared/client/runNotes.ts (a test holds them equal): one line
# for the end, each thing said once, and what the agent can do about it.
SETTLE_ASK = "ask the person who runs the host to settle it"
SETTLE_HINT_RE = re.compile(r"[.:]?\s*(?:Its operation's reconcile command can tell|Settle it with): dumbwaiter resolve \S+ .*$", re.S)


def without_settle_hint(message):
    """The host's message without the host command it gives the human who runs it (settleHint in
    shared/protocol/reconcileText.ts): the agent cannot run it."""
    return SETTLE_HINT_RE.sub("", message, count=1)


def _check_said(r):
    """What the reconcile check found (shared/protocol/reconcileText.ts's words)."""
    code, sig, error, verdict = r.get("exit_code"), r.get("signal"), r.get("error"), r.get("verdict")
    if verdict not in ("applied", "not_applied") and error is not None:
        return "the host could not check whether its effect happened: %s" % error
    how = error if error else "exit code %s" % _js_number(code) if code is not None else "signal %s" % sig if sig else "no exit code"
    said = {"applied": "took effect", "not_applied": "did not take effect"}.get(verdict, "could not tell")
    return "the host's reconcile check says it %s (%s)%s" % (said, how, ": safe to retry with a new id" if verdict == "not_applied" else "")


def _with_reason(rid, state, code, message):
    if message.startswith(state + " "):
        return "%s %s" % (rid, message)
    return "%s %s: %s%s" % (rid, state, "" if code == state else "%s: " % code, message)


def _end_line(res):
    rid, state = res.get("id"), res.get("state")
    e = res.get("error") if isinstance(res.get("error"), dict) else None
    r = res.get("reconcile") if isinstance(res.get("reconcile"), dict) else None
    if res.get("resolved_by") == "human":
        return "%s %s: settled by a human%s" % (rid, state, ": %s" % res["note"] if res.get("note") else "")
    if res.get("resolved_by") == "reconcile":
        return "%s %s: %s" % (rid, state, _check_said(r) if r else "settled by the host's reconcile check")
    if state == "succeeded":
        return None
    if state == "failed":
        code = res.get("exit_code")
        if code is not None:
            # Always said: the operation's own 64-87 would otherwise read as one of dw's codes.
            return "%s failed: the operation exited with %s%s" % (rid, _js_number(code), " (%s: %s)" % (e.get("code"), e.get("message")) if e else "")
        if e:
            return _with_reason(rid, state, e.get("code"), e.get("message"))
        sig = res.get("signal")
        return "%s failed without an exit code%s" % (rid, " (signal %s)" % sig if sig else "")
    if state == "cancelled":
        by = res.get("cancelled_by")
        return "%s cancelled%s" % (rid, " by %s" % by if by else "")
    if state == "uncertain":
        why = _check_said(r) if r else without_settle_hint(e.get("message")) if e else "the host lost sight of its run, so it may or may not have taken effect"
        return "%s uncertain: %s; %s" % (rid, why, SETTLE_ASK)
    return _with_reason(rid, state, e.get("code"), e.get("message")) if e else "%s %s" % (rid, state)


def outcome_lines(res):
    """Every line about how a settled request ended (a result, a conflict, an unsigned refusal), once each."""
    rid, lines = res.get("id"), []
    if res.get("state") == "conflict":
        lines.append("%s conflict: %s" % (rid, res.get("message")))
    elif res.get("unsigned"):
        what = ("the host says this key was revoked (dw inbox): ask the person who runs the host for a new key"
                if res.get("revoked") else
                "the host signs every answer to a request it could authenticate: check the key with dw doctor")
        lines.append("%s rejected (not signed by the host, so it may not be the host's): %s: %s; %s" % (
            rid, res["error"].get("code"), res["error"].get("message"), what))
    else:
        end = _end_line(res)
        if end is not None:
            lines.append(end)
        # A human's verdict after a check that could not tell: the check is a fact of its own.
        if isinstance(res.get("reconcile"), dict) and res.get("resolved_by") == "human":
            lines.append("%s: %s" % (rid, _check_said(res["reconcile"])))
    return [_plain(line) for line in lines]


def pending_notes(res):
    """What a request still going says beyond its state: a run that outlived a restart of the host."""
    rid = res.get("id")
    if res.get("orphaned") is True and res.get("state") == "running":
        return [_plain("%s is still running after the host restarted: the host watches it until it ends (dw cancel %s ends it)" % (rid, rid))]
    if res.get("reconcile_pending") is True and res.get("state") == "uncertain":
        return [_plain("%s was interrupted by a stop of the host: its reconcile check of whether it took effect is still to come" % rid)]
    return []


def status_lines(res):
    """dw status ID without --json: how it ended (or its state), a plan's steps, a run still going."""
    lines = outcome_lines(res) if is_settled(res) else []
    if not lines:
        lines = ["%s %s" % (res.get("id"), res.get("state"))]
    if "v" in res:
        lines += (plan_body(res) if is_plan(res) else []) + pending_notes(res)
    return lines


def utc_text(iso):
    """"2026-12-04 23:50:00 UTC": a time the same in every clock zone, whatever offset it was written
    with; None when iso is no time. As utcText in shared/client/approvalWait.ts."""
    t = parse_time(iso)
    if t is None:
        return None
    try:
        return datetime.fromtimestamp(int(round(t * 1000)) // 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return None


def deadline_text(iso, now_ms):
    """"2026-12-04 23:50:00 UTC (in 60 min)": a time as utc_text gives it, and how far off it is; None
    when iso is no time. In the words of shared/client/approvalWait.ts."""
    utc = utc_text(iso)
    if utc is None:
        return None
    at = int(round(parse_time(iso) * 1000))
    minutes = int(math.floor((at - now_ms) / 60000.0 + 0.5))
    return "%s (%s)" % (utc, "in less than a minute" if minutes < 1 else "in %d min" % minutes)


def waiting_note(res, now_ms=None):
    """The line about a request (or plan) that waits for a human's decision, from its signed result:
    why, when it claimed a plan it is not a step of, and when it is denied if nobody decides."""
    if now_ms is None:
        now_ms = int(time.time() * 1000)
    a = res.get("approval") if isinstance(res.get("approval"), dict) else {}
    if is_plan(res):
        n = len(a["steps"]) if isinstance(a.get("steps"), list) else None
        what = "plan %s waits for a human to approve %s" % (res.get("id"), "it" if n is None else "its %d step%s" % (n, "" if n == 1 else "s"))
    else:
        claim = a.get("plan_claim") if isinstance(a.get("plan_claim"), dict) else None
        why = " because it is not a step of plan %s: %s" % (claim.get("plan_id"), claim.get("reason")) if claim else ""
        what = "request %s waits for a human's decision%s" % (res.get("id"), why)
    deadline = deadline_text(a.get("timeout_at"), now_ms)
    return _plain("%s; unless decided, it is denied automatically at %s" % (what, deadline) if deadline else what)


# ---------------------------------------------------------------------------------------------
# Requests


def make_request(key, rid, op, args, intent=None, expires_in=None, now=None, fields=None):
    """(payload, envelope text). The payload is serialised once and signed as is. `fields`: more of
    the payload (plan_id, timeout_s, max_output_bytes)."""
    ts = time.time() if now is None else now
    payload_obj = {"id": rid, "op": op, "args": args, "created_at": now_iso(ts)}
    if expires_in is not None:
        payload_obj["expires_at"] = now_iso(ts + expires_in)
    if intent is not None:
        payload_obj["intent"] = intent
    payload_obj.update(fields or {})
    try:
        payload = json.dumps(payload_obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        payload.encode("utf-8")
    except UnicodeError:
        raise DwError(EXIT_BAD_ARGS, "the arguments are not valid UTF-8 text")
    except RecursionError:
        raise DwError(EXIT_BAD_ARGS, "the arguments are nested too deeply")
    except ValueError:  # what json.dumps says of NaN or Infinity with allow_nan=False
        raise DwError(EXIT_BAD_ARGS, "the arguments hold a number that is not finite (NaN or Infinity), which a request cannot carry")
    mac = compute_mac(key.secret, key.key_id, payload)
    envelope = json.dumps({"v": 1, "key_id": key.key_id, "payload": payload, "mac": mac}, separators=(",", ":"), ensure_ascii=False)
    if len(envelope.encode("utf-8")) > MAX_REQUEST_BYTES:
        raise DwError(EXIT_BAD_ARGS, "the request would be %d bytes, more than the 64 KiB a request may have" % len(envelope.encode("utf-8")))
    return payload, envelope


def submit_request(answers, op, args, rid=None, intent=None, expires_in=None, fields=None):
    """Writes the request and remembers its hash, by which its own result is told from another's."""
    if rid is None:
        rid = fresh_id()
    payload, envelope = make_request(answers.key, rid, op, args, intent, expires_in, fields=fields)
    # The hash of what is sent, as the host reads it: a caller's tuples, non-text keys or subclasses
    # come out as JSON has them. Taken before the write, so that nothing is written when it fails.
    try:
        answers.sent(rid, op, json.loads(payload)["args"])
    except RecursionError:
        raise DwError(EXIT_BAD_ARGS, "the arguments are nested too deeply")
    answers.spool.write_request(rid, envelope)
    return rid


def exit_code_of(result):
    """The exit code `dw run` / `dw wait` leave with for a final (or uncertain) result."""
    state = result.get("state")
    code = result.get("exit_code")
    if state == "succeeded":
        return EXIT_OK
    if state == "failed":
        if isinstance(code, int) and not isinstance(code, bool) and 0 < code <= 255:
            return code
        return EXIT_NO_EXIT_CODE
    return STATE_EXIT.get(state, EXIT_NO_EXIT_CODE)


IGNORED_WHY = {
    "unsigned": "the host did not sign it for this key (unsigned)",
    "other_key": "the host did not sign it for this key (signed for key %s)",
    "bad_mac": "the host did not sign it for this key (its signature does not match)",
}
# What a terminal acts on, or what hides or reorders text, shown escaped where the text is not the host's:
# the rules of shared/text/visible.ts (controls, format characters but the zero-width (non-)joiner, line
# and paragraph separators, lone surrogates), in its escapes (\x1b, \u202e, \u{e0001}, \n).
_MAYBE_HIDDEN_RE = re.compile("[^\u0020-\u007e]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hidden(ch, keep_line_feed=False):
    if ch in "\u200c\u200d" or (keep_line_feed and ch == "\n"):
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def _escape(ch):
    cp = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    return "\\x%02x" % cp if cp <= 0xFF else "\\u%04x" % cp if cp <= 0xFFFF else "\\u{%x}" % cp


def _plain(text):
    """One line for a person (visible() of shared/text/visible.ts)."""
    return _MAYBE_HIDDEN_RE.sub(lambda m: _escape(m.group(0)) if _hidden(m.group(0)) else m.group(0), str(text))


def _visible_json(text):
    """JSON text with the same characters as JSON escapes (visibleJson of shared/text/visible.ts)."""
    def esc(ch):
        b = ch.encode("utf-16-be", "surrogatepass")
        return "".join("\\u%04x" % int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))
    return _MAYBE_HIDDEN_RE.sub(lambda m: esc(m.group(0)) if _hidden(m.group(0), True) else m.group(0), text)


def is_settled(status):
    """Final, uncertain, a conflict or an unsigned refusal: waiting longer changes nothing by itself.
    Not an uncertain run whose reconcile check the host has still to make (reconcile_pending): that
    check settles it (isSettled of shared/client/spoolClient.ts)."""
    if status.get("state") == "uncertain" and status.get("reconcile_pending") is True:
        return False
    return status.get("state") in TERMINAL_STATES + ("conflict",)


class Answers(object):
    """What the host said to this key. A result or inbox message is believed only when the host signed
    it for this key (docs/PROTOCOL.md, "Authenticated results and inbox messages"); anything else at
    its name is treated as absent, and said once per version of the file on stderr."""

    def __init__(self, spool, key, notes=True):
        self.spool = spool
        self.key = key
        self.notes = notes
        self.hashes = {}  # id -> the request hash of what this process sent under that id
        self.last_ignored = None  # why the last ignored result was ignored (for dw doctor)
        # The host has signed something for this key (it knows the key), and the ids it signed a result
        # for: then an unsigned "unknown key" refusal is not the host's, and for those ids none is.
        self.key_known = False
        self.verified_ids = set()
        self._said = set()
        self._since = {}
        self._inbox = {}  # name -> (file version, verified message or None)
        self._inbox_seen = None  # (the folder's device, inode and mtime, the names looked at, when listed)
        self._inbox_msgs = []

    def sent(self, rid, op, args):
        self.hashes[rid] = request_hash(self.key.key_id, op, args)

    def _ignore(self, rel, version, why):
        self.last_ignored = why
        if self.notes and (rel, version, why) not in self._said:
            self._said.add((rel, version, why))
            warn("ignored %s: %s" % (rel, why))

    def _open(self, kind, rel, data, version, want_id):
        """The document when signed for this key with the id asked for, else None (said once)."""
        verdict, detail = open_host_doc(kind, data, self.key.key_id, self.key.secret)
        if verdict != "ok":
            if not (kind == "inbox" and verdict == "other_key"):  # every key has its own copy of a notice
                self._ignore(rel, version, IGNORED_WHY[verdict] % detail if verdict == "other_key" else IGNORED_WHY[verdict])
            return None
        self.key_known = True
        if detail.get("id") != want_id:
            self._ignore(rel, version, "it is signed for this key but its id is %s" % _plain(json.dumps(detail.get("id"), ensure_ascii=False)))
            return None
        return detail

    def result(self, rid):
        """(the verified result or None, an unsigned refusal at its name or None)."""
        rel = "results/%s.json" % rid
        data, why, version = read_spool_file(self.spool.p("results", rid + ".json"), RESULT_MAX_BYTES)
        if data is None:
            if why:
                self._ignore(rel, version, why)
            return None, None
        doc = self._open("result", rel, data, version, rid)
        if doc is not None:
            if not isinstance(doc.get("state"), str):
                return None, None
            self.verified_ids.add(rid)
            return doc, None
        if HOST_DOC_PREFIX_RE.match(data):
            return None, None
        doc = parse_spool_json(data)
        e = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(e, dict) and doc.get("id") == rid and doc.get("state") == "rejected" and isinstance(e, dict) and e.get("code") in UNSIGNED_REFUSAL_CODES:
            return None, doc
        return None, None

    def messages(self):
        """The inbox messages signed for this key, oldest first (other keys' copies skipped quietly).
        Anyone can fill inbox/, and this is asked at every poll: only the newest INBOX_KEEP names in the
        host's format are looked at, each file is read once per version (64 KiB at most), and nothing
        is looked at again until the folder or its names change (the host renames every message in).
        The folder is not even listed while it is unchanged (a million names would make every poll cost
        as much), once a listing was taken over a second after its last change: one taken in the same
        clock tick as a new name may have missed it (git's "racy" rule)."""
        folder = self.spool.p("inbox")
        try:
            st = os.stat(folder)
            stamp = (st.st_dev, st.st_ino, st.st_mtime_ns)
            if self._inbox_seen is not None and self._inbox_seen[0] == stamp and self._inbox_seen[2] - st.st_mtime_ns > 10 ** 9:
                return self._inbox_msgs
            listed_at = time.time_ns()
            names = sorted(n for n in os.listdir(folder) if INBOX_NAME_RE.fullmatch(n))[-INBOX_KEEP:]
        except OSError as e:
            if _denied_errno(e):
                raise self.spool.denied(folder)
            raise DwError(EXIT_NO_SPOOL, "cannot read %s: %s" % (folder, e.strerror or e))
        if self._inbox_seen is not None and self._inbox_seen[1] == names:
            self._inbox_seen = (stamp, names, listed_at)
            return self._inbox_msgs
        msgs, looked = [], {}
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
                version = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                continue
            cached = self._inbox.get(name)
            if cached and cached[0] == version:
                msg = cached[1]
            else:
                data, why, version = read_spool_file(path, INBOX_MESSAGE_MAX_BYTES)
                if data is None:
                    if why:
                        self._ignore("inbox/" + name, version, why)
                    msg = None
                else:
                    msg = self._open("inbox", "inbox/" + name, data, version, name[: -len(".json")])
                    # Signed, but still held to the shape the host writes: whatever is printed of it is text.
                    if msg is not None and not (all(isinstance(msg.get(k), str) for k in ("kind", "text", "created_at")) and (msg.get("ref") is None or isinstance(msg.get("ref"), str))):
                        msg = None
            looked[name] = (version, msg)
            if msg is not None:
                msgs.append(msg)
        self._inbox, self._inbox_seen, self._inbox_msgs = looked, (stamp, names, listed_at), msgs
        return msgs

    def conflict_text(self, rid):
        """The host's word that `rid` is bound to another request: its conflict message for this key
        about `rid` (with the hash of what we sent, when this process sent it), or None."""
        own = self.hashes.get(rid)
        found = None
        for m in self.messages():
            if m.get("kind") == "conflict" and m.get("ref") == rid and (own is None or m.get("request_hash") == own):
                found = m
        return None if found is None else str(found.get("text") or "")

    def revoked(self):
        return any(m.get("kind") == "key_revoked" and m.get("ref") == self.key.key_id for m in self.messages())

    def _grace(self, rid, what, seconds):
        """True for `seconds` after the first call with (rid, what)."""
        first = self._since.setdefault((rid, what), time.monotonic())
        return time.monotonic() - first < seconds

    def status(self, rid, fresh=False, patient=False):
        """The request's status as far as the host told this key: a verified result, a conflict, an
        unsigned refusal, or unclaimed/unknown. `fresh`: we just wrote queue/<id>.json, so without its
        hash (not sent by submit_request) a result counts only once the host took it in. `patient` (a wait): a conflict seen in a result waits a little
        for the host's message, and an unsigned refusal for a signed answer."""
        verified, unsigned = self.result(rid)
        pending = self.spool.in_queue(rid)  # not claimed/: anyone can put a name there
        own = self.hashes.get(rid)
        if verified is not None and own is not None and verified.get("request_hash") == own:
            return verified  # the answer to what we sent, wherever its request file is (or seems to be)
        if verified is not None and own is None and not (fresh and pending):
            return verified
        if verified is not None and not pending:  # another request's: ours is refused once taken in
            text = self.conflict_text(rid)
            if text is None and patient and self._grace(rid, "conflict", CONFLICT_GRACE_S):
                return {"id": rid, "state": "unknown"}
            return self._conflict(rid, text)
        if pending:
            return {"id": rid, "state": "unclaimed"}
        text = self.conflict_text(rid)
        if text is not None:
            return self._conflict(rid, text)
        if unsigned is not None and not self._believable(rid, unsigned):
            unsigned = None
        if unsigned is not None and not (patient and self._grace(rid, "unsigned", UNSIGNED_GRACE_S)):
            return {"id": rid, "state": "rejected", "unsigned": True, "error": unsigned["error"], "revoked": self.revoked()}
        return {"id": rid, "state": "unknown"}

    def _believable(self, rid, unsigned):
        """Whether an unsigned refusal at results/<rid>.json may be the host's. Never once the host
        signed a result for rid; once it signed anything for this key (so it knows the key), only a
        revoked_key refusal, and only with its signed key_revoked message. Else it is said once."""
        code = unsigned["error"].get("code")
        if rid in self.verified_ids:
            why = "the host has already signed a result for %s" % rid
        elif not self.key_known or (code == "revoked_key" and self.revoked()):
            return True
        else:
            why = "the host has signed answers for this key, so it knows it"
        if self.notes and (rid, "unsigned") not in self._said:
            self._said.add((rid, "unsigned"))
            warn("ignored an unsigned refusal at results/%s.json (%s): %s; waiting for its signed answer" % (rid, _plain(code), why))
        return False

    @staticmethod
    def _conflict(rid, text):
        return {"id": rid, "state": "conflict",
                "message": text or "request id %s is already bound to another request; nothing was run: use a new id" % rid}


MORE = "more"  # what an on_poll returns when it made progress and has more ready: poll again at once


class Waiter(object):
    """Polls a request's status with backoff (50 ms growing to 1 s), with notes for the human on stderr.
    on_poll(status) returns False, True (progress: back to short pauses) or MORE."""

    def __init__(self, answers, rid, timeout=None, fresh=False, on_poll=None, notes=True):
        self.answers = answers
        self.spool = answers.spool
        self.rid = rid
        self.timeout = timeout
        self.fresh = fresh
        self.on_poll = on_poll
        self.notes = notes
        self.last = {"id": rid, "state": "unknown"}
        self.last_state = "unknown"
        self.down = None  # why the host is not running, as last seen
        self.held = None  # why the running host takes no new requests, as last seen

    def run(self):
        """The settled status, or None when the timeout passed first."""
        start = time.monotonic()
        deadline = None if self.timeout is None else start + self.timeout
        delay = 0.05
        said = set()
        looked = None
        while True:
            s = self.answers.status(self.rid, fresh=self.fresh, patient=True)
            self.last, self.last_state = s, s["state"]
            progressed = self.on_poll(s) if self.on_poll else False
            if is_settled(s):
                if self.down:  # it was said to be down: say that it is back, if it is
                    self._look_at_host(s["state"], said)
                return s
            now = time.monotonic()
            if looked is None or now - looked >= 0.5:
                looked = now
                self._look_at_host(s["state"], said)
            if self.notes and s["state"] == "awaiting_approval" and "approval" not in said:
                said.add("approval")
                warn(waiting_note(s))
            if deadline is not None and now >= deadline:
                return None
            if progressed:
                delay = 0.05
            pause = 0.0 if progressed == MORE else delay if deadline is None else min(delay, max(0.0, deadline - now))
            time.sleep(pause)
            delay = min(delay * 1.5, 1.0)

    def _look_at_host(self, state, said):
        """Says at once when the host is not running, again when that changes, and when it is back."""
        down = host_down(self.spool)
        if self.notes and down != self.down:
            if down:
                warn("%s; %s" % (down, _until_back(self.rid, state, down)))
            elif self.down:
                warn("the host is running again (per host.json)")
        self.down = down
        held = host_held(self.spool) if state == "unclaimed" else self.held
        if self.notes and held and held != self.held:
            warn(held)
        self.held = held
        if self.notes and not down and state in ("unclaimed", "queued") and "paused" not in said and (self.spool.host() or {}).get("paused"):
            said.add("paused")
            warn("the host is paused: %s will start when it resumes" % self.rid)


def _until_back(rid, state, down):
    if state in ("unclaimed", "unknown"):
        return "the request waits in queue/ until it %s" % ("is back" if down.ran else "runs")
    return "%s is %s and stays so until it %s" % (rid, state, "is back" if down.ran else "runs")


# ---------------------------------------------------------------------------------------------
# Command line


class Opts(object):
    def __init__(self):
        self.command = None
        self.positional = []
        self.flags = {}
        self.spool = None
        self.key_file = None


# Flags of each command: name -> takes a value.
COMMANDS = {
    "ops": ({"--json": False}, 0, 0),
    "submit": ({"--args-json": True, "--id": True, "--intent": True, "--expires-in": True, "--plan": True, "--time-limit": True, "--max-output": True}, 1, None),
    "status": ({"--json": False}, 1, 1),
    "wait": ({"--timeout": True, "--json": False}, 1, 1),
    "run": ({"--args-json": True, "--id": True, "--intent": True, "--timeout": True, "--plan": True, "--time-limit": True, "--max-output": True}, 1, None),
    "plan": ({"--intent": True, "--expires": True, "--id": True, "--timeout": True, "--json": False}, 1, 1),
    "cancel": ({}, 1, 1),
    "inbox": ({"--json": False}, 0, 0),
    "doctor": ({}, 0, 0),
    "selftest-vectors": ({}, 1, 1),  # hidden: checks the signer against a vectors file
}
GLOBAL_FLAGS = {"--spool": True, "--key-file": True}

USAGE = """usage: dw [--spool DIR] [--key-file FILE] COMMAND ...

Asks a Dumbwaiter host to run allowlisted operations, through signed files in a shared spool folder.

commands:
  dw ops [--json]                 the host's operations and their arguments
  dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S] [LIMITS]
                                  write a signed request and print its id
  dw status ID [--json]           the request's state (unclaimed, queued, running, succeeded, ...)
  dw wait ID [--timeout S] [--json]
                                  wait for a final state, print the output, exit as below
  dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S] [LIMITS]
                                  submit, print the id on stderr, stream the output, exit as below
  dw plan FILE|- [--intent TEXT] [--expires DURATION] [--id ID] [--timeout S] [--json]
                                  propose steps for one human approval, wait for it, print the plan
  dw cancel ID                    ask the host to cancel a request
  dw inbox [--json]               messages from the host
  dw doctor                       check the spool, the key file, the host, the clocks and signed results
  dw help COMMAND                 (or dw COMMAND --help) that command's usage

Arguments are typed by the host's catalog: workers=4, verbose=true, files=a.ts files=b.ts or
files='["a.ts","b.ts"]'. --args-json gives all arguments as one JSON object.

LIMITS of one request, at most the operation's (larger is rejected, bad_args): --time-limit S (its
run is stopped after S seconds), --max-output BYTES; --plan ID runs it as a step of that approved plan.
--timeout S on dw wait, run and plan stops waiting after S seconds (85; the request goes on).
dw plan: FILE (or - for stdin) holds {"steps": [{"op": OP, "args": {...}}, ...]} (at most 50 steps);
it waits for a human's decision (an approved plan is usable for --expires, default 1h, at most 24h).

environment:
  DUMBWAITER_SPOOL      the spool folder (or --spool DIR)
  DUMBWAITER_KEY_FILE   the key file (or --key-file FILE)

exit codes:
  0 succeeded; 1-255 the operation's own exit code; 64 usage; 65 bad arguments (nothing written);
  66 no valid key file; 69 spool or host unavailable (doctor: a check failed); 77 permission denied;
  80 rejected (also a refusal the host could not sign); 81 denied; 82 expired; 83 cancelled;
  84 uncertain; 85 still pending after --timeout (how long dw wait, run or plan waits; dw wait ID
  again); 86 failed without an exit code (could not start, timeout, signal, or not_applied: the host
  checked that an interrupted run did not take effect, safe to retry with a new id); 87 the id is
  bound to another request: nothing ran, use a new id

Only results and messages the host signed for this key are believed; anything else at their names
is ignored (and said on stderr).
"""

COMMAND_HELP = {
    "ops": "usage: dw ops [--json]\n\nLists the host's operations with their arguments (type, constraints, required or default).\n--json prints the catalog's operations as JSON.\n",
    "submit": "usage: dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S]\n                 [--plan ID] [--time-limit S] [--max-output BYTES]\n\nWrites a signed request and prints its id. Arguments are typed and checked against the catalog\nbefore anything is written (exit 65 when they do not fit). --id chooses the id (a retry with the\nsame id and arguments never runs twice); --expires-in S: the request must not start after S seconds.\n--plan, --time-limit and --max-output as for dw run.\n",
    "status": "usage: dw status ID [--json]\n\nThe request's state: unclaimed (still in queue/), queued, awaiting_approval, running, succeeded,\nfailed, rejected, denied, expired, cancelled, uncertain, conflict (the id is bound to another\nrequest), or unknown (no trace of it); once it ended, how, in the words dw wait says it.\n",
    "wait": "usage: dw wait ID [--timeout S] [--json]\n\nWaits for a final state (or uncertain), prints the output (stdout to stdout, stderr to stderr)\nand exits with the operation's exit code, or 80-87. --json prints the result document instead.\n",
    "run": "usage: dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S]\n              [--plan ID] [--time-limit S] [--max-output BYTES]\n\nSubmits a request, prints its id on stderr at once, streams its live output to stdout, and exits\nwith the operation's exit code (or 80-87). With --timeout S it stops waiting after S seconds (85).\n--time-limit S stops the run itself after S seconds and --max-output BYTES keeps that much of its\noutput, at most the operation's own limits (a larger one is rejected, 80: bad_args). --plan ID runs it\nas a step of that approved plan (dw plan): with the step's operation and arguments it runs without asking.\n",
    "plan": "usage: dw plan FILE|- [--intent TEXT] [--expires DURATION] [--id ID] [--timeout S] [--json]\n\nProposes a plan: the steps FILE (or stdin, -) holds, {\"steps\": [{\"op\": OP, \"args\": {...}}, ...]} or just\nthat list, at most 50, each checked against the catalog before anything is written (65). A human\napproves or denies the whole plan; dw waits for that (--timeout S: at most S seconds, 85), prints\nthe plan id on stderr at once, then each step as the host will run it, and exits 0 when approved\n(81 denied, 82 expired, ...). Each step then runs without asking, once, with\n`dw run OP name=value ... --plan PLAN_ID`, until the plan expires (--expires: 45s, 30m, 2h or 1h30m;\ndefault 1h, at most 24h).\n",
    "cancel": "usage: dw cancel ID\n\nAsks the host to cancel a request (a signed dumbwaiter.cancel) and prints its answer.\n",
    "inbox": "usage: dw inbox [--json]\n\nMessages from the host (conflicts, revoked keys, notices), oldest first.\n",
    "doctor": "usage: dw doctor\n\nChecks that the spool is there, the key file is valid, the host is running (heartbeat, up), the\nclocks are in step, the key is accepted (a signed dumbwaiter.ping) and the answer is signed for it.\nExit 0 when all pass, 77 when the spool denies this uid, else 69.\n",
}


class Usage(Exception):
    pass


class HelpWanted(Exception):
    def __init__(self, command=None):
        Exception.__init__(self, command or "")
        self.command = command


def parse_argv(argv):
    o = Opts()
    only_positional = False
    rest = list(argv)
    i = 0
    while i < len(rest):
        tok = rest[i]
        i += 1
        if not only_positional and tok == "--":
            only_positional = True
            continue
        if not only_positional and tok in ("-h", "--help"):
            raise HelpWanted(o.command)
        if not only_positional and tok.startswith("-") and tok != "-":
            name, eq, value = tok.partition("=")
            known = dict(GLOBAL_FLAGS)
            if o.command:
                known.update(COMMANDS[o.command][0])
            if name not in known:
                if o.command is None and name in ("--json", "--timeout", "--id", "--intent", "--args-json", "--expires-in", "--expires", "--time-limit", "--plan", "--max-output"):
                    raise Usage("%s goes after the command" % name)
                raise Usage("unknown option %s%s" % (name, " for dw " + o.command if o.command else ""))
            if known[name]:
                if not eq:
                    if i >= len(rest):
                        raise Usage("%s needs a value" % name)
                    value = rest[i]
                    i += 1
            elif eq:
                raise Usage("%s takes no value" % name)
            else:
                value = True
            if name == "--spool":
                o.spool = value
            elif name == "--key-file":
                o.key_file = value
            else:
                if name in o.flags:
                    raise Usage("%s is given twice" % name)
                o.flags[name] = value
            continue
        if o.command is None:
            if tok == "help":
                raise HelpWanted(rest[i] if i < len(rest) and rest[i] in COMMANDS else None)
            if tok == "mcp":
                raise Usage("mcp is only in the Node client: node \"$DUMBWAITER_SPOOL/bin/dw.cjs\" mcp")
            if tok not in COMMANDS:
                raise Usage("unknown command %s" % tok)
            o.command = tok
            continue
        o.positional.append(tok)
    if o.command is None:
        raise Usage("no command given")
    _, lo, hi = COMMANDS[o.command]
    if len(o.positional) < lo:
        raise Usage("dw %s needs %s" % (o.command, {"submit": "an operation name", "run": "an operation name", "plan": "a plan file (or - for stdin)", "selftest-vectors": "a vectors file"}.get(o.command, "a request id")))
    if hi is not None and len(o.positional) > hi:
        raise Usage("dw %s takes %s, got: %s" % (o.command, "no arguments" if hi == 0 else "one argument", " ".join(o.positional[hi:])))
    return o


def _seconds(o, flag, allow_zero=True):
    v = o.flags.get(flag)
    if v is None:
        return None
    try:
        s = float(v)
    except ValueError:
        raise Usage("%s takes a number of seconds, got %s" % (flag, v))
    if not math.isfinite(s) or s < 0 or (s == 0 and not allow_zero):
        raise Usage("%s takes a %s number of seconds, got %s" % (flag, "non-negative" if allow_zero else "positive", v))
    return s


def positive_int(o, flag, unit):
    """--time-limit S, --max-output BYTES: a whole number from 1 to MAX_REQUEST_LIMIT (else a usage error)."""
    v = o.flags.get(flag)
    if v is None:
        return None
    n = int(v) if WHOLE_RE.fullmatch(v) else 0
    if not 1 <= n <= MAX_REQUEST_LIMIT:
        raise Usage('%s takes a whole number of %s from 1 to %d, not "%s"' % (flag, unit, MAX_REQUEST_LIMIT, v))
    return n


def duration_seconds(text, flag, most):
    """The seconds of a duration such as 45s, 30m, 2h, 1h30m or a plain number of seconds, 1 to `most`."""
    if WHOLE_RE.fullmatch(text):
        secs = int(text)
    else:
        m = DURATION_RE.fullmatch(text) if text else None
        secs = int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + int(m.group(3) or 0) if m else 0
    if secs < 1:
        raise Usage('%s takes a duration such as 45s, 30m, 2h or 1h30m, not "%s"' % (flag, text))
    if secs > most:
        raise Usage("%s is at most %s h (%d s), not %s" % (flag, _js_number(most / 3600), most, text))
    return secs


def _request_fields(o):
    """The payload fields of --plan, --time-limit and --max-output, checked before anything is written."""
    fields = {}
    for flag, name, unit in (("--time-limit", "timeout_s", "seconds"), ("--max-output", "max_output_bytes", "bytes")):
        n = positive_int(o, flag, unit)
        if n is not None:
            fields[name] = n
    plan = o.flags.get("--plan")
    if plan is not None:
        if not is_request_id(plan):
            raise Usage('--plan takes the id of an approved plan (as dw plan printed it), not "%s"' % _plain(plan))
        fields["plan_id"] = plan
    return fields


def _spool_of(o, need):
    root = o.spool if o.spool is not None else os.environ.get("DUMBWAITER_SPOOL")
    if not root:
        raise DwError(EXIT_NO_SPOOL, "no spool: pass --spool DIR or set DUMBWAITER_SPOOL")
    return Spool(root).check(need)


def _key_of(o):
    return load_key(o.key_file if o.key_file is not None else os.environ.get("DUMBWAITER_KEY_FILE"))


def _request_id_arg(value, what=None):
    """The id asked about (usage error 64 when it is not an id: `../x` must never reach a path), or the
    --id of a new request (65, bad arguments: nothing written)."""
    if not is_request_id(value):
        text = "%s %s is not a valid request id (letters, digits, '.', '_', '-'; at most 128; not ending in .tmp)" % (what or "request id", _plain(json.dumps(value, ensure_ascii=False)))
        raise DwError(EXIT_BAD_ARGS, text) if what else Usage(text)
    return value


def _id_and_intent(o):
    """A new request's --id and --intent, checked before anything is written (65): (rid, intent), each None if not given."""
    rid = o.flags.get("--id")
    if rid is not None:
        _request_id_arg(rid, "--id")
    intent = o.flags.get("--intent")
    if intent is not None and len(intent) > MAX_INTENT_CHARS:
        raise DwError(EXIT_BAD_ARGS, "--intent is longer than %d characters" % MAX_INTENT_CHARS)
    return rid, intent


def _prepare_request(o):
    """Everything a request needs, checked before anything is written: (spool, key, rid, op, args, intent)."""
    op = o.positional[0]
    pairs = []
    for tok in o.positional[1:]:
        name, eq, value = tok.partition("=")
        if not eq or not name:
            raise DwError(EXIT_BAD_ARGS, 'expected name=value, got "%s"' % tok)
        pairs.append((name, value))
    rid, intent = _id_and_intent(o)
    spool = _spool_of(o, ("tmp", "queue", "results"))
    key = _key_of(o)
    catalog_ops = [] if op.startswith("dumbwaiter.") else spool.catalog_ops()
    args = build_args(op, pairs, o.flags.get("--args-json"), catalog_ops)
    return spool, key, rid, op, args, intent


def cmd_submit(o):
    expires_in = _seconds(o, "--expires-in")
    fields = _request_fields(o)
    spool, key, rid, op, args, intent = _prepare_request(o)
    rid = submit_request(Answers(spool, key), op, args, rid, intent, expires_in, fields)
    outln(rid)
    down = host_down(spool)
    if down:
        warn("%s; %s" % (down, _until_back(rid, "unclaimed", down)))
    held = host_held(spool)
    if held:
        warn(held)
    return EXIT_OK


def _print_result_output(res):
    if res.get("stdout"):
        out(res["stdout"])
    if res.get("stderr"):
        _write(sys.stderr, res["stderr"])


def _print_end(res, output=True):
    """What a settled request says: a plan's steps, or its output (unless it was streamed); then how it
    ended, and what the host found of a run it lost sight of."""
    if is_plan(res):
        for line in [plan_head(res)] + plan_body(res):
            outln(line)
    elif output:
        _print_result_output(res)
    for line in outcome_lines(res):
        warn(line)


def _print_pending(res):
    """What a request still pending after the wait says beyond its state: a plan's steps, an orphaned run."""
    if is_plan(res):
        for line in [plan_head(res)] + plan_body(res):
            outln(line)
    for line in pending_notes(res) if "v" in res else []:
        warn(line)


def _timeout_message(rid, waiter, timeout):
    state = waiter.last_state
    if waiter.down and state in ("unclaimed", "unknown", "queued"):
        return "%s is still %s after %s s: %s; %s; check again with: dw wait %s" % (
            rid, state, _js_number(timeout), waiter.down, _until_back(rid, state, waiter.down), rid)
    if waiter.held and state == "unclaimed":
        return "%s is still %s after %s s: %s; check again with: dw wait %s" % (rid, state, _js_number(timeout), waiter.held, rid)
    return "%s is still %s after %s s; check again with: dw wait %s" % (rid, state, _js_number(timeout), rid)


def log_check_note(check, res):
    """What to say after the live output of `res` was streamed above when it was not checked to be what
    the host logged (check: none, match, mismatch, capped, unchecked); None when it was, or when nothing
    was shown. In the words of logCheckNote in shared/client/spoolClient.ts (a test holds them equal)."""
    rid = res.get("id")
    why = {
        "mismatch": "is not what the host logged (results/%s.log was changed by someone else)" % rid,
        "capped": "stopped at %d bytes of results/%s.log" % (LIVE_LOG_MAX_BYTES, rid),
        # A run the host lost sight of (it stopped while the run ran) has no hash of its log in its result.
        "unchecked": "could not be checked against the host's log (%s), so it may not be the host's" % (
            "the host stopped while it ran" if res.get("state") == "uncertain" or res.get("resolved_by") is not None else "its result has no log_sha256"),
    }.get(check)
    if why is None:
        return None
    kept = bool(res.get("stdout")) or bool(res.get("stderr"))
    return "the live output above %s; %s" % (why, "the host's signed output follows:" if kept else "the host's signed result holds none of its output")


def _interrupted(rid):
    warn("stopped waiting; %s goes on. `dw wait %s` to wait again, `dw cancel %s` to cancel it" % (rid, rid, rid))
    return EXIT_INTERRUPTED


def _started(s):
    """A verified result of a run that has started: only then is results/<id>.log the host's to show."""
    return s.get("state") == "running" or (s.get("state") in TERMINAL_STATES and "unsigned" not in s and s.get("started_at") is not None)


def _read_log(path, offset, limit):
    """Up to `limit` bytes of the live log from `offset` (b"" when there is nothing, or no regular file)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        os.lseek(fd, offset, os.SEEK_SET)
        chunks, total = [], 0
        while total < limit:
            chunk = os.read(fd, min(1 << 20, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def cmd_run(o):
    timeout = _seconds(o, "--timeout")
    fields = _request_fields(o)
    spool, key, rid, op, args, intent = _prepare_request(o)
    answers = Answers(spool, key)
    rid = submit_request(answers, op, args, rid, intent, fields=fields)
    err(rid)
    log_path = spool.p("results", rid + ".log")
    streamed = [0]
    capped = [False]
    digest = hashlib.sha256()

    def pump(s, limit=LIVE_LOG_MAX_BYTES):
        # A log planted while the request waits is never shown: only once the host says it runs. A
        # step reads at most LOG_STEP_BYTES, so a huge (sparse) log planted later never holds up the
        # timeout or Ctrl-C, and nothing is streamed past LIVE_LOG_MAX_BYTES.
        if not _started(s) or capped[0]:
            return False
        if streamed[0] >= LIVE_LOG_MAX_BYTES:
            if _read_log(log_path, streamed[0], 1):
                capped[0] = True
                warn("results/%s.log is larger than %d bytes: the live output is not shown further; the host's signed output is given at the end" % (rid, LIVE_LOG_MAX_BYTES))
            return False
        want = max(0, min(limit, LIVE_LOG_MAX_BYTES) - streamed[0])
        chunk = _read_log(log_path, streamed[0], min(want, LOG_STEP_BYTES))
        if chunk:
            out(chunk)
            digest.update(chunk)
            streamed[0] += len(chunk)
            return MORE if len(chunk) == LOG_STEP_BYTES else True
        return False

    waiter = Waiter(answers, rid, timeout, fresh=True, on_poll=pump)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        return _interrupted(rid)
    if res is None:
        warn(_timeout_message(rid, waiter, timeout))
        _print_pending(waiter.last)
        return EXIT_TIMEOUT
    logged = res.get("log_bytes")
    has_hash = isinstance(logged, int) and not isinstance(logged, bool) and isinstance(res.get("log_sha256"), str)
    while pump(res, logged if has_hash else LIVE_LOG_MAX_BYTES) == MORE:  # the rest, never past log_bytes
        pass
    # The sandbox can make the host's log vanish (a folder at its name) and put its own text there.
    check = ("none" if streamed[0] == 0 else "capped" if capped[0] else "unchecked" if not has_hash
             else "mismatch" if streamed[0] != logged or digest.hexdigest() != res["log_sha256"] else "match")
    note = log_check_note(check, res)
    if note:
        warn(note)
    if check != "match":
        _print_result_output(res)
    _print_end(res, output=False)
    return exit_code_of(res)


def cmd_wait(o):
    timeout = _seconds(o, "--timeout")
    rid = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("queue", "results", "inbox"))
    start = time.monotonic()
    seen = [False]

    def check(s):
        if s["state"] != "unknown":
            seen[0] = True
        elif not seen[0] and time.monotonic() - start > 3.0:
            raise DwError(EXIT_BAD_ARGS, "no request %s in %s (nothing in queue/, no result): check the id" % (rid, spool.root))
        return False

    waiter = Waiter(Answers(spool, _key_of(o)), rid, timeout, on_poll=check)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        return _interrupted(rid)
    return _waited(o, rid, waiter, res, timeout)


def _waited(o, rid, waiter, res, timeout):
    """What dw wait and dw plan print once the wait ends, and the exit code."""
    if res is None:
        if o.flags.get("--json"):
            outln(json.dumps(waiter.last, indent=2, ensure_ascii=False))
        warn(_timeout_message(rid, waiter, timeout))
        if not o.flags.get("--json"):
            _print_pending(waiter.last)
        return EXIT_TIMEOUT
    if o.flags.get("--json"):
        outln(json.dumps(res, indent=2, ensure_ascii=False))
    else:
        _print_end(res)
    return exit_code_of(res)


def cmd_plan(o):
    timeout = _seconds(o, "--timeout")
    expires = o.flags.get("--expires")
    expires_in = DEFAULT_PLAN_EXPIRES_S if expires is None else duration_seconds(expires, "--expires", MAX_PLAN_LIFETIME_S)
    rid, intent = _id_and_intent(o)
    spool = _spool_of(o, ("tmp", "queue", "results", "inbox"))
    key = _key_of(o)
    try:
        catalog_ops = spool.catalog_ops()
    except DwError:
        catalog_ops = None  # not readable: the host checks every step anyway
    steps = read_plan(o.positional[0], catalog_ops)
    answers = Answers(spool, key)
    rid = submit_request(answers, PLAN_OP, {"steps": steps}, rid, intent, expires_in)
    err(rid)
    waiter = Waiter(answers, rid, timeout, fresh=True)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        return _interrupted(rid)
    return _waited(o, rid, waiter, res, timeout)


def cmd_status(o):
    rid = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("queue", "results", "inbox"))
    res = Answers(spool, _key_of(o)).status(rid)
    if o.flags.get("--json"):
        outln(json.dumps(res, indent=2, ensure_ascii=False))
        return EXIT_OK
    for line in status_lines(res):
        outln(line)
    return EXIT_OK


def cmd_cancel(o):
    target = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("tmp", "queue", "results", "inbox"))
    answers = Answers(spool, _key_of(o))
    rid = submit_request(answers, "dumbwaiter.cancel", {"target": target})
    waiter = Waiter(answers, rid, None, fresh=True)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        warn("stopped waiting; the cancel request %s stays queued for the host" % rid)
        return EXIT_INTERRUPTED
    if res.get("state") == "succeeded":
        out(res.get("stdout") or "")
        return EXIT_OK
    _print_result_output(res)
    for line in outcome_lines(res):
        warn(line)
    return exit_code_of(res)


def cmd_inbox(o):
    spool = _spool_of(o, ("inbox",))
    msgs = Answers(spool, _key_of(o)).messages()
    if o.flags.get("--json"):
        outln(_visible_json(json.dumps(msgs, indent=2, ensure_ascii=False)))
        return EXIT_OK
    if not msgs:
        outln("No messages.")
        return EXIT_OK
    for m in msgs:
        # The host signed it, but its words may quote the sandbox's: shown escaped, its time in UTC.
        ref = m.get("ref")
        at = utc_text(m.get("created_at")) or m.get("created_at", "?")
        outln(_plain("%s  %s%s  %s" % (at, m.get("kind", "?"), " [%s]" % ref if ref else "", m.get("text", ""))))
    return EXIT_OK


def _catalog_flaw(e):
    """Why a catalog.json entry is not an operation as the host writes it; None when it is (as
    shared/client/catalogEntries.ts)."""
    if not isinstance(e, dict):
        return "not an object"
    if not isinstance(e.get("name"), str) or not OP_NAME_RE.fullmatch(e["name"]):
        return "its name is not an operation name"
    if not isinstance(e.get("description"), str):
        return "its description is not text"
    if e.get("scope") not in ("read", "write"):
        return "its scope is neither read nor write"
    if e.get("approval") not in ("never", "always"):
        return "its approval is neither never nor always"
    t = e.get("timeout_s")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not (0 < t < float("inf")):
        return "its timeout_s is not a number of seconds"
    schema = e.get("args_schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its args_schema is not an object schema"
    props = schema.get("properties")
    if "properties" in schema and not (isinstance(props, dict) and all(isinstance(v, dict) for v in props.values())):
        return "its args_schema's properties are not schemas"
    req = schema.get("required")
    if "required" in schema and not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
        return "its args_schema's required is not a list of names"
    if "reconcile" in e and e["reconcile"] is not True:
        return "its reconcile is not true"
    return None


def checked_operations(entries):
    """(the entries that are operations, the first of each name; a note for each other one)."""
    ops, skipped = [], []
    for i, e in enumerate(entries):
        name = ' "%s"' % _plain(e["name"]) if isinstance(e, dict) and isinstance(e.get("name"), str) else ""
        why = _catalog_flaw(e) or ("an operation of that name came before it" if any(o["name"] == e["name"] for o in ops) else None)
        if why:
            skipped.append("catalog.json: operation %d%s is left out: %s" % (i + 1, name, why))
        else:
            ops.append(e)
    return ops, skipped


def describe_args(schema):
    """One line per argument: its type, its constraints, and required, its default or optional (the words
    of describeArgs in shared/client/typedArgs.ts; a test holds them equal)."""
    props = schema.get("properties") if isinstance(schema, dict) and isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    lines = []
    for name, s in props.items():
        s = s if isinstance(s, dict) else {}
        items = s.get("items") if isinstance(s.get("items"), dict) else {}
        t = "list of %s" % items.get("type", "values") if s.get("type") == "array" else s.get("type", "value")
        bits = []
        if isinstance(s.get("enum"), list):
            bits.append("one of " + "|".join(canonical_json(e) for e in s["enum"]))
        if s.get("pattern") is not None:
            bits.append("matching %s" % s["pattern"])
        for key, fmt in (("maxLength", "at most %s chars"), ("minimum", ">= %s"), ("maximum", "<= %s"), ("maxItems", "at most %s items")):
            if s.get(key) is not None:
                bits.append(fmt % _js_number(s[key]))
        bits.append("required" if name in required else "default " + canonical_json(s["default"]) if "default" in s else "optional")
        desc = s.get("description")
        lines.append("%s: %s%s%s" % (name, t, " (%s)" % ", ".join(bits) if bits else "", " - %s" % desc if desc else ""))
    return lines


def ops_lines(ops):
    """dw ops: each operation on one line (its scope, whether a human approves it, its time limit, what
    it does), its arguments under it; the words of opsLines in shared/client/catalogEntries.ts. Anyone
    who can write the spool can write catalog.json: its text is shown escaped."""
    if not ops:
        return ["This host offers no operations (yet): its allowlist is empty."]
    lines = []
    for op in ops:
        lines.append(_plain("%s  [%s%s, timeout %s s]  %s" % (
            op["name"], op["scope"], ", asks a human" if op.get("approval") == "always" else "", _js_number(op["timeout_s"]), op["description"])))
        lines += ["    " + _plain(line) for line in describe_args(op.get("args_schema"))]
    return lines + [BUILT_IN_OPS]


BUILT_IN_OPS = "Built in: dumbwaiter.ping, dumbwaiter.cancel (dw cancel ID), dumbwaiter.plan (dw plan FILE)"


def cmd_ops(o):
    spool = _spool_of(o, ())
    ops, skipped = spool.catalog()
    for note in skipped:
        warn(note)
    if o.flags.get("--json"):
        outln(_visible_json(json.dumps(ops, indent=2, ensure_ascii=False)))
        return EXIT_OK
    for line in ops_lines(ops):
        outln(line)
    return EXIT_OK


def _doctor_ping(spool, key, wait):
    """Sends a signed dumbwaiter.ping and waits up to `wait` s. An unanswered ping is taken back out of
    queue/ (so a host that comes back later does not find it). `skew`: the host's clock against the
    middle of the span between our write and our read (it answered within it)."""
    answers = Answers(spool, key, notes=False)
    ping = {"res": None, "state": "unknown", "ignored": None, "skew": None, "scope": None}
    sent = time.time()
    rid = submit_request(answers, "dumbwaiter.ping", {})
    ping["res"] = res = Waiter(answers, rid, wait, fresh=True, notes=False).run()
    got = time.time()
    if res is None:
        if spool.in_queue(rid):
            ping["state"] = "unclaimed"
            try:
                os.unlink(spool.p("queue", rid + ".json"))
            except OSError:
                pass
        elif answers.last_ignored:
            ping["ignored"] = "ignored results/%s.json: %s" % (rid, answers.last_ignored)
    elif res.get("state") == "succeeded":
        try:
            info = json.loads(res.get("stdout") or "{}")
        except ValueError:
            info = {}
        info = info if isinstance(info, dict) else {}
        ht = parse_time(info.get("time"))
        ping["skew"] = None if ht is None else ht - (sent + got) / 2
        ping["scope"] = info.get("scope")
    return ping


def host_state(spool):
    """(running, held, text): whether the host runs, whether it takes no new requests, and one line
    saying so, in the words of shared/client/hostState.ts."""
    down = host_down(spool)
    if down:
        return False, False, str(down)
    held = host_held(spool)
    return True, held is not None, held or _running_text(spool.host() or {})


def cmd_doctor(o):
    """Each check on one line, as dw.cjs words them. The ping goes even when host.json says the host is
    down (anyone can write host.json; only the host can sign the answer), with a shorter wait then."""
    checks = []

    def line(ok, what):
        checks.append(ok is not False)
        outln("%s  %s" % ("skip" if ok == "skip" else "ok  " if ok else "FAIL", what))

    root = o.spool if o.spool is not None else os.environ.get("DUMBWAITER_SPOOL")
    try:
        if not root:
            raise DwError(EXIT_NO_SPOOL, "no spool: pass --spool DIR or set DUMBWAITER_SPOOL")
        spool = Spool(root).check(("tmp", "queue", "results", "inbox"))
        line(True, "spool %s: reachable" % root)
    except DwError as e:
        line(False, e.message)
        return EXIT_NO_PERM if e.code == EXIT_NO_PERM else EXIT_NO_SPOOL
    try:
        key = _key_of(o)
        line(True, "key file: key %s" % key.key_id)
    except DwError as e:
        line(False, e.message)
        return EXIT_NO_SPOOL
    running, held, text = host_state(spool)
    wait = PING_WAIT_S if running else PING_WAIT_DOWN_S
    ping = _doctor_ping(spool, key, wait)
    res = ping["res"]
    answered = res is not None and not res.get("unsigned")  # signed for this key: the host runs
    if running or not answered:
        line(running and not held, text)
    else:
        line(True, "the host is running: it answered the ping, signed for this key (host.json says otherwise: %s)" % text)
    # Only the host can fix its mount: a degraded one (no file events, say) still works, more slowly.
    host_doc = spool.host()
    probe = host_doc.get("probe") if isinstance(host_doc, dict) else None
    if isinstance(probe, dict) and probe.get("verdict") in ("ok", "degraded", "unusable") and isinstance(probe.get("summary"), str):
        line(probe["verdict"] != "unusable", "mount, as the host probed it: %s: %s" % (probe["verdict"], _plain(probe["summary"][:300])))
    if answered:
        if res.get("state") == "succeeded" and ping["skew"] is not None:
            skew = ping["skew"]
            line(abs(skew) < 60, "clocks: the host is %.1f s %s this sandbox (requests more than 5 min ahead are refused)" % (abs(skew), "ahead of" if skew >= 0 else "behind"))
            line(True, "key accepted (scope %s)" % _plain(ping["scope"]))
        else:
            e = res.get("error") if isinstance(res.get("error"), dict) else None
            line("skip", "clocks: not checked (the ping did not succeed)")
            line(False, "key not accepted: %s" % ("%s: %s" % (e.get("code"), e.get("message")) if e else res.get("state")))
        line(True, "results signed: the answer to the ping is signed for this key")
    else:
        line("skip", "clocks: not checked (no signed answer to the ping)")
        if res is not None:
            line(False, "key not accepted: the host does not know this key / the key file is not the host's (an unsigned refusal: %s: %s)" % (
                _plain(res["error"].get("code")), _plain(res["error"].get("message"))))
        else:
            line(False, "key not accepted: no answer within %d s (%s)" % (wait, ping["state"]))
        line(False, "results signed: no answer to the ping signed for this key%s" % (" (%s)" % ping["ignored"] if ping["ignored"] else ""))
    return EXIT_OK if all(checks) else EXIT_NO_SPOOL


def cmd_selftest_vectors(o):
    """Hidden: checks this signer against a protocol vectors file; prints a JSON report."""
    try:
        with open(o.positional[0], "rb") as f:
            vectors = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise DwError(EXIT_BAD_ARGS, "cannot read the vectors file: %s" % e)
    if "signed" in vectors:
        return _selftest_host_vectors(vectors)
    report = {"valid": [], "invalid": [], "ok": True}
    for v in vectors.get("valid", []):
        env, kf = v["envelope"], v["key_file"]
        mac = compute_mac(decode_secret(kf["secret"]), env["key_id"], env["payload"])
        verified = verify_envelope(env, kf)
        ok = mac == env["mac"] and verified
        report["valid"].append({"mac": mac, "expected": env["mac"], "verified": verified, "ok": ok})
        report["ok"] = report["ok"] and ok
    for v in vectors.get("invalid", []):
        verified = verify_envelope(v["envelope"], v["key_file"])
        report["invalid"].append({"why": v.get("why"), "verified": verified, "ok": not verified})
        report["ok"] = report["ok"] and not verified
    outln(json.dumps(report, indent=2, ensure_ascii=False))
    return EXIT_OK if report["ok"] else 1


def _selftest_host_vectors(vectors):
    """The request hash and the verifier of host documents against docs/vectors-host-v1.json."""
    kf = vectors["key_file"]
    key_id, secret = kf["key_id"], decode_secret(kf["secret"])
    report = {"request_hash": [], "signed": [], "refused": []}
    for v in vectors["request_hash"]:
        args = json.loads(v["args_json"], parse_constant=_no_constants)
        report["request_hash"].append({
            "canonical": canonical_json({"args": args, "key_id": v["key_id"], "op": v["op"]}),
            "request_hash": request_hash(v["key_id"], v["op"], args)})
    for v in vectors["signed"]:
        verdict, doc = open_host_doc(v["kind"], v["file"].encode("utf-8"), key_id, secret)
        report["signed"].append({"verdict": verdict, "doc": doc if verdict == "ok" else None})
    for v in vectors["refused"]:
        verdict, _detail = open_host_doc(v["kind"], v["file"].encode("utf-8"), key_id, secret)
        report["refused"].append({"why": verdict})
    report["ok"] = (all(r["canonical"] == v["canonical"] and r["request_hash"] == v["request_hash"] for r, v in zip(report["request_hash"], vectors["request_hash"]))
                    and all(r["verdict"] == "ok" and r["doc"] == json.loads(v["text"]) for r, v in zip(report["signed"], vectors["signed"]))
                    and all(r["why"] == v["why"] for r, v in zip(report["refused"], vectors["refused"])))
    outln(json.dumps(report, indent=2, ensure_ascii=False))
    return EXIT_OK if report["ok"] else 1


HANDLERS = {
    "ops": cmd_ops,
    "submit": cmd_submit,
    "status": cmd_status,
    "wait": cmd_wait,
    "run": cmd_run,
    "plan": cmd_plan,
    "cancel": cmd_cancel,
    "inbox": cmd_inbox,
    "doctor": cmd_doctor,
    "selftest-vectors": cmd_selftest_vectors,
}


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        o = parse_argv(argv)
    except HelpWanted as h:
        out(COMMAND_HELP.get(h.command or "", USAGE))
        return EXIT_OK
    except Usage as u:
        err("dw: %s" % u)
        err("Run `dw --help` for the commands and their options.")
        return EXIT_USAGE
    try:
        return HANDLERS[o.command](o)
    except Usage as u:
        err("dw: %s" % u)
        return EXIT_USAGE
    except DwError as e:
        err("dw: %s" % e.message)
        return e.code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as e:
        # Anyone can write the spool, and a file no check foresaw must not end in a traceback and exit
        # 1, which reads as the operation's own failure.
        err("dw: cannot go on: %s: %s (a file in the spool may not be what the host wrote, e.g. catalog.json or host.json); nothing here is the host's answer" % (
            type(e).__name__, _plain(str(e)[:200])))
        return EXIT_NO_SPOOL


if __name__ == "__main__":
    sys.exit(main())
