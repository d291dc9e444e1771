#!/bin/sh
# The Dumbwaiter devcontainer Feature: installs /usr/local/bin/dw, which runs the client the host puts
# in the mounted spool's bin/ (dw.cjs with Node, else dw.py with Python 3). The spool is mounted only
# when the container runs, so `dw` finds the client then, not now; nothing is downloaded.
set -eu

SPOOL="${SPOOL:-/dumbwaiter}"
KEY_FILE="${KEYFILE:-/run/secrets/dumbwaiter-key.json}"
PREFIX="${DUMBWAITER_FEATURE_PREFIX:-/usr/local}"
PROFILE_D="${DUMBWAITER_FEATURE_PROFILE_D:-/etc/profile.d}"

fail() {
  echo "dumbwaiter feature: $*" >&2
  exit 1
}

# The paths are written into a script between single quotes: no quote or line feed may end them early.
for p in "$SPOOL" "$KEY_FILE"; do
  case "$p" in
    /*) ;;
    *) fail "\"$p\" is not an absolute path" ;;
  esac
  case "$p" in
    *"'"* | *'
'*) fail "\"$p\" has a quote or a line feed" ;;
  esac
done

if ! command -v node >/dev/null 2>&1 && ! command -v python3 >/dev/null 2>&1; then
  fail "the client needs Node 18+ or Python 3.8+, and this image has neither: add the node or python Feature, or use an image with one"
fi

mkdir -p "$PREFIX/bin" "$PROFILE_D"
cat >"$PREFIX/bin/dw" <<SCRIPT
#!/bin/sh
# dw: the Dumbwaiter client of the mounted spool (written by the dumbwaiter devcontainer Feature).
[ -n "\${DUMBWAITER_SPOOL:-}" ] || DUMBWAITER_SPOOL='$SPOOL'
[ -n "\${DUMBWAITER_KEY_FILE:-}" ] || DUMBWAITER_KEY_FILE='$KEY_FILE'
export DUMBWAITER_SPOOL DUMBWAITER_KEY_FILE
if command -v node >/dev/null 2>&1 && [ -f "\$DUMBWAITER_SPOOL/bin/dw.cjs" ]; then
  exec node "\$DUMBWAITER_SPOOL/bin/dw.cjs" "\$@"
fi
if command -v python3 >/dev/null 2>&1 && [ -f "\$DUMBWAITER_SPOOL/bin/dw.py" ]; then
  exec python3 "\$DUMBWAITER_SPOOL/bin/dw.py" "\$@"
fi
echo "dw: no client in \$DUMBWAITER_SPOOL/bin/ (is the spool mounted there, and readable by uid \$(id -u)? see docs/SANDBOX.md)" >&2
exit 69
SCRIPT
chmod 0755 "$PREFIX/bin/dw"

# Login shells (and agents started from one) get the same paths.
cat >"$PROFILE_D/dumbwaiter.sh" <<PROFILE
[ -n "\${DUMBWAITER_SPOOL:-}" ] || DUMBWAITER_SPOOL='$SPOOL'
[ -n "\${DUMBWAITER_KEY_FILE:-}" ] || DUMBWAITER_KEY_FILE='$KEY_FILE'
export DUMBWAITER_SPOOL DUMBWAITER_KEY_FILE
PROFILE
chmod 0644 "$PROFILE_D/dumbwaiter.sh"
echo "dumbwaiter feature: installed $PREFIX/bin/dw (spool $SPOOL, key $KEY_FILE)"
