"""Payload size distributions and trace replay through the Python API."""

from pathlib import Path

import pytest

import ibnetsim as ib

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "traces" / "three.trace"

# One switch, two hosts, 1x SDR (4 ns/B), 1 m cables (5 ns), 100 ns routing:
# a packet of w wire bytes crosses an idle fabric in 5 + 80 + 100 + 5 + 4·w ns.


def zero_load_ns(wire: int) -> float:
    return 190.0 + 4.0 * wire


@pytest.fixture(scope="module")
def pair():
    fab = ib.topology.single_switch(2)
    return fab, ib.SubnetManager(fab, routing="minhop")


def test_trace_dict_shape(tmp_path):
    f = tmp_path / "io.trace"
    assert ib.traffic.trace(f) == {"name": "io", "file": str(f), "time_scale": 1.0}
    t = ib.traffic.trace(str(f), time_scale=0.5, name="disk")
    assert (t["name"], t["time_scale"]) == ("disk", 0.5)
    assert ib.traffic.is_trace(t) and not ib.traffic.is_trace(ib.traffic.uniform(0.1))


def test_hand_worked_trace_round_trip(pair):
    fab, sm = pair
    # The example of docs/formats.md: 256 B at 0, 32 B the other way at
    # 100 ns on SL 1, then 600 B at 5 µs, split at MTU 256 into 256 + 256 +
    # 88 B sent back to back.
    f = EXAMPLE
    r = ib.simulate(fab, sm, traffic=[ib.traffic.trace(f)], time_us=20, seed=1, mtu_bytes=256)
    s = r.summary.set_index("name").loc["three"]
    assert (s["generated_packets"], s["delivered_packets"]) == (5, 5)
    # Latencies: 256 B (282 wire) 1318 ns; 32 B (58) 422 ns; the split message
    # from 5 µs: 1318, 1128 + 1318 = 2446, and the 114 B tail 2902 ns (its
    # header is routed just as the second packet's last byte leaves).
    lat = [1318.0, 422.0, 1318.0, 2446.0, 2902.0]
    assert zero_load_ns(282) == 1318.0 and zero_load_ns(58) == 422.0
    assert s["latency_min_ns"] == 422.0 and s["latency_max_ns"] == 2902.0
    assert s["latency_mean_ns"] == pytest.approx(sum(lat) / 5, abs=1e-9)
    per_sl = r.per_sl.set_index("sl")
    assert per_sl.loc[1, "delivered_packets"] == 1 and per_sl.loc[1, "latency_max_ns"] == 422.0
    assert per_sl.loc[0, "delivered_packets"] == 4
    raw = r.raw["classes"][0]
    assert raw["generated_bytes"] == 282 + 58 + 282 + 282 + 114
    assert r.raw["generated"] == r.raw["delivered"] == 5


def test_trace_mixes_with_open_loop_classes(pair, tmp_path):
    fab, sm = pair
    f = tmp_path / "burst.trace"
    f.write_text("".join(f"{i * 1000} h{i % 2} h{1 - i % 2} 700 2\n" for i in range(50)))
    r = ib.simulate(
        fab, sm, traffic=[ib.traffic.trace(f, time_scale=2.0, name="burst"), ib.traffic.uniform(0.1)],
        time_us=400, seed=3, mtu_bytes=256, data_vls=2,
    )
    assert list(r.summary["name"]) == ["uniform", "burst"]
    burst = r.raw["classes"][1]
    assert burst["generated_packets"] == burst["delivered_packets"] == 50 * 3
    assert r.raw["generated"] == r.raw["delivered"] + r.raw["dropped"] + r.raw["in_flight"]
    assert set(r.per_sl["sl"]) == {0, 2}
    assert set(r.latency_hist["class"]) == {"uniform", "burst"}


@pytest.mark.parametrize(
    "text, where",
    [
        ("0 h0 h1 256\n", ":1: expected 5 fields"),
        ("0 h0 h1 256 0\n0 h0 h7 256 0\n", ":2: host 'h7'"),
        ("5 h0 h1 256 0\n4 h0 h1 256 0\n", ":2: time 4 ns is earlier than 5 ns on line 1"),
        ("-1 h0 h1 256 0\n", ":1: time -1 ns"),
        ("0 h0 h1 0 0\n", ":1: bytes must be"),
        ("0 h0 h1 256 16\n", ":1: SL 16"),
        ("0 h1 h1 256 0\n", ":1: source 'h1' and destination 'h1' are the same host"),
    ],
)
def test_trace_errors_name_file_and_line(pair, tmp_path, text, where):
    fab, sm = pair
    f = tmp_path / "bad.trace"
    f.write_text(text)
    with pytest.raises(ib.ConfigError) as e:
        ib.simulate(fab, sm, traffic=ib.traffic.trace(f), time_us=1)
    assert f"{f}{where}" in str(e.value)


def test_missing_trace_and_bad_scale_name_the_key(pair, tmp_path):
    fab, sm = pair
    with pytest.raises(ib.ConfigError, match=r"traffic.traces\[0\].file.*cannot read"):
        ib.simulate(fab, sm, traffic=ib.traffic.trace(tmp_path / "none.trace"), time_us=1)
    f = tmp_path / "ok.trace"
    f.write_text("0 h0 h1 1 0\n")
    with pytest.raises(ib.ConfigError, match=r"traffic.traces\[0\].time_scale"):
        ib.simulate(fab, sm, traffic=ib.traffic.trace(f, time_scale=0), time_us=1)


def test_size_mix_zero_load_latencies_and_offered_load(pair):
    fab, sm = pair
    mix = ib.traffic.empirical_sizes({32: 1, 256: 1})
    assert mix == {"payload_sizes": [32, 256], "payload_size_weights": [1.0, 1.0]}
    cls = ib.traffic.fixed_pairs([("h0", "h1")], load=0.3, payload_bytes=mix, process="bernoulli")
    assert "payload_bytes" not in cls and {k: cls[k] for k in mix} == mix
    r = ib.simulate(fab, sm, traffic=cls, time_us=2000, seed=5, mtu_bytes=256)
    s = r.summary.iloc[0]
    # Once on the wire nothing waits: network latencies are exactly those of
    # the two sizes.
    assert s["network_latency_min_ns"] == zero_load_ns(58)
    assert s["network_latency_max_ns"] == zero_load_ns(282)
    # Mean wire 170 B = 680 ns; 0.3 of 2 ms ≈ 880 Bernoulli packets: the
    # offered fraction's sd is about 4 % of 0.3, so 0.06 is 5 of them.
    assert s["offered_fraction"] == pytest.approx(0.3, abs=0.06)


def test_uniform_sizes_and_size_errors(pair):
    fab, sm = pair
    assert ib.traffic.uniform_sizes(1, 64) == {"payload_size_range": [1, 64]}
    r = ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.2, payload_bytes=ib.traffic.uniform_sizes(1, 64)), time_us=200, seed=2)
    c = r.raw["classes"][0]
    assert c["generated_packets"] > 0
    assert 27 * c["generated_packets"] <= c["generated_bytes"] <= 90 * c["generated_packets"]
    with pytest.raises(ib.ConfigError, match=r"traffic.classes\[0\].payload_sizes\[1\].*1..=256"):
        ib.simulate(fab, sm, traffic=ib.traffic.uniform(0.1, payload_bytes=ib.traffic.empirical_sizes([(32, 1), (512, 1)])), time_us=1, mtu_bytes=256)
    bad = {**ib.traffic.uniform(0.1), **ib.traffic.uniform_sizes(1, 2)}
    with pytest.raises(ib.ConfigError, match="payload_size_range: give one of payload_bytes, payload_sizes or payload_size_range"):
        ib.simulate(fab, sm, traffic=bad, time_us=1)


def test_a_cbr_connection_from_the_api(pair):
    fab, sm = pair
    conn = ib.traffic.connection("h0", "h1", bandwidth_bps=100_000_000, packet_bytes=282)
    assert ib.traffic.is_connection(conn) and not ib.traffic.is_closed_loop(conn)
    r = ib.simulate(fab, sm, traffic=conn, time_us=1000, seed=1)
    (c,) = r.connections.to_dict(orient="records")
    # 282 B × 8 at 100 Mb/s: one packet every 22.56 µs, 44 or 45 in 1 ms.
    assert (c["source"], c["destination"], c["iat_ps"]) == ("h0", "h1", 22_560_000.0)
    assert c["generated_packets"] in (44, 45) and c["delivered_packets"] == c["generated_packets"]
    assert list(r.summary["name"]) == ["connections"]
