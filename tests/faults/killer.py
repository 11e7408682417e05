"""Run a medkg command and kill it with SIGKILL at a chosen point.

``python -m tests.faults.killer N -- ARGS...`` runs ``medkg ARGS...`` in this
process and sends itself SIGKILL when the N-th call into medkg's own code
begins (counted by a profile hook; nothing in medkg knows about it). ``N = 0``
runs to the end and prints the number of calls to stderr as ``calls: C``, so a
test can spread its kill points over the whole command.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGE = str(Path(__file__).resolve().parents[2] / "medkg") + os.sep


def main() -> None:
    kill_at = int(sys.argv[1])
    args = sys.argv[sys.argv.index("--") + 1:]
    count = 0

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_filename.startswith(PACKAGE):
            count += 1
            if count == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    from medkg.cli import app

    sys.setprofile(hook)
    threading.setprofile(hook)
    code = 0
    try:
        app(args, prog_name="medkg", standalone_mode=False)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.setprofile(None)
        print(f"calls: {count}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
