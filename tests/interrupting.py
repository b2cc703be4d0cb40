"""Ctrl-C at a command: how its end looks, and twice while LLM requests are in flight."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

#: How a command that Ctrl-C ended looks to ``subprocess``: exit 130, or killed by SIGINT
#: (-2). When a Ctrl-C lands while the model's libraries load, Python may take it for
#: unhandled although the command handled it, and at exit it ends itself with SIGINT
#: (``rt_sigaction(SIGINT, SIG_DFL)`` then ``kill(self, SIGINT)`` under strace), whatever
#: the exit status was. A shell shows both as ``$? = 130``.
INTERRUPTED = (130, -signal.SIGINT)


def interrupt_twice(cmd: Sequence[str], server, cwd: Path, env: dict[str, str]) -> str:
    """Start ``cmd``; once ``server`` has a request, send SIGINT, wait for the command's
    "interrupted;" line, then send a second SIGINT while Python waits for the threads
    still sending. Asserts exit 130 and returns what it printed on stderr."""
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.time() + 120
    while time.time() < deadline and not server.requests and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    while time.time() < deadline and not any("interrupted;" in ln for ln in err):
        time.sleep(0.05)
    time.sleep(0.5)  # in Python's wait for the threads still sending
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) in INTERRUPTED
    reader.join(timeout=10)
    return "".join(err)
