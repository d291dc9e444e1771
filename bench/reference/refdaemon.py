#!/usr/bin/env python3
"""The benchmark's reference implementation: a queue-folder daemon as the docs of such tools describe
the pattern. A benchmark peer, not part of Dumbwaiter. Standard library only.

It polls queue/ every --poll-ms while it is empty; it takes the files it finds in name order, one at a
time: claims each by a rename into work/, checks the plain shared token the request carries, runs the
command its op names (from --commands) through subprocess without a shell, and writes
results/<id>.json by a rename after one fsync of the file. Nothing else is durable, nothing is logged.
"""
import argparse
import hmac
import json
import os
import stat
import subprocess
import sys
import time


def read_regular(path):
    """The file's text, or None if it is not a regular file (never blocks on a FIFO, follows no link)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, 'rb', closefd=False) as f:
            return f.read(1 << 20).decode('utf-8')
    finally:
        os.close(fd)


def write_result(results, rid, doc):
    tmp = os.path.join(results, f'.{rid}.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(doc, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(results, f'{rid}.json'))


def handle(root, name, token, commands):
    mine = os.path.join(root, 'work', name)
    try:
        os.rename(os.path.join(root, 'queue', name), mine)
    except FileNotFoundError:
        return
    rid = name[:-len('.json')]
    doc = {'id': rid, 'state': 'rejected', 'exit_code': None, 'duration_ms': None, 'error': None}
    try:
        text = read_regular(mine)
        req = json.loads(text) if text is not None else None
        argv = commands.get(req.get('op')) if isinstance(req, dict) else None
        if not isinstance(req, dict) or not hmac.compare_digest(str(req.get('token', '')), token):
            doc['error'] = {'code': 'bad_token', 'message': 'no valid token'}
        elif argv is None:
            doc['error'] = {'code': 'unknown_op', 'message': 'no such operation'}
        else:
            t0 = time.monotonic()
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
            doc.update(state='succeeded' if p.returncode == 0 else 'failed', exit_code=p.returncode,
                       duration_ms=(time.monotonic() - t0) * 1000,
                       stdout=p.stdout.decode('utf-8', 'replace'), stderr=p.stderr.decode('utf-8', 'replace'))
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        doc['error'] = {'code': 'error', 'message': str(e)}
    write_result(os.path.join(root, 'results'), rid, doc)
    os.unlink(mine)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', required=True, help='holds queue/, work/ and results/')
    ap.add_argument('--token-file', required=True)
    ap.add_argument('--commands', required=True, help='a JSON file: {"op": ["/program", "arg", ...]}')
    ap.add_argument('--poll-ms', type=float, default=500)
    a = ap.parse_args()
    with open(a.token_file) as f:
        token = f.read().strip()
    with open(a.commands) as f:
        commands = json.load(f)
    queue = os.path.join(a.root, 'queue')
    print('reference running', flush=True)
    while True:
        names = sorted(n for n in os.listdir(queue) if n.endswith('.json'))
        if not names:
            time.sleep(a.poll_ms / 1000)
        for name in names:
            handle(a.root, name, token, commands)


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
