"""Schemathesis against the app's own OpenAPI schema: bounded random requests
(hypothesis, derandomised) to every operation, with a valid token, over a built
workspace. No request may end in a server error (5xx) or in a body that breaks
the schema's response models. The counts per operation and status are printed
and written to test-artifacts/schemathesis.json.

(Schemathesis' own pytest plugin does not run under pytest 9, so the operations
are walked here with the strategies schemathesis makes from the schema.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from medkg.layout import WorkspaceLayout
from medkg.server.access import add_token
from medkg.server.app import create_app
from medkg.workspace import Workspace
from tests.conftest import REPO, copy_workspace

pytestmark = pytest.mark.slow
ARTIFACTS = REPO / "test-artifacts"
MAX_EXAMPLES = 12
SLOW = {"POST /api/build": 2, "POST /api/ask": 6}  # fewer examples where each is seconds


def test_no_request_ends_in_a_server_error(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "schemathesis")
    headers = {"Authorization": f"Bearer {token}"}
    counts: Counter[tuple[str, int]] = Counter()
    failures: list[str] = []
    with Workspace.open(root) as ws:
        schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(ws))
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 15
        for op in operations:
            name = f"{op.method.upper()} {op.path}"
            try:
                _fuzz(op, name, headers, counts)
            except Exception as exc:  # collect every operation's failure, then fail once
                failures.append(f"{name}: {str(exc)[:800]}")
    ARTIFACTS.mkdir(exist_ok=True)
    rows = [{"operation": op, "status": status, "requests": n}
            for (op, status), n in sorted(counts.items())]
    (ARTIFACTS / "schemathesis.json").write_text(json.dumps(rows, indent=2) + "\n")
    by_class: Counter[str] = Counter()
    for (_op, status), n in counts.items():
        by_class[f"{status // 100}xx"] += n
    print(f"\nschemathesis: {sum(counts.values())} requests over {len(operations)} operations; "
          + ", ".join(f"{k} {v}" for k, v in sorted(by_class.items())))
    assert not failures, "\n".join(failures)
    assert by_class["5xx"] == 0


def _fuzz(op: schemathesis.APIOperation, name: str, headers: dict[str, str],
          counts: Counter[tuple[str, int]]) -> None:
    @given(case=op.as_strategy())
    @settings(max_examples=SLOW.get(name, MAX_EXAMPLES), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    def run(case: schemathesis.Case) -> None:
        response = case.call(headers=headers)
        counts[(name, response.status_code)] += 1
        case.validate_response(response, checks=[not_a_server_error,
                                                 response_schema_conformance])

    run()
