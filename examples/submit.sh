#!/bin/sh
# Submits one request to a Dumbwaiter spool and waits for its result, with nothing but sh and openssl.
# A minimal sandbox-side client, to try the host by hand; see docs/PROTOCOL.md for the format.
#
#   usage: submit.sh KEY_FILE SPOOL OP [ARGS_JSON] [ID]
#          submit.sh --verify KEY_FILE result|inbox FILE   (prints the document the host signed, or why not)
#   e.g.   submit.sh ~/my-sandbox.key.json ~/Dumbwaiter/spool echo '{"msg":"hello"}'
#
# Anyone who can write into the spool can write results/ID.json, so a result counts only when the host
# signed it for this key (PROTOCOL.md, "Authenticated results and inbox messages"); anything else is
# ignored, and said once. The script cannot compute the request hash (that needs canonical JSON), so it
# learns that ID was already bound to another request only from the host's signed inbox message
# (kind conflict, ref ID), which it waits a moment for before believing a result (2 s when the result is
# the one that was there before the request): any such message about ID counts, so give every request a
# new ID (the default). Only queue/ID.json means "not taken in yet" (anyone can put a name in claimed/).
# It reads only regular files, at most 64 MiB of a result and 8 MiB of anything else (a larger one is
# ignored, and said once), each once, into a private folder (mktemp -d) outside the spool; a FIFO
# swapped in between that check and the read holds it up for 5 s with timeout(1), without it until a
# writer comes: the real clients (bin/dw.py, bin/dw.cjs) cannot be held up.
# Exit: 0 succeeded, 1 another final state, 3 no result in 120 s, 87 the id is bound to another request.
set -eu

field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$key_file" | head -n 1; }
load_key() {
  key_id=$(field key_id)
  secret=$(field secret)
  [ -n "$key_id" ] && [ -n "$secret" ] || { echo "$key_file is not a Dumbwaiter key file" >&2; exit 2; }
  # The secret is base64url without padding (43 characters for 32 bytes): make it hex for openssl.
  hexkey=$(printf '%s=' "$secret" | tr '_-' '/+' | base64 -d | od -An -vtx1 | tr -d ' \n')
}

prefix='{"auth":{"key_id":"\([A-Za-z0-9_-]\{1,64\}\)","mac":"\([0-9a-f]\{64\}\)"},'
# verify KIND FILE: prints T, the document behind the fixed prefix, when its MAC is the host's for our
# key; else prints why not (unsigned, other_key, bad_mac) and fails. FILE is read once (the x keeps its
# last new lines), so what is checked is what is printed, whoever changes FILE meanwhile.
verify() {
  data=$(cat -- "$2"; printf x) && data=${data%x}
  signer=$(printf '%s' "$data" | sed -n "1s/^$prefix.*/\1/p")
  [ -n "$signer" ] || { echo unsigned; return 1; }
  [ "$signer" = "$key_id" ] || { echo other_key; return 1; }
  signed_mac=$(printf '%s' "$data" | sed -n "1s/^$prefix.*/\2/p")
  want=$({ printf 'dumbwaiter-%s-v1\n%s\n{' "$1" "$key_id"; printf '%s' "$data" | sed "1s/^$prefix//"; } |
    openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" | sed 's/^.*= *//')
  [ "$want" = "$signed_mac" ] || { echo bad_mac; return 1; }
  printf '{'; printf '%s' "$data" | sed "1s/^$prefix//"
}

if [ "${1:-}" = --verify ]; then
  [ $# -eq 4 ] || { echo "usage: $0 --verify KEY_FILE result|inbox FILE" >&2; exit 2; }
  key_file=$2
  load_key
  verify "$3" "$4"
  exit
fi

[ $# -ge 3 ] || { echo "usage: $0 KEY_FILE SPOOL OP [ARGS_JSON] [ID]" >&2; exit 2; }
key_file=$1 spool=$2 op=$3 args=${4:-'{}'} id=${5:-"sh-$(date +%s)-$$"}
load_key

payload=$(printf '{"id":"%s","op":"%s","args":%s,"created_at":"%s"}' "$id" "$op" "$args" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")
mac=$(printf 'dumbwaiter-request-v1\n%s\n%s' "$key_id" "$payload" |
  openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" | sed 's/^.*= *//')
escaped=$(printf '%s' "$payload" | sed 's/\\/\\\\/g; s/"/\\"/g')

# What is read from the spool is copied here first: nobody else can write into it, or plant a link.
priv=$(mktemp -d)
trap 'rm -rf "$priv"' EXIT
copy="$priv/read"
if command -v timeout >/dev/null 2>&1; then bounded() { timeout 5 "$@"; }; else bounded() { "$@"; }; fi
big=''
# look FILE CAP: copies a regular file (never a link, FIFO or folder) of at most CAP bytes to $copy, so it
# is verified as one version; a huge (sparse) one is cut at CAP + 1 bytes and ignored.
look() {
  [ -f "$1" ] && [ ! -h "$1" ] && bounded head -c $(($2 + 1)) "$1" > "$copy" 2>/dev/null || return 1
  [ "$(wc -c < "$copy")" -le "$2" ] && return 0
  case "$big" in *"|$1|"*) ;; *) big="$big|$1|"; echo "ignored ${1#"$spool"/}: it is larger than $2 bytes" >&2 ;; esac
  return 1
}
pending() { [ -e "$spool/queue/$id.json" ]; }
conflict() {
  for m in "$spool"/inbox/*.json; do
    look "$m" 8388608 && doc=$(verify inbox "$copy") && printf '%s' "$doc" | grep -q '"kind": *"conflict"' &&
      printf '%s' "$doc" | grep -Fq "\"ref\": \"$id\"" &&
      { printf '%s\n' "$doc" | sed -n 's/^ *"text": *"\(.*\)",*$/\1/p' >&2; return 0; }
  done
  return 1
}

result="$spool/results/$id.json"
# A signed result there before the request answers an earlier one with this id: believed only after
# 2 s without the host's conflict message (a replay of the same request is answered by it).
old=''
if look "$result" 67108864 && verify result "$copy" >/dev/null; then old=$(openssl dgst -sha256 < "$copy"); fi

# Atomic write: a new, unguessable name in tmp/ (created by set -C, never through a planted link), then
# a rename into queue/.
tmp="$spool/tmp/$id.$(openssl rand -hex 16).tmp"
(set -C; printf '{"v":1,"key_id":"%s","payload":"%s","mac":"%s"}\n' "$key_id" "$escaped" "$mac" > "$tmp")
mv "$tmp" "$spool/queue/$id.json"
echo "submitted $id" >&2

said='' down='' seen=0 i=0
while [ $i -lt 600 ]; do
  if [ -z "$down" ] && look "$spool/host.json" 8388608 && grep -q '"up": *false' "$copy"; then
    down=1
    echo "the host is not running (host.json says up: false); $id waits in queue/ until it is back" >&2
  fi
  if ! pending; then
    if conflict; then exit 87; fi
    if look "$result" 67108864; then
      if doc=$(verify result "$copy"); then
        # Seen final on two looks in a row (ten if it was there before): time for the host's conflict
        # message, had there been one.
        if printf '%s' "$doc" | grep -F "\"id\": \"$id\"" >/dev/null &&
          printf '%s' "$doc" | grep -Eq '"state": *"(succeeded|failed|rejected|denied|expired|cancelled|uncertain)"'; then
          seen=$((seen + 1))
          need=2
          [ "$(openssl dgst -sha256 < "$copy")" = "$old" ] && need=10
          if [ $seen -ge $need ]; then
            printf '%s\n' "$doc"
            printf '%s' "$doc" | grep -q '"state": *"succeeded"' && exit 0 || exit 1
          fi
        fi
      elif [ "$said" != "$(openssl dgst -sha256 < "$copy")" ]; then
        said=$(openssl dgst -sha256 < "$copy")
        echo "ignored results/$id.json: the host did not sign it for this key ($doc)" >&2
      fi
    fi
  fi
  sleep 0.2
  i=$((i + 1))
done
echo "no final result for $id after 120 s (is the host running? see $spool/host.json)" >&2
exit 3
