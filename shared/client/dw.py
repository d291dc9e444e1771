#!/usr/bin/env python3
"""dw: the Dumbwaiter client for a sandbox (Python 3.8 or later, standard library only).

Asks the host to run allowlisted operations by writing signed request files into the shared spool
folder, and reads their results back (protocol v1; docs/SANDBOX.md describes the commands).

    dw ops [--json]
    dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S]
    dw status ID [--json]
    dw wait ID [--timeout S] [--json]
    dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S]
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
import sys
import time
from datetime import datetime, timedelta, timezone

PROTOCOL = 1
MAX_REQUEST_BYTES = 64 * 1024
MAX_INTENT_CHARS = 2000
HEARTBEAT_FRESH_S = 30.0
PING_WAIT_S = 10.0
DOMAIN = "dumbwaiter-request-v1\n"

REQUEST_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
KEY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
SECRET_RE = re.compile(r"[A-Za-z0-9_-]+")
MAC_RE = re.compile(r"[0-9a-f]{64}")
RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
INTEGER_RE = re.compile(r"[+-]?[0-9]+")
MAX_SAFE_INTEGER = 2 ** 53 - 1

FINAL_STATES = ("succeeded", "failed", "rejected", "denied", "expired", "cancelled")
TERMINAL_STATES = FINAL_STATES + ("uncertain",)

# Exit codes (docs/SANDBOX.md).
EXIT_OK = 0
EXIT_USAGE = 64
EXIT_BAD_ARGS = 65
EXIT_NO_KEY = 66
EXIT_NO_SPOOL = 69
EXIT_REJECTED = 80
EXIT_DENIED = 81
EXIT_EXPIRED = 82
EXIT_CANCELLED = 83
EXIT_UNCERTAIN = 84
EXIT_TIMEOUT = 85
EXIT_NO_EXIT_CODE = 86
EXIT_INTERRUPTED = 130

STATE_EXIT = {
    "rejected": EXIT_REJECTED,
    "denied": EXIT_DENIED,
    "expired": EXIT_EXPIRED,
    "cancelled": EXIT_CANCELLED,
    "uncertain": EXIT_UNCERTAIN,
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
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        dt = datetime(year, month, day, hour, minute, min(second, 59), tzinfo=tz)
    except ValueError:
        return None
    return dt.timestamp() + frac


def _js_number(x):
    """A number as JavaScript's JSON.stringify writes it."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        # JavaScript holds every number as a double: a larger integer has already been rounded there.
        return str(x) if abs(x) <= MAX_SAFE_INTEGER else _js_number(float(x))
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


def stable_id(op, args, intent=None):
    """A deterministic request id for (op, args, intent): "s-" + 32 hex digits of the SHA-256 of the
    canonical JSON of {"args", "intent", "op"}. A caller that retries after a crash gets the same id."""
    text = canonical_json({"args": args if args is not None else {}, "intent": intent, "op": op})
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
    except (UnicodeDecodeError, ValueError):
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


class Spool(object):
    def __init__(self, root):
        self.root = root

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def check(self, need):
        """DwError 69 unless the spool and the folders in `need` are there (and writable where we write)."""
        if not os.path.isdir(self.root):
            raise DwError(EXIT_NO_SPOOL, "the spool %s is not there (or not a folder): check --spool / DUMBWAITER_SPOOL and the mount" % self.root)
        missing = [d for d in need if not os.path.isdir(self.p(d))]
        if missing:
            raise DwError(EXIT_NO_SPOOL, "the spool %s is not usable: %s missing (was it made with `dumbwaiter init`?)" % (self.root, ", ".join(d + "/" for d in missing)))
        for d in need:
            if d in ("tmp", "queue") and not os.access(self.p(d), os.W_OK | os.X_OK):
                raise DwError(EXIT_NO_SPOOL, "cannot write to %s: run as the spool's owner (uid %d)" % (self.p(d), _owner(self.root)))
        return self

    def read_json(self, *parts):
        """The parsed JSON at a path in the spool; None when absent or (for now) unreadable as JSON."""
        path = self.p(*parts)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise DwError(EXIT_NO_SPOOL, "cannot read %s: %s" % (path, e.strerror or e))
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return None

    def result(self, rid):
        doc = self.read_json("results", rid + ".json")
        return doc if isinstance(doc, dict) and isinstance(doc.get("state"), str) else None

    def in_queue(self, rid):
        return os.path.lexists(self.p("queue", rid + ".json"))

    def pending(self, rid):
        """Written by the sandbox but not yet taken in by the host (in queue/ or being claimed)."""
        if self.in_queue(rid) or os.path.lexists(self.p("claimed", rid + ".json")):
            return True
        # This host keeps what it claimed in claimed/<host_id>/ (its own folder per host).
        try:
            subs = os.listdir(self.p("claimed"))
        except OSError:
            return False
        for sub in subs:
            if not sub.startswith(".") and os.path.lexists(self.p("claimed", sub, rid + ".json")):
                return True
        return False

    def host(self):
        doc = self.read_json("host.json")
        return doc if isinstance(doc, dict) else None

    def catalog(self):
        doc = self.read_json("catalog.json")
        if doc is None:
            if not os.path.exists(self.p("catalog.json")):
                raise DwError(EXIT_NO_SPOOL, "no catalog.json in %s: the host has not published its operations yet (is it set up? `dumbwaiter init`)" % self.root)
            raise DwError(EXIT_NO_SPOOL, "catalog.json in %s is not readable JSON" % self.root)
        ops = doc.get("operations") if isinstance(doc, dict) else None
        if not isinstance(ops, list):
            raise DwError(EXIT_NO_SPOOL, "catalog.json in %s has no operations list" % self.root)
        return [o for o in ops if isinstance(o, dict) and isinstance(o.get("name"), str)]

    def write_request(self, rid, text):
        """tmp/ then rename into queue/, with fsyncs: readers never see a partial file."""
        data = text.encode("utf-8")
        tmp = self.p("tmp", "%s.%d.%s.tmp" % (rid, os.getpid(), binascii.hexlify(os.urandom(6)).decode("ascii")))
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
            os.rename(tmp, self.p("queue", rid + ".json"))
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise DwError(EXIT_NO_SPOOL, "cannot write the request into %s: %s" % (self.root, e.strerror or e))
        _fsync_dir(self.p("queue"))


def _owner(path):
    try:
        return os.stat(path).st_uid
    except OSError:
        return -1


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


def host_down_reason(spool):
    """Why the host looks down (None when its heartbeat is fresh)."""
    doc = spool.host()
    if doc is None:
        return "there is no host.json: the host has never run on this spool"
    age = heartbeat_age(doc)
    if age is None:
        return "host.json has no valid heartbeat_at"
    if doc.get("up") is False:
        return "it stopped: host.json says up: false; last heartbeat %s ago" % _dur(age)
    if age >= HEARTBEAT_FRESH_S:
        return "its last heartbeat is %s old" % _dur(age)
    return None


def _dur(seconds):
    s = abs(seconds)
    if s < 120:
        return "%d s" % round(s)
    if s < 7200:
        return "%d min" % round(s / 60)
    if s < 172800:
        return "%.1f h" % (s / 3600)
    return "%d days" % round(s / 86400)


# ---------------------------------------------------------------------------------------------
# Typed arguments (from the operation's args_schema in catalog.json)


def _no_constants(name):
    raise ValueError("%s is not valid JSON" % name)


def parse_json_text(text, what):
    try:
        return json.loads(text, parse_constant=_no_constants)
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
            parsed = json.loads(text, parse_constant=_no_constants)
        except ValueError:
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
# Requests


def make_request(key, rid, op, args, intent=None, expires_in=None, now=None):
    """(payload, envelope text). The payload is serialised once and signed as is."""
    ts = time.time() if now is None else now
    payload_obj = {"id": rid, "op": op, "args": args, "created_at": now_iso(ts)}
    if expires_in is not None:
        payload_obj["expires_at"] = now_iso(ts + expires_in)
    if intent is not None:
        payload_obj["intent"] = intent
    try:
        payload = json.dumps(payload_obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        payload.encode("utf-8")
    except (ValueError, UnicodeError):
        raise DwError(EXIT_BAD_ARGS, "the arguments are not valid UTF-8 text")
    mac = compute_mac(key.secret, key.key_id, payload)
    envelope = json.dumps({"v": 1, "key_id": key.key_id, "payload": payload, "mac": mac}, separators=(",", ":"), ensure_ascii=False)
    if len(envelope.encode("utf-8")) > MAX_REQUEST_BYTES:
        raise DwError(EXIT_BAD_ARGS, "the request would be %d bytes, more than the 64 KiB a request may have" % len(envelope.encode("utf-8")))
    return payload, envelope


def submit_request(spool, key, op, args, rid=None, intent=None, expires_in=None):
    if rid is None:
        rid = fresh_id()
    _, envelope = make_request(key, rid, op, args, intent, expires_in)
    spool.write_request(rid, envelope)
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


def describe_end(result):
    """One line about how a request ended, for stderr (None when it simply succeeded)."""
    state = result.get("state")
    rid = result.get("id")
    e = result.get("error") if isinstance(result.get("error"), dict) else None
    detail = ""
    if e:
        detail = "%s: %s" % (e.get("code"), e.get("message"))
    if state == "succeeded":
        return None
    if state == "failed":
        if e:
            return "%s failed (%s)" % (rid, detail)
        if result.get("exit_code") is None:
            sig = result.get("signal")
            return "%s failed without an exit code%s" % (rid, " (signal %s)" % sig if sig else "")
        return None  # an ordinary non-zero exit: its own stderr says why
    if state == "rejected":
        return "%s was rejected: %s" % (rid, detail or "no reason given")
    if state == "denied":
        return "%s was denied: %s" % (rid, detail or "a human said no")
    if state == "expired":
        return "%s expired before it started: %s" % (rid, detail or "too old")
    if state == "cancelled":
        by = result.get("cancelled_by")
        return "%s was cancelled%s" % (rid, " by " + by if by else "")
    if state == "uncertain":
        return ("%s is uncertain: the host stopped while it ran, so it may or may not have taken effect; "
                "it will not be re-run, and a human will settle it (%s)" % (rid, detail or "interrupted"))
    return "%s ended as %s" % (rid, state)


class Waiter(object):
    """Polls a request's result with backoff (50 ms growing to 1 s), with notes for the human on stderr."""

    def __init__(self, spool, rid, timeout=None, fresh=False, on_poll=None, notes=True):
        self.spool = spool
        self.rid = rid
        self.timeout = timeout
        self.fresh = fresh  # we just wrote queue/<id>.json: results count once the host took it in
        self.on_poll = on_poll
        self.notes = notes
        self.last = None
        self.last_state = "unknown"
        self._next_look = 5.0

    def state_now(self):
        res = self.spool.result(self.rid)
        pending = self.spool.pending(self.rid)
        if res is not None and not (self.fresh and pending):
            self.last = res
            return res["state"], res
        if pending:
            return "unclaimed", res
        return ("unknown" if res is None else res["state"]), res

    def run(self):
        """The final (or uncertain) result, or None when the timeout passed first."""
        start = time.monotonic()
        deadline = None if self.timeout is None else start + self.timeout
        delay = 0.05
        said = set()
        while True:
            state, res = self.state_now()
            self.last_state = state
            progressed = self.on_poll(state, res) if self.on_poll else False
            if res is not None and state in TERMINAL_STATES:
                return res
            if self.notes:
                self._note(state, res, time.monotonic() - start, said)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return None
            if progressed:
                delay = 0.05
            pause = delay if deadline is None else min(delay, max(0.0, deadline - now))
            time.sleep(pause)
            delay = min(delay * 1.5, 1.0)

    def _note(self, state, res, waited, said):
        if state == "awaiting_approval" and "approval" not in said:
            said.add("approval")
            warn("%s is waiting for a human's approval" % self.rid)
        # Still not started after a while: look at the heartbeat (at 5 s, then every 30 s), and say
        # once if the host looks down or is paused.
        if state in ("unclaimed", "queued") and waited >= self._next_look:
            self._next_look = waited + 30
            why = host_down_reason(self.spool)
            if why and "down" not in said:
                said.add("down")
                warn("the host looks down (%s): %s stays queued until it is back" % (why, self.rid))
            elif not why and "paused" not in said and (self.spool.host() or {}).get("paused"):
                said.add("paused")
                warn("the host is paused: %s will start when it resumes" % self.rid)


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
    "submit": ({"--args-json": True, "--id": True, "--intent": True, "--expires-in": True}, 1, None),
    "status": ({"--json": False}, 1, 1),
    "wait": ({"--timeout": True, "--json": False}, 1, 1),
    "run": ({"--args-json": True, "--id": True, "--intent": True, "--timeout": True}, 1, None),
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
  dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S]
                                  write a signed request and print its id
  dw status ID [--json]           the request's state (unclaimed, queued, running, succeeded, ...)
  dw wait ID [--timeout S] [--json]
                                  wait for a final state, print the output, exit as below
  dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S]
                                  submit, print the id on stderr, stream the output, exit as below
  dw cancel ID                    ask the host to cancel a request
  dw inbox [--json]               messages from the host
  dw doctor                       check the spool, the key file, the host and the clocks

Arguments are typed by the host's catalog: workers=4, verbose=true, files=a.ts files=b.ts or
files='["a.ts","b.ts"]'. --args-json gives all arguments as one JSON object.

environment:
  DUMBWAITER_SPOOL      the spool folder (or --spool DIR)
  DUMBWAITER_KEY_FILE   the key file (or --key-file FILE)

exit codes:
  0 succeeded; 1-255 the operation's own exit code; 64 usage; 65 bad arguments (nothing written);
  66 no valid key file; 69 spool not usable (doctor: a check failed); 80 rejected; 81 denied;
  82 expired; 83 cancelled; 84 uncertain; 85 --timeout passed (dw wait ID again);
  86 failed without an exit code (could not start, timeout, signal)
"""

COMMAND_HELP = {
    "ops": "usage: dw ops [--json]\n\nLists the host's operations with their arguments (type, constraints, required or default).\n--json prints the catalog's operations as JSON.\n",
    "submit": "usage: dw submit OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--expires-in S]\n\nWrites a signed request and prints its id. Arguments are typed and checked against the catalog\nbefore anything is written (exit 65 when they do not fit). --id chooses the id (a retry with the\nsame id and arguments never runs twice); --expires-in S: the request must not start after S seconds.\n",
    "status": "usage: dw status ID [--json]\n\nThe request's state: unclaimed (still in queue/), queued, awaiting_approval, running, succeeded,\nfailed, rejected, denied, expired, cancelled, uncertain, or unknown (no trace of it).\n",
    "wait": "usage: dw wait ID [--timeout S] [--json]\n\nWaits for a final state (or uncertain), prints the output (stdout to stdout, stderr to stderr)\nand exits with the operation's exit code, or 80-86. --json prints the result document instead.\n",
    "run": "usage: dw run OP [name=value ...] [--args-json JSON] [--id ID] [--intent TEXT] [--timeout S]\n\nSubmits a request, prints its id on stderr at once, streams its live output to stdout, and exits\nwith the operation's exit code (or 80-86). With --timeout S it stops waiting after S seconds (85).\n",
    "cancel": "usage: dw cancel ID\n\nAsks the host to cancel a request (a signed dumbwaiter.cancel) and prints its answer.\n",
    "inbox": "usage: dw inbox [--json]\n\nMessages from the host (conflicts, revoked keys, notices), oldest first.\n",
    "doctor": "usage: dw doctor\n\nChecks that the spool is there, the key file is valid, the host is alive (heartbeat), the clocks\nare in step and the key is accepted (a signed dumbwaiter.ping). Exit 0 when all pass, else 69.\n",
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
                if o.command is None and name in ("--json", "--timeout", "--id", "--intent", "--args-json", "--expires-in"):
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
        raise Usage("dw %s needs %s" % (o.command, "an operation name" if o.command in ("submit", "run") else "a request id" if o.command != "selftest-vectors" else "a vectors file"))
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


def _spool_of(o, need):
    root = o.spool if o.spool is not None else os.environ.get("DUMBWAITER_SPOOL")
    if not root:
        raise DwError(EXIT_NO_SPOOL, "no spool: pass --spool DIR or set DUMBWAITER_SPOOL")
    return Spool(root).check(need)


def _key_of(o):
    return load_key(o.key_file if o.key_file is not None else os.environ.get("DUMBWAITER_KEY_FILE"))


def _request_id_arg(value, what="request id"):
    if not is_request_id(value):
        raise DwError(EXIT_BAD_ARGS, "%s %r is not a valid request id (letters, digits, '.', '_', '-'; at most 128; not ending in .tmp)" % (what, value))
    return value


def _prepare_request(o):
    """Everything a request needs, checked before anything is written: (spool, key, rid, op, args, intent)."""
    op = o.positional[0]
    pairs = []
    for tok in o.positional[1:]:
        name, eq, value = tok.partition("=")
        if not eq or not name:
            raise DwError(EXIT_BAD_ARGS, 'expected name=value, got "%s"' % tok)
        pairs.append((name, value))
    rid = o.flags.get("--id")
    if rid is not None:
        _request_id_arg(rid, "--id")
    intent = o.flags.get("--intent")
    if intent is not None and len(intent) > MAX_INTENT_CHARS:
        raise DwError(EXIT_BAD_ARGS, "--intent is longer than %d characters" % MAX_INTENT_CHARS)
    spool = _spool_of(o, ("tmp", "queue", "results"))
    key = _key_of(o)
    catalog_ops = [] if op.startswith("dumbwaiter.") else spool.catalog()
    args = build_args(op, pairs, o.flags.get("--args-json"), catalog_ops)
    return spool, key, rid, op, args, intent


def cmd_submit(o):
    expires_in = _seconds(o, "--expires-in")
    spool, key, rid, op, args, intent = _prepare_request(o)
    rid = submit_request(spool, key, op, args, rid, intent, expires_in)
    outln(rid)
    return EXIT_OK


def _print_result_output(res):
    if res.get("stdout"):
        out(res["stdout"])
    if res.get("stderr"):
        _write(sys.stderr, res["stderr"])


def _timeout_message(rid, state, timeout):
    return "%s is still %s after %s s: it may still run; `dw wait %s` again" % (rid, state, _js_number(timeout), rid)


def _interrupted(rid):
    warn("stopped waiting; %s goes on. `dw wait %s` to wait again, `dw cancel %s` to cancel it" % (rid, rid, rid))
    return EXIT_INTERRUPTED


def cmd_run(o):
    timeout = _seconds(o, "--timeout")
    spool, key, rid, op, args, intent = _prepare_request(o)
    rid = submit_request(spool, key, op, args, rid, intent)
    err(rid)
    log_path = spool.p("results", rid + ".log")
    streamed = [0]

    def pump(_state=None, _res=None):
        try:
            with open(log_path, "rb") as f:
                f.seek(streamed[0])
                chunk = f.read()
        except OSError:
            return False
        if chunk:
            out(chunk)
            streamed[0] += len(chunk)
            return True
        return False

    waiter = Waiter(spool, rid, timeout, fresh=True, on_poll=pump)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        return _interrupted(rid)
    if res is None:
        warn(_timeout_message(rid, waiter.last_state, timeout))
        return EXIT_TIMEOUT
    pump()
    if streamed[0] == 0:
        _print_result_output(res)
    elif res.get("stdout_truncated") or res.get("stderr_truncated"):
        warn("the output above stopped at the operation's output limit; `dw wait %s` shows its tail" % rid)
    note = describe_end(res)
    if note:
        warn(note)
    return exit_code_of(res)


def _wait_existing(spool, rid, timeout, notes=True):
    """Waits for a request already written: (result or None, last state). DwError when there is no trace."""
    start = time.monotonic()
    seen = [False]

    def check(state, _res):
        if state != "unknown":
            seen[0] = True
        elif not seen[0] and time.monotonic() - start > 3.0:
            raise DwError(EXIT_BAD_ARGS, "no request %s in %s (nothing in queue/, no result): check the id" % (rid, spool.root))
        return False

    waiter = Waiter(spool, rid, timeout, on_poll=check, notes=notes)
    return waiter.run(), waiter.last_state


def cmd_wait(o):
    timeout = _seconds(o, "--timeout")
    rid = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("queue", "results"))
    try:
        res, state = _wait_existing(spool, rid, timeout)
    except KeyboardInterrupt:
        return _interrupted(rid)
    if res is None:
        if o.flags.get("--json"):
            outln(json.dumps(spool.result(rid) or {"id": rid, "state": state}, indent=2, ensure_ascii=False))
        warn(_timeout_message(rid, state, timeout))
        return EXIT_TIMEOUT
    if o.flags.get("--json"):
        outln(json.dumps(res, indent=2, ensure_ascii=False))
    else:
        _print_result_output(res)
        note = describe_end(res)
        if note:
            warn(note)
    return exit_code_of(res)


def cmd_status(o):
    rid = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("queue", "results"))
    res = spool.result(rid)
    if res is None:
        state = "unclaimed" if spool.pending(rid) else "unknown"
        if o.flags.get("--json"):
            outln(json.dumps({"id": rid, "state": state}, indent=2))
        else:
            outln("%s: %s" % (rid, state))
        return EXIT_OK
    if o.flags.get("--json"):
        outln(json.dumps(res, indent=2, ensure_ascii=False))
        return EXIT_OK
    bits = []
    if res.get("op"):
        bits.append(str(res["op"]))
    if res.get("exit_code") is not None:
        bits.append("exit %s" % res["exit_code"])
    if res.get("signal"):
        bits.append("signal %s" % res["signal"])
    e = res.get("error") if isinstance(res.get("error"), dict) else None
    if e:
        bits.append("%s: %s" % (e.get("code"), e.get("message")))
    if res.get("resolved_by"):
        bits.append("resolved by a %s%s" % (res["resolved_by"], ": " + res["note"] if res.get("note") else ""))
    outln("%s: %s%s" % (rid, res["state"], " (" + "; ".join(bits) + ")" if bits else ""))
    return EXIT_OK


def cmd_cancel(o):
    target = _request_id_arg(o.positional[0])
    spool = _spool_of(o, ("tmp", "queue", "results"))
    key = _key_of(o)
    rid = submit_request(spool, key, "dumbwaiter.cancel", {"target": target})
    waiter = Waiter(spool, rid, None, fresh=True)
    try:
        res = waiter.run()
    except KeyboardInterrupt:
        warn("stopped waiting; the cancel request %s stays queued for the host" % rid)
        return EXIT_INTERRUPTED
    if res.get("state") == "succeeded":
        out(res.get("stdout") or "")
        return EXIT_OK
    _print_result_output(res)
    note = describe_end(res)
    if note:
        warn(note)
    return exit_code_of(res)


def cmd_inbox(o):
    spool = _spool_of(o, ("inbox",))
    names = []
    try:
        names = os.listdir(spool.p("inbox"))
    except OSError as e:
        raise DwError(EXIT_NO_SPOOL, "cannot read %s: %s" % (spool.p("inbox"), e.strerror or e))
    msgs = []
    for name in names:
        if name.startswith(".") or name.endswith(".tmp") or not name.endswith(".json"):
            continue
        doc = spool.read_json("inbox", name)
        if isinstance(doc, dict):
            if not isinstance(doc.get("id"), str):
                doc["id"] = name[: -len(".json")]
            msgs.append(doc)
    msgs.sort(key=lambda m: m["id"])
    if o.flags.get("--json"):
        outln(json.dumps(msgs, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not msgs:
        outln("No messages.")
        return EXIT_OK
    for m in msgs:
        ref = m.get("ref")
        outln("%s  %s%s  %s" % (m.get("created_at", "?"), m.get("kind", "?"), " [%s]" % ref if ref else "", m.get("text", "")))
    return EXIT_OK


def _describe_arg(name, schema, required):
    if not isinstance(schema, dict):
        return name
    t = schema.get("type", "any")
    inner = schema
    if t == "array":
        inner = schema.get("items", {}) if isinstance(schema.get("items"), dict) else {}
        t = "array of %s" % inner.get("type", "any")
    parts = [t]
    if isinstance(inner.get("enum"), list):
        parts.append("one of " + ", ".join(json.dumps(e, ensure_ascii=False) for e in inner["enum"]))
    if isinstance(inner.get("pattern"), str):
        parts.append("matching " + inner["pattern"])
    if isinstance(inner.get("maxLength"), int):
        parts.append("at most %d characters" % inner["maxLength"])
    lo, hi = inner.get("minimum"), inner.get("maximum")
    if lo is not None and hi is not None:
        parts.append("%s..%s" % (_js_number(lo), _js_number(hi)))
    elif lo is not None:
        parts.append(">= %s" % _js_number(lo))
    elif hi is not None:
        parts.append("<= %s" % _js_number(hi))
    if schema.get("type") == "array" and isinstance(schema.get("maxItems"), int):
        parts.append("at most %d items" % schema["maxItems"])
    if "default" in schema:
        parts.append("default " + json.dumps(schema["default"], ensure_ascii=False))
    else:
        parts.append("required" if required else "optional")
    line = "%s: %s" % (name, ", ".join(parts))
    if schema.get("description"):
        line += " - " + str(schema["description"])
    return line


def cmd_ops(o):
    spool = _spool_of(o, ())
    ops = spool.catalog()
    if o.flags.get("--json"):
        outln(json.dumps(ops, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not ops:
        outln("This host offers no operations (yet): its allowlist is empty.")
        return EXIT_OK
    for op in ops:
        extra = []
        if op.get("scope"):
            extra.append(str(op["scope"]))
        if op.get("approval") == "always":
            extra.append("asks a human")
        elif op.get("approval") == "never":
            extra.append("no approval")
        if op.get("timeout_s") is not None:
            extra.append("timeout %s s" % op["timeout_s"])
        outln("%s  (%s)" % (op["name"], ", ".join(extra)))
        if op.get("description"):
            outln("    " + str(op["description"]))
        schema = op.get("args_schema") if isinstance(op.get("args_schema"), dict) else {}
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        if not props:
            outln("    no arguments")
        for name, prop in props.items():
            outln("    " + _describe_arg(name, prop, name in required))
        outln()
    outln("Built in: dumbwaiter.ping, dumbwaiter.cancel (dw cancel ID)")
    return EXIT_OK


def cmd_doctor(o):
    checks = []

    def line(ok, name, detail):
        checks.append(ok)
        outln("%-4s %-12s %s" % ("ok" if ok else "FAIL", name, detail))

    # 1. The spool.
    spool = None
    root = o.spool if o.spool is not None else os.environ.get("DUMBWAITER_SPOOL")
    if not root:
        line(False, "spool", "no spool: pass --spool DIR or set DUMBWAITER_SPOOL")
    else:
        try:
            spool = Spool(root).check(("tmp", "queue", "results", "inbox"))
            line(True, "spool", "%s (tmp, queue, results, inbox present and writable)" % root)
        except DwError as e:
            line(False, "spool", e.message)
    # 2. The key file.
    key = None
    try:
        key = _key_of(o)
        line(True, "key file", "%s: key %s" % (key.path, key.key_id))
    except DwError as e:
        line(False, "key file", e.message)
    # 3. The heartbeat.
    host_doc = spool.host() if spool else None
    age = heartbeat_age(host_doc)
    fresh = False
    if spool is None:
        line(False, "heartbeat", "not checked: no spool")
    elif host_doc is None:
        line(False, "heartbeat", "no host.json in the spool: the host has never run here, or the host looks down")
    elif age is None:
        line(False, "heartbeat", "host.json has no valid heartbeat_at")
    elif host_doc.get("up") is False:
        line(False, "heartbeat", "the host looks down: it stopped (host.json says up: false), last heartbeat %s ago. Start it: `dumbwaiter daemon` or the app" % _dur(age))
    elif age >= HEARTBEAT_FRESH_S:
        line(False, "heartbeat", "the host looks down: its last heartbeat is %s old (more than %d s)" % (_dur(age), HEARTBEAT_FRESH_S))
    else:
        fresh = True
        line(True, "heartbeat", "host %s (dumbwaiter %s) beat %s ago%s" % (
            host_doc.get("host_id", "?"), host_doc.get("app_version", "?"), _dur(max(age, 0)),
            "; PAUSED: requests wait until it resumes" if host_doc.get("paused") else ""))
    # 4. The clocks.
    if age is None:
        line(False, "clock", "cannot compare the clocks: no heartbeat")
    elif age < -5:
        line(False, "clock", "this clock is at least %s behind the host's (its heartbeat is in our future)" % _dur(-age))
    elif not fresh:
        line(False, "clock", "cannot compare the clocks: the heartbeat is %s old (the host is down%s)" % (
            _dur(age), "" if host_doc.get("up") is False else ", or this clock is ahead of the host's by up to that much"))
    else:
        line(True, "clock", "in step with the host (heartbeat written %s before our clock's now; the host beats every 5-10 s)" % _dur(max(age, 0)))
    # 5. The key, accepted by the host (a signed dumbwaiter.ping).
    if spool is None or key is None:
        line(False, "key accepted", "not tried: %s" % ("no usable spool" if spool is None else "no valid key file"))
    elif not fresh:
        line(False, "key accepted", "not tried: the host looks down (a ping would wait in queue/ until it is back)")
    else:
        try:
            sent = time.time()
            rid = submit_request(spool, key, "dumbwaiter.ping", {})
            res = Waiter(spool, rid, PING_WAIT_S, fresh=True, notes=False).run()
        except DwError as e:
            res, rid = None, None
            line(False, "key accepted", e.message)
        if rid is None:
            pass
        elif res is None:
            if spool.in_queue(rid):
                try:
                    os.unlink(spool.p("queue", rid + ".json"))
                except OSError:
                    pass
            line(False, "key accepted", "no answer to a ping within %d s: the host is not taking requests from this spool" % PING_WAIT_S)
        elif res.get("state") == "succeeded":
            info = {}
            try:
                info = json.loads(res.get("stdout") or "{}")
            except ValueError:
                pass
            got = time.time()
            ht = parse_time(info.get("time")) if isinstance(info, dict) else None
            skew = ""
            if ht is not None:
                if ht > got + 5 or ht < sent - 5:
                    skew = "; clocks differ by about %s" % _dur(ht - (sent + got) / 2)
            line(True, "key accepted", "ping %s answered: key %s, scope %s%s" % (rid, info.get("key_id", key.key_id), info.get("scope", "?"), skew))
        else:
            e = res.get("error") if isinstance(res.get("error"), dict) else {}
            line(False, "key accepted", "the host refused a ping (%s): %s: %s" % (res.get("state"), e.get("code"), e.get("message")))
    return EXIT_OK if all(checks) else EXIT_NO_SPOOL


def cmd_selftest_vectors(o):
    """Hidden: checks this signer against a protocol vectors file; prints a JSON report."""
    try:
        with open(o.positional[0], "rb") as f:
            vectors = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise DwError(EXIT_BAD_ARGS, "cannot read the vectors file: %s" % e)
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


HANDLERS = {
    "ops": cmd_ops,
    "submit": cmd_submit,
    "status": cmd_status,
    "wait": cmd_wait,
    "run": cmd_run,
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


if __name__ == "__main__":
    sys.exit(main())
