# For the floor host (floorHost.mjs, `python`): a spawner that is not a Node process. Python's
# subprocess starts a child with vfork (CLONE_VM: no page tables copied), where Node's libuv forks;
# otherwise it does what floorHost.mjs's Node spawner does: one JSON line in per run, the run with its
# output piped, one JSON line out when it has ended. Standard library only.
import json
import subprocess
import sys
import time

for line in sys.stdin:
    m = json.loads(line)
    started = time.time()
    p = subprocess.run(m["argv"], stdin=subprocess.DEVNULL, capture_output=True, start_new_session=True)
    sys.stdout.write(json.dumps({"id": m["id"], "code": p.returncode, "output": (p.stdout + p.stderr).decode(), "duration_ms": round((time.time() - started) * 1000)}) + "\n")
    sys.stdout.flush()
