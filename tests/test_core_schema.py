"""Issue 11: the scenario's choices and its [switch]/[hca] keys come from the
Rust core's declarations (registries and the JSON schema of its config
structs), not from copies kept in Python."""

from ibnetsim import _core
from ibnetsim.experiment import kinds
from ibnetsim.experiment.schema import section
from ibnetsim.traffic import PATTERNS

# The sections are registered by the point kinds that read them.
kinds.names()


def test_switch_and_hca_keys_are_the_core_structs_fields_in_order():
    assert [k.name for k in section("switch").keys] == [
        "routing_delay_ns",
        "arbitration_delay_ns",
        "crossbar",
        "speedup",
        "input_buffer_bytes",
        "input_partition_bytes",
        "output_buffer_bytes",
        "vl15_buffer_bytes",
        "input_buffer",
        "max_transfers_per_input",
        "crossbar_arbiter",
        "credit_update_ns",
        "credit_packet_bytes",
    ]
    assert [k.name for k in section("hca").keys] == ["send_buffer_bytes", "receive_buffer_bytes", "sl_priority", "source_queue_packets", "credit_update_ns", "credit_packet_bytes"]


def test_a_core_key_carries_its_type_range_choices_and_doc_comment():
    keys = {k.name: k for k in section("switch").keys}
    buf = keys["input_buffer_bytes"]
    assert (buf.type, buf.bounds(), buf.default) == ("int", (0, 2**32 - 1), None)
    assert buf.doc == "Input buffer per (port, data VL), in bytes (whole 64-byte credits count)."
    assert keys["crossbar"].allowed() == ["multiplexed", "per-vl"]
    assert keys["crossbar"].doc.startswith("Multiplexed or per-VL crossbar ports. `multiplexed`: One crossbar input per physical input port")
    # A time in ns is bounded by the core's picosecond clock (u64 / 4).
    assert keys["routing_delay_ns"].bounds() == (0.0, (2**64 - 1) // 4 / 1000)
    parts = keys["input_partition_bytes"]
    assert (parts.type, parts.default) == ("list[int]", [])
    assert {k.name: k for k in section("hca").keys}["sl_priority"].bounds() == (0, 255)


def test_choices_are_the_core_registries():
    reg = _core.sim_registries()
    sim = {k.name: k for k in section("simulation").keys}
    assert sim["preset"].allowed() == ["kim2007", "alfaro2001", "martinez2003", "martinez2005", "ib_flit_sim"] == reg["presets"]
    assert sim["selection"].allowed() == ["deterministic", "adaptive-by-credits", "lfu", "fully-adaptive"] == reg["selections"]
    assert sim["mtu_bytes"].allowed() == [256, 512, 1024, 2048, 4096]
    traffic = {k.name: k for k in section("traffic").keys}
    assert traffic["process"].allowed() == ["poisson", "bernoulli"]
    assert traffic["path_bits"].allowed() == ["base", "random"] == reg["path_bits"]
    fabric = section("fabric").keys_for("mesh")
    assert fabric["link_width"].allowed() == ["1x", "2x", "4x", "8x", "12x"]
    assert fabric["link_speed"].allowed() == ["SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"]
    assert (fabric["link_width"].allowed(), fabric["link_speed"].allowed()) == tuple(_core.link_choices())
    assert reg["patterns"] == [*PATTERNS, "multicast"]
    # The key lists the core's patterns; a scenario refuses multicast, whose group it cannot declare (test_run).
    assert traffic["pattern"].allowed() == reg["patterns"]
    assert reg["max_time_ps"] == (2**64 - 1) // 4
