"""The split of the catalog's cross-products between the README's command and CI (``tests/tiers.py``), and
the one-worker groups of the session fixtures (``tests/conftest.py``)."""
from __future__ import annotations

import os

import pytest

from tiers import by_kind, ids_by_kind, layout_kind
from verify import api

from conftest import SHARED_GROUP, SPECS


def _marks(param) -> list[str]:
    return [m.name for m in param.marks]


def test_the_first_case_of_each_kind_stays_and_the_rest_is_marked_slow() -> None:
    params = by_kind([1, 2, 3, 4, 6], kind=lambda n: n % 2, ids=lambda n: f"n{n}")
    assert [p.values for p in params] == [(1,), (2,), (3,), (4,), (6,)]  # every case, in order
    assert [p.id for p in params] == ["n1", "n2", "n3", "n4", "n6"]
    assert [_marks(p) for p in params] == [[], [], ["slow", "kind_rest"], ["slow", "kind_rest"], ["slow", "kind_rest"]]


def test_each_kind_of_the_catalog_runs_in_the_readmes_command() -> None:
    specs = api.load([SPECS])
    lays = api.layouts(specs) + api.map_layouts(specs)
    params = ids_by_kind(lays)
    fast = [p.values[0] for p in params if not p.marks]
    assert len(params) == len(lays) and len(set(p.values[0] for p in params)) == len(lays)
    assert {layout_kind(api.layout(specs, lid)) for lid in fast} == {layout_kind(lay) for lay in lays}
    assert len(fast) == len({layout_kind(lay) for lay in lays}) < len(lays)


def test_a_session_fixture_group_runs_in_one_worker(request: pytest.FixtureRequest, catalog_report) -> None:
    """Under xdist with --dist loadgroup (the README's command), a test that reads ``catalog_report`` is in the
    group of the session fixtures' readers, so the catalog is checked in one worker only.  pytest 9.2 with xdist 3.8 lost the
    groups silently (pytest-dev/pytest-xdist#1386): this fails there."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and getattr(request.config.option, "loadgroup", False)):
        pytest.skip("not run by xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@" + SHARED_GROUP), request.node.nodeid
