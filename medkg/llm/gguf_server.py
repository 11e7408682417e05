"""The local model's own process: llama-cpp-python's OpenAI-compatible server for
one GGUF file, on loopback.

:class:`medkg.llm.gguf_backend.GGUFBackend` starts this module as a child
process (``python -m medkg.llm.gguf_server``) on a listening socket it bound
itself and passes down (``--fd``), so no port can be taken in between. A native
crash in llama.cpp then ends this process, not the build that uses it.

llama.cpp repacks weights into "extra buffer types" (AMX tiles, repacked
AVX2/NEON layouts) at load by default; its AMX kernels crash on some Intel CPUs
with AMX. medkg turns that off unless ``--extra-buffer-types`` is given
(``llm.extra_buffer_types``). llama-cpp-python's ``Llama`` has no argument for
it, so the default model parameters are adjusted in this process only.

It can also be run by hand, as a server for any OpenAI-compatible client::

    python -m medkg.llm.gguf_server --model model.gguf --port 8080
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any


def disable_extra_buffer_types(lib: Any) -> bool:
    """Make every model this process loads skip llama.cpp's extra buffer types
    (no weight repacking). ``lib`` is ``llama_cpp.llama_cpp``; False when its
    llama.cpp is too old to have the setting (then it never repacks for AMX)."""
    fields = {name for name, *_ in lib.llama_model_params._fields_}
    if "use_extra_bufts" not in fields:
        return False
    original = lib.llama_model_default_params

    def default_params() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = default_params
    return True


def _exit_with_parent(parent_pid: int) -> None:
    """End this process when the one that started it is gone (killed with -9 too)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m medkg.llm.gguf_server",
                                     description="llama-cpp-python's OpenAI-compatible "
                                     "server for one GGUF file")
    parser.add_argument("--model", required=True, help="the .gguf file")
    parser.add_argument("--alias", default="", help="model name clients ask for")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=0, help="0: llama.cpp's default")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--extra-buffer-types", action="store_true",
                        help="let llama.cpp repack weights (AMX and other extra buffer types)")
    parser.add_argument("--verbose", action="store_true", help="llama.cpp's log on stderr")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--fd", type=int, default=-1,
                        help="serve on this already listening socket instead of host:port")
    parser.add_argument("--parent-pid", type=int, default=0,
                        help="exit when this process is gone")
    args = parser.parse_args(argv)
    if args.parent_pid:
        _exit_with_parent(args.parent_pid)

    import llama_cpp.llama_cpp as lib
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    if not args.extra_buffer_types and not disable_extra_buffer_types(lib):
        print("medkg: this llama.cpp has no use_extra_bufts setting; weights load as it "
              "decides", file=sys.stderr)
    model: dict[str, Any] = {"model": args.model, "model_alias": args.alias or None,
                             "n_ctx": args.n_ctx, "seed": args.seed, "verbose": args.verbose}
    if args.n_threads:
        model["n_threads"] = args.n_threads
    try:
        app = create_app(server_settings=ServerSettings(host=args.host, port=args.port),
                         model_settings=[ModelSettings(**model)])
    except (ValueError, RuntimeError, OSError) as exc:  # llama.cpp could not load it
        print(f"cannot load {args.model}: {exc}", file=sys.stderr)
        return 1
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                            access_log=False)
    server = uvicorn.Server(config)
    if args.fd >= 0:
        server.run(sockets=[socket.socket(fileno=args.fd)])
    else:
        server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
