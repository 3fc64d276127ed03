"""``benchmarks/api_bench.py``'s report of a row, without a server: what a
run measured must print, errors and all (its table was where a run alone,
without ``side_by_side.py``'s CPU column, failed after every row had run)."""
from __future__ import annotations

import sys

from tests.conftest import ROOT

sys.path.append(str(ROOT / "benchmarks"))
import api_bench  # noqa: E402


def test_a_row_with_errors_keeps_its_samples_apart_from_the_cpu_column() -> None:
    responses = [api_bench.Response(201, b"{}", 0.002),
                 api_bench.Response(409, b"{}", 0.003, "Conflict")]
    row = api_bench.summarize("network-create", 1, responses, 0.005)
    assert row.errors == 1
    assert row.error_samples == ["409: Conflict"]
    assert row.server_cpu_ms is None
    table = api_bench.text_table([row])
    assert "network-create" in table.splitlines()[2]
