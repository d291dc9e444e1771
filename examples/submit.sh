#!/bin/sh
# Submits one request to a Dumbwaiter spool and waits for its result, with nothing but sh and openssl.
# A minimal sandbox-side client, to try the host by hand; see docs/PROTOCOL.md for the format.
#
#   usage: submit.sh KEY_FILE SPOOL OP [ARGS_JSON] [ID]
#   e.g.   submit.sh ~/my-sandbox.key.json ~/Dumbwaiter/spool echo '{"msg":"hello"}'
set -eu
[ $# -ge 3 ] || { echo "usage: $0 KEY_FILE SPOOL OP [ARGS_JSON] [ID]" >&2; exit 2; }
key_file=$1 spool=$2 op=$3 args=${4:-'{}'} id=${5:-"sh-$(date +%s)-$$"}

field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$key_file" | head -n 1; }
key_id=$(field key_id)
secret=$(field secret)
[ -n "$key_id" ] && [ -n "$secret" ] || { echo "$key_file is not a Dumbwaiter key file" >&2; exit 2; }
# The secret is base64url without padding (43 characters for 32 bytes): make it hex for openssl.
hexkey=$(printf '%s=' "$secret" | tr '_-' '/+' | base64 -d | od -An -vtx1 | tr -d ' \n')

payload=$(printf '{"id":"%s","op":"%s","args":%s,"created_at":"%s"}' "$id" "$op" "$args" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")
mac=$(printf 'dumbwaiter-request-v1\n%s\n%s' "$key_id" "$payload" |
  openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" | sed 's/^.*= *//')
escaped=$(printf '%s' "$payload" | sed 's/\\/\\\\/g; s/"/\\"/g')

# Atomic write: a unique name in tmp/, then a rename into queue/.
tmp="$spool/tmp/$id.$$"
printf '{"v":1,"key_id":"%s","payload":"%s","mac":"%s"}\n' "$key_id" "$escaped" "$mac" > "$tmp"
mv "$tmp" "$spool/queue/$id.json"
echo "submitted $id" >&2

result="$spool/results/$id.json"
i=0
while [ $i -lt 600 ]; do
  if [ -f "$result" ] && grep -Eq '"state": *"(succeeded|failed|rejected|denied|expired|cancelled|uncertain)"' "$result"; then
    cat "$result"
    grep -q '"state": *"succeeded"' "$result" && exit 0 || exit 1
  fi
  sleep 0.2
  i=$((i + 1))
done
echo "no final result for $id after 120 s (is the host running? see $spool/host.json)" >&2
exit 3
