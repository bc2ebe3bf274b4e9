"""The reports of `ibnetsim reproduce` and `ibnetsim report`: what they say and how they print it.

Each test is a regression test for a defect readers reported (issue 16):
notes, reference and command missing from report.html, raw numbers, overlapping
figure labels, no paper values on the figures.
"""

import re

from ibnetsim.experiment import registry


# --------------------------------------------------------------------------- entries
def test_entry_notes_speak_to_the_reader():
    for e in registry.entries():
        assert not re.search(r"\b(issue|the team|asks for it)\b", e.notes, re.IGNORECASE), e.id

