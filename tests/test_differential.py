"""The data plane's differential test: the reference scenarios give exactly the
numbers they gave before the data-plane restructuring (issue 10).

``tests/data/differential/reference.json`` was written once by
``scripts/differential.py`` from commit 392a6d0, the last commit before the
restructuring. Every value must match exactly, floats included: the same seed
must give the same packet history, not merely similar statistics. Results
added since (new keys) are not compared.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = json.loads((ROOT / "tests" / "data" / "differential" / "reference.json").read_text())

_spec = importlib.util.spec_from_file_location("differential", ROOT / "scripts" / "differential.py")
differential = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(differential)
SCENARIOS = dict(differential.scenarios())


# How many events of each kind the engine handled is how the simulator did
# its work, not what it simulated: issue 14's steps cut events by design
# (the same packets, the same times). `tests/it/event_counts.rs` works the
# counts out by hand instead.
NOT_RESULTS = {"events_by_kind"}


def _diff(a, b, path=""):
    """The first path where the new value ``a`` differs from the reference ``b``, or None.

    Keys the reference lacks are new results (a feature added since) and are
    not compared; every key the reference has must be there, equal.
    """
    if path.endswith(".drops") and isinstance(a, list) and isinstance(b, list):
        # (reason, count) pairs: a drop reason added since is a new result.
        a, b = dict(map(tuple, a)), dict(map(tuple, b))
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(b):
            if k in NOT_RESULTS:
                continue
            if k not in a:
                return f"{path}.{k}: missing from the new results"
            d = _diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} != reference {b!r}"


def test_every_reference_scenario_is_run():
    assert sorted(SCENARIOS) == sorted(REFERENCE)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_same_seed_same_numbers(name):
    got = json.loads(json.dumps(differential.record(SCENARIOS[name]())))
    want = REFERENCE[name]
    assert want["results"]["delivered"] > 0
    d = _diff(got, want)
    assert d is None, f"{name}{d}"
