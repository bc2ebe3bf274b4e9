//! Trace replay end to end: hand-worked latencies on one switch, messages
//! split into MTU packets, time scaling, mixing with open-loop classes,
//! conservation, and errors that name the file and line.

use ibnetsim_sim::{
    PatternConfig, ProcessKind, QosTables, SimConfig, SimError, SimResults, Simulation, Sl2VlMap, TraceConfig, VlArbConfig,
    VlArbMap,
};

use crate::common::*;

/// Writes `text` to the file `name` in `dir` and returns its path.
fn trace_file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn with_trace(mut c: SimConfig, file: &str, time_scale: f64) -> SimConfig {
    c.traffic.traces.push(TraceConfig { name: String::new(), file: file.into(), time_scale });
    c
}

fn run(net: &Net, c: &SimConfig, until_ps: u64) -> SimResults {
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, c).unwrap();
    sim.run(until_ps).unwrap();
    sim.check_conservation().unwrap();
    sim.results()
}

/// On `star(2)` (1x SDR, 4 ns/B, 1 m cables of 5 ns, 100 ns routing) a packet
/// of `w` wire bytes in an idle fabric takes 5 000 + 80 000 (LRH+BTH) +
/// 100 000 + 5 000 + 4 000·w ps (zero_load.rs, one switch).
fn zero_load(w: u64) -> u64 {
    190_000 + 4_000 * w
}

#[test]
fn three_messages_on_one_switch_to_the_picosecond() {
    let tmp = tempfile::tempdir().unwrap();
    // h0 → h1 256 B at 0 (282 B wire): 190 000 + 1 128 000 = 1 318 000.
    // h1 → h0  32 B at 100 ns (58 B):  190 000 +   232 000 =   422 000; it
    //   crosses the switch the other way, so it meets nothing.
    // h0 → h1 100 B at 5 µs (126 B):    190 000 +   504 000 =   694 000; the
    //   first packet was delivered at 1.318 µs.
    let text = "# time_ns src dst bytes sl\n0 h0 h1 256 0\n\n100 h1:1 h0 32 1  # reply\n5000 h0 h1 100 0\n";
    let net = routed(star(2));
    let c = with_trace(config(vec![]), &trace_file(&tmp, "three.trace", text), 1.0);
    let r = run(&net, &c, 20_000_000);
    assert_eq!((r.generated, r.delivered, r.in_flight), (3, 3, 0));
    assert_eq!(zero_load(282), 1_318_000);
    let k = &r.classes[0];
    assert_eq!(k.name, "three");
    assert_eq!((k.generated_packets, k.delivered_packets), (3, 3));
    assert_eq!(k.generated_bytes, 282 + 58 + 126);
    assert_eq!((k.latency.min_ps, k.latency.max_ps), (Some(422_000), Some(1_318_000)));
    assert_eq!(k.latency.mean_ps, Some((1_318_000 + 422_000 + 694_000) as f64 / 3.0));
    assert_eq!(k.network_latency, k.latency, "nothing waited at a source");
    // Per SL: SL0 has the two h0 messages, SL1 the reply.
    assert_eq!(r.sls.len(), 2);
    let (sl0, sl1) = (&r.sls[0], &r.sls[1]);
    assert_eq!((sl0.sl, sl0.delivered_packets, sl0.latency.min_ps, sl0.latency.max_ps), (0, 2, Some(694_000), Some(1_318_000)));
    assert_eq!((sl1.sl, sl1.delivered_packets, sl1.latency.min_ps, sl1.latency.max_ps), (1, 1, Some(422_000), Some(422_000)));
    // Offered is relative to the senders' links: both hosts send (0.25 B/ns
    // each), SL0 only h0, SL1 only h1; the window is 20 µs.
    let frac = |bytes: u64, hosts: f64| bytes as f64 / (20_000.0 * 0.25 * hosts);
    assert!((k.offered_fraction - frac(466, 2.0)).abs() < 1e-12, "{}", k.offered_fraction);
    assert!((sl0.offered_fraction - frac(408, 1.0)).abs() < 1e-12);
    assert!((sl1.offered_fraction - frac(58, 1.0)).abs() < 1e-12);
    assert_eq!(k.accepted_fraction, k.offered_fraction);
}

#[test]
fn a_message_is_split_into_mtu_packets() {
    let tmp = tempfile::tempdir().unwrap();
    // 600 B at MTU 256: 256 + 256 + 88 B of payload, 282 + 282 + 114 B on the
    // wire, all generated at 0 and sent back to back from h0: starts at 0,
    // 1 128 000 and 2 256 000. The first arrives after 1 318 000; the second
    // after its start + 1 318 000 = 2 446 000; the third's header is routed at
    // 2 256 000 + 185 000 = 2 441 000, just as the second's last byte leaves
    // the switch, and it is delivered 5 000 + 456 000 later, at 2 902 000.
    let net = routed(star(2));
    let c = with_trace(config(vec![]), &trace_file(&tmp, "split.trace", "0 h0 h1 600 3\n"), 1.0);
    let r = run(&net, &c, 10_000_000);
    let k = &r.classes[0];
    assert_eq!((k.generated_packets, k.delivered_packets, k.generated_bytes), (3, 3, 282 + 282 + 114));
    assert_eq!((k.latency.min_ps, k.latency.max_ps), (Some(1_318_000), Some(2_902_000)));
    assert_eq!(k.latency.mean_ps, Some((1_318_000 + 2_446_000 + 2_902_000) as f64 / 3.0));
    assert_eq!(r.sls[0].sl, 3);
    // At MTU 2048 it is one packet of 626 B.
    let mut big = c.clone();
    big.mtu_bytes = 2048;
    let k = run(&net, &big, 10_000_000).classes[0].clone();
    assert_eq!((k.generated_packets, k.latency.min_ps), (1, Some(zero_load(626))));
}

#[test]
fn time_scale_multiplies_the_times() {
    let tmp = tempfile::tempdir().unwrap();
    // Two 256 B packets from h0, 600 ns apart: the second must wait 1 128 −
    // 600 = 528 ns for the link, so its latency is 1 318 000 + 528 000. At
    // time_scale 2 they are 1 200 ns apart and neither waits.
    let net = routed(star(2));
    let f = trace_file(&tmp, "scale.trace", "0 h0 h1 256 0\n600 h0 h1 256 0\n");
    let max = |scale: f64| run(&net, &with_trace(config(vec![]), &f, scale), 10_000_000).classes[0].latency.max_ps;
    assert_eq!(max(1.0), Some(1_846_000));
    assert_eq!(max(2.0), Some(1_318_000));
    // Compressed to a tenth they are 60 ns apart: the second waits 1 068 ns.
    assert_eq!(max(0.1), Some(1_318_000 + 1_068_000));
}

#[test]
fn traces_mix_with_open_loop_classes_and_conserve_packets() {
    let tmp = tempfile::tempdir().unwrap();
    // A trace over 10 hosts with varied sizes and SLs next to uniform traffic.
    let net = small_irregular();
    let mut text = String::from("# generated\n");
    let mut want_packets = 0u64;
    let mut want_bytes = 0u64;
    for i in 0..400u64 {
        let (s, d) = (i % 10, (i * 7 + 3) % 10);
        if s == d {
            continue;
        }
        let bytes = 1 + (i * 97) % 1000;
        text += &format!("{} h{s} h{d} {bytes} {}\n", i * 2_000, i % 2);
        let n = bytes.div_ceil(256);
        want_packets += n;
        want_bytes += bytes + 26 * n;
    }
    let mut c = config(vec![class("u", 0, 0.2, ProcessKind::Poisson, 256, PatternConfig::Uniform)]);
    c.data_vls = 2;
    c.traffic.traces.push(TraceConfig { name: "io".into(), file: trace_file(&tmp, "mixed.trace", &text), time_scale: 1.0 });
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(400_000_000).unwrap();
    sim.check_conservation().unwrap();
    sim.run(3_000_000_000).unwrap();
    sim.check_conservation().unwrap();
    let r = sim.results();
    let names: Vec<&str> = r.classes.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["u", "io"], "traces follow the open-loop classes");
    let io = &r.classes[1];
    assert_eq!((io.generated_packets, io.delivered_packets, io.generated_bytes), (want_packets, want_packets, want_bytes));
    let total: u64 = r.classes.iter().map(|k| k.generated_packets).sum();
    assert_eq!(total, r.generated);
    let sl_total: u64 = r.sls.iter().map(|k| k.generated_packets).sum();
    assert_eq!(sl_total, r.generated, "per-SL counts cover the trace's SL 1 too");
    // Accepted counts the trace's bytes with the rest.
    let delivered: u64 = r.classes.iter().map(|k| k.delivered_bytes).sum();
    let rate = 10.0 * 0.25e-3; // B/ps of the 10 hosts
    assert!((r.accepted_fraction - delivered as f64 / (3e9 * rate)).abs() < 1e-12);
    // Same seed, same run.
    assert_eq!(r, run(&net, &c, 3_000_000_000));
}

#[test]
fn a_trace_holds_one_pending_event() {
    // 1 000 messages, 1 µs apart: the queue holds the trace's next message
    // only, not the whole file.
    let tmp = tempfile::tempdir().unwrap();
    let text: String = (0..1000).map(|i| format!("{} h{} h{} 64 0\n", i * 1000, i % 2, 1 - i % 2)).collect();
    let net = routed(star(2));
    let c = with_trace(config(vec![]), &trace_file(&tmp, "long.trace", &text), 1.0);
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    assert_eq!(sim.pending_events(), 1);
    // Mid-run: the next message plus the few events of packets in flight.
    sim.run(500_000_500).unwrap();
    assert!(sim.pending_events() < 10, "{}", sim.pending_events());
    sim.run(2_000_000_000).unwrap();
    assert_eq!((sim.pending_events(), sim.results().delivered), (0, 1000));
}

fn parse_err(net: &Net, c: &SimConfig) -> String {
    match Simulation::new(&net.fabric, &net.lids, &net.tables, c) {
        Err(e @ (SimError::Parse { .. } | SimError::Config { .. })) => e.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn trace_errors_name_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let net = routed(star(3));
    let cases = [
        ("0 h0 h1 256\n", ":1: expected 5 fields"),
        ("0 h0 h1 256 0\n0 h0 nobody 256 0\n", ":2: host 'nobody': unknown node 'nobody'"),
        ("0 h0 sw 256 0\n", ":1: host 'sw': 'sw' is a switch, not a host"),
        ("0 h0 h1:2 256 0\n", ":1: host 'h1:2': 'h1' has no port 2"),
        ("-5 h0 h1 256 0\n", ":1: time -5 ns must be a finite number >= 0"),
        ("10 h0 h1 256 0\n5 h0 h1 256 0\n", ":2: time 5 ns is earlier than 10 ns on line 1"),
        ("0 h0 h1 0 0\n", ":1: bytes must be 1..="),
        ("# x\n0 h0 h1 256 16\n", ":2: SL 16 is not 0..=15"),
        ("0 h2 h2:1 256 0\n", ":1: source 'h2' and destination 'h2:1' are the same host"),
    ];
    for (i, (text, want)) in cases.into_iter().enumerate() {
        let f = trace_file(&tmp, &format!("bad{i}.trace"), text);
        let e = parse_err(&net, &with_trace(config(vec![]), &f, 1.0));
        assert!(e.starts_with(&format!("{f}{want}")), "{text:?}: {e}");
    }
    let ok = trace_file(&tmp, "ok.trace", "0 h0 h1 256 2\n");
    let e = parse_err(&net, &with_trace(config(vec![]), "/nonexistent/x.trace", 1.0));
    assert!(e.contains("'traffic.traces[0].file'") && e.contains("cannot read '/nonexistent/x.trace'"), "{e}");
    let e = parse_err(&net, &with_trace(config(vec![]), &ok, 0.0));
    assert!(e.contains("'traffic.traces[0].time_scale'") && e.contains("> 0"), "{e}");
    let e = parse_err(&net, &with_trace(with_trace(config(vec![]), &ok, 1.0), &ok, 1.0));
    assert!(e.contains("'traffic.traces[1].name'") && e.contains("'ok' is used twice"), "{e}");
    // SL2VL tables from the subnet manager that send the trace's SL 2 beyond
    // the one data VL.
    let mut m = [0u8; 16];
    m[2] = 1;
    let qos = QosTables { sl2vl: Sl2VlMap::Uniform(m), vlarb: VlArbMap::uniform(VlArbConfig::uniform(1)) };
    let c = with_trace(config(vec![]), &ok, 1.0);
    let e = Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos.clone()).unwrap_err().to_string();
    assert!(e.contains("'sl2vl'") && e.contains("used SL to VL 1"), "{e}");
    m[2] = 0;
    let qos = QosTables { sl2vl: Sl2VlMap::Uniform(m), ..qos };
    assert!(Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos).is_ok());
}
