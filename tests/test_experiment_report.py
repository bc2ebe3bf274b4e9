"""The reports of `ibnetsim reproduce` and `ibnetsim report`: what they say and how they print it.

Each test is a regression test for a defect readers reported (issue 16):
notes, reference and command missing from report.html, raw numbers, overlapping
figure labels, no paper values on the figures.
"""

import re

from ibnetsim.experiment import registry
from ibnetsim.experiment.numfmt import exact, number, percent, significant_digits


# --------------------------------------------------------------------------- numbers
def test_numbers_print_with_significant_digits_and_separators():
    assert number(57.14285714) == "57.14"
    assert number(5.000250013e-05) == "5e-05"
    assert number(None) == number(float("nan")) == "—"
    assert number(256.0) == "256" and number(12000.0) == "12,000" and number(12000) == "12,000"
    assert number(12345.678) == "12,346"  # past the digits asked for: whole, never 1.235e+04
    assert number(999.96) == "1,000"
    assert number(-0.1722, 3, signed=True) == "-0.172" and number(0.0023, 3, signed=True) == "+0.0023"
    assert number(0.0, signed=True) == "0"
    assert exact(3.342336) == "3.342336" and exact(256.0) == "256" and exact(16320.0) == "16,320"
    assert percent(-0.4) == "-40 %" and percent(0.003) == "+0.3 %" and percent(0.18812) == "+18.8 %"
    assert percent(0.0) == "0 %" and percent(None) == "—"
    assert [significant_digits(x) for x in (0.769, 12000.0, 3.342336, 57.14, 1.0, 0.0)] == [3, 2, 7, 4, 1, 1]


# --------------------------------------------------------------------------- entries
def test_entry_notes_speak_to_the_reader():
    for e in registry.entries():
        assert not re.search(r"\b(issue|the team|asks for it)\b", e.notes, re.IGNORECASE), e.id

