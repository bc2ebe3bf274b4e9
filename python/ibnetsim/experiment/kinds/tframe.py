"""Point kind ``tframe``: the time to send one full VL arbitration frame.

Paper 001 (Alfaro, Sánchez, Duato 2001, §4) sizes the arbitration tables
against a *frame*: every one of the 64 entries of a table at its maximum weight
of 255, each weight unit being 64 bytes (IBA vol. 1, §7.6.9), so a frame is
64 × 255 = 16320 slots of 64 B. ``T_frame`` is the time the link takes to send
it: 16320 × 64 × 8 bits divided by the link rate. Table 1 of the paper lists it
for 1x, 4x and 12x links at the 2.5 Gb/s-per-lane *signalling* rate; the
data rate after 8b/10b encoding (2 Gb/s per SDR lane) gives 25 % longer
frames, and both bases are offered (``rate_basis``) because SPEC.md asks every
figure to say which one it uses.

The arithmetic is exact (fractions); no simulation runs. The lane rates are
those of the Rust core's ``LinkSpeed::kbaud`` and ``Encoding::ratio``
(crates/fabric/src/rate.rs); a test checks the two agree.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ibnetsim.experiment.kinds import Figure, PointKind, register

__all__ = ["LANE_KBAUD", "ENCODING", "link_rate_bps", "t_frame"]

#: Per-lane signalling rate in kbaud (IBA vol. 2, and the InfiniBand roadmap for FDR on).
LANE_KBAUD = {
    "SDR": 2_500_000,
    "DDR": 5_000_000,
    "QDR": 10_000_000,
    "FDR10": 10_312_500,
    "FDR": 14_062_500,
    "EDR": 25_781_250,
    "HDR": 53_125_000,
    "NDR": 106_250_000,
}

#: Line encoding (data bits, line bits): 8b/10b up to QDR, 64b/66b from FDR10 on.
ENCODING = {s: ((8, 10) if s in ("SDR", "DDR", "QDR") else (64, 66)) for s in LANE_KBAUD}


def link_rate_bps(width: str, speed: str, basis: str = "signalling") -> Fraction:
    """Link rate in bit/s: lanes × baud, times the encoding efficiency for ``basis="data"``."""
    lanes = int(width.lower().rstrip("x"))
    rate = Fraction(lanes * LANE_KBAUD[speed] * 1000)
    if basis == "data":
        num, den = ENCODING[speed]
        rate *= Fraction(num, den)
    elif basis != "signalling":
        raise ValueError(f"rate_basis must be 'signalling' or 'data', not {basis!r}")
    return rate


def t_frame(width: str, speed: str, basis: str = "signalling", entries: int = 64, max_weight: int = 255, unit_bytes: int = 64) -> Fraction:
    """T_frame in seconds, exactly."""
    bits = entries * max_weight * unit_bytes * 8
    return Fraction(bits) / link_rate_bps(width, speed, basis)


def _run(config: dict) -> dict:
    c = config["tframe"]
    t = t_frame(c["link_width"], c["link_speed"], c["rate_basis"], c["entries"], c["max_weight"], c["unit_bytes"])
    rate = link_rate_bps(c["link_width"], c["link_speed"], c["rate_basis"])
    ps = t * 10**12
    return {
        "slots": c["entries"] * c["max_weight"],
        "frame_bytes": c["entries"] * c["max_weight"] * c["unit_bytes"],
        "link_rate_gbps": float(rate / 10**9),
        "t_frame_ms": float(t * 1000),
        "t_frame_ps": math.ceil(ps),
        "t_frame_exact": ps.denominator == 1,
    }


KIND = register(
    PointKind(
        name="tframe",
        summary="Time to send one full VL arbitration frame (paper 001 §4, Table 1). Exact arithmetic, no simulation.",
        run=_run,
        sections=("tframe",),
        columns={
            "slots": "Slots per frame: entries × max_weight (16320 for IBA tables).",
            "frame_bytes": "Bytes per frame: slots × unit_bytes.",
            "link_rate_gbps": "The link rate divided by, in Gb/s (signalling or data, per `rate_basis`).",
            "t_frame_ms": "T_frame in milliseconds.",
            "t_frame_ps": "T_frame in picoseconds, rounded up.",
            "t_frame_exact": "True when T_frame is a whole number of picoseconds.",
        },
        figures=(Figure("t_frame", x="tframe.link_width", y="t_frame_ms", title="Time to send a full arbitration frame", ylabel="T_frame (ms)", xlabel="link width"),),
    )
)
