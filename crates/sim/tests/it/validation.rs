//! Bad configurations are refused when the simulation is built, with an
//! error that names the key and says what was expected.

use ibnetsim_sim::{
    AutoWarmupConfig, BufferOverride, PatternConfig, ProcessKind, SimConfig, SimError, Simulation, Sl2VlConfig, VlArbConfig,
    VlArbitrationConfig,
};

use crate::common::*;

fn err(c: &SimConfig) -> String {
    let net = small_irregular();
    match Simulation::new(&net.fabric, &net.lids, &net.tables, c) {
        Ok(_) => panic!("config was accepted"),
        Err(e) => {
            assert!(matches!(e, SimError::Config { .. }), "{e}");
            e.to_string()
        }
    }
}

type Edit = Box<dyn Fn(&mut SimConfig)>;

fn ok() -> SimConfig {
    uniform(0.5, ProcessKind::Poisson, 256)
}

#[test]
fn each_bad_value_names_its_key() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (Box::new(|c| c.data_vls = 0), "'data_vls'", "1..=15"),
        (Box::new(|c| c.data_vls = 16), "'data_vls'", "1..=15"),
        (Box::new(|c| c.mtu_bytes = 300), "'mtu_bytes'", "256, 512"),
        (Box::new(|c| c.switch.input_buffer_bytes = 256), "'switch.input_buffer_bytes'", "282 B"),
        (Box::new(|c| c.switch.output_buffer_bytes = 100), "'switch.output_buffer_bytes'", "whole MTU packet"),
        (Box::new(|c| c.hca.send_buffer_bytes = 64), "'hca.send_buffer_bytes'", "cut-through"),
        (Box::new(|c| c.switch.vl15_buffer_bytes = 64), "'switch.vl15_buffer_bytes'", "VL15 packet"),
        (Box::new(|c| c.switch.speedup = f64::NAN), "'switch.speedup'", "> 0"),
        (Box::new(|c| c.switch.speedup = 0.0), "'switch.speedup'", "> 0"),
        (Box::new(|c| c.switch.routing_delay_ns = -5.0), "'switch.routing_delay_ns'", ">= 0"),
        (Box::new(|c| c.watchdog_ns = 0.0), "'watchdog_ns'", "> 0"),
        (Box::new(|c| c.watchdog_ns = 4_000.0), "'watchdog_ns'", "too short"),
        (
            Box::new(|c| {
                c.warmup_ns = 1_000.0;
                c.auto_warmup = Some(AutoWarmupConfig::default());
            }),
            "'warmup_ns'",
            "must be 0 when auto_warmup",
        ),
        (
            Box::new(|c| c.auto_warmup = Some(AutoWarmupConfig { windows: 2, ..Default::default() })),
            "'auto_warmup.windows'",
            "at least 3",
        ),
        (
            Box::new(|c| c.auto_warmup = Some(AutoWarmupConfig { window_ns: 0.0, ..Default::default() })),
            "'auto_warmup.window_ns'",
            "> 0",
        ),
        (
            Box::new(|c| c.auto_warmup = Some(AutoWarmupConfig { tolerance: 1.0, ..Default::default() })),
            "'auto_warmup.tolerance'",
            "(0, 1)",
        ),
        (
            Box::new(|c| c.auto_warmup = Some(AutoWarmupConfig { max_ns: 50_000.0, ..Default::default() })),
            "'auto_warmup.max_ns'",
            "100000 ns",
        ),
        (Box::new(|c| c.selection = "lru".into()), "'selection'", "deterministic, adaptive-by-credits, lfu"),
        (Box::new(|c| c.event_queue = "calendar".into()), "'event_queue'", "fifo, heap"),
        (Box::new(|c| c.traffic.classes[0].payload_bytes = 257), "'traffic.classes[0].payload_bytes'", "1..=256"),
        (Box::new(|c| c.traffic.classes[0].payload_bytes = 0), "'traffic.classes[0].payload_bytes'", "1..=256"),
        (Box::new(|c| c.traffic.classes[0].sl = 16), "'traffic.classes[0].sl'", "0..=15"),
        (Box::new(|c| c.traffic.classes[0].load = -0.1), "'traffic.classes[0].load'", "0..=100"),
        (Box::new(|c| c.traffic.classes[0].load = 1e9), "'traffic.classes[0].load'", "0..=100"),
        (
            Box::new(|c| {
                c.traffic.classes[0].process = ProcessKind::Bernoulli;
                c.traffic.classes[0].load = 1.2;
            }),
            "'traffic.classes[0].load'",
            "<= 1",
        ),
        (
            Box::new(|c| c.traffic.classes.push(c.traffic.classes[0].clone())),
            "'traffic.classes[1].name'",
            "used twice",
        ),
        (
            Box::new(|c| c.traffic.classes[0].pattern = PatternConfig::FixedPairs { pairs: vec![("h0".into(), "s1".into())] }),
            "'traffic.classes[0].pairs[0]'",
            "is a switch",
        ),
        (
            Box::new(|c| c.traffic.classes[0].pattern = PatternConfig::FixedPairs { pairs: vec![("h0".into(), "nobody".into())] }),
            "'traffic.classes[0].pairs[0]'",
            "unknown node 'nobody'",
        ),
        (
            Box::new(|c| c.sl2vl = Sl2VlConfig::Table { vl_of_sl: vec![0; 15] }),
            "'sl2vl.vl_of_sl'",
            "16 SLs",
        ),
        (
            Box::new(|c| c.sl2vl = Sl2VlConfig::Table { vl_of_sl: [vec![0; 15], vec![3]].concat() }),
            "'sl2vl.vl_of_sl[15]'",
            "not a data VL",
        ),
        (
            Box::new(|c| {
                c.vl_arbitration =
                    VlArbitrationConfig::Iba(VlArbConfig { high: vec![(2, 1)], low: vec![], limit_of_high_priority: 0 })
            }),
            "'vl_arbitration.high[0]'",
            "VL 2",
        ),
        (
            Box::new(|c| {
                c.buffer_overrides = vec![BufferOverride {
                    node: "s9".into(),
                    port: 1,
                    vl: None,
                    input_bytes: Some(4096),
                    output_bytes: None,
                }]
            }),
            "'buffer_overrides[0].node'",
            "unknown node 's9'",
        ),
        (
            Box::new(|c| {
                c.buffer_overrides = vec![BufferOverride {
                    node: "s1".into(),
                    port: 9,
                    vl: None,
                    input_bytes: Some(4096),
                    output_bytes: None,
                }]
            }),
            "'buffer_overrides[0].port'",
            "ports 1..=6",
        ),
        (
            Box::new(|c| {
                c.buffer_overrides = vec![BufferOverride {
                    node: "s1".into(),
                    port: 1,
                    vl: Some(1),
                    input_bytes: Some(4096),
                    output_bytes: None,
                }]
            }),
            "'buffer_overrides[0].vl'",
            "not a data VL",
        ),
        (Box::new(|c| c.hca.sl_priority = vec![3, 3]), "'hca.sl_priority[1]'", "listed twice"),
        (Box::new(|c| c.switch.input_buffer = "oq".into()), "'switch.input_buffer'", "known: fifo, voq"),
        (
            Box::new(|c| {
                c.switch.input_buffer = "voq".into();
                c.switch.output_buffer_bytes = 0;
            }),
            "'switch.input_buffer'",
            "needs output buffers",
        ),
        (Box::new(|c| c.switch.max_transfers_per_input = 0), "'switch.max_transfers_per_input'", "1..=255"),
        (Box::new(|c| c.switch.max_transfers_per_input = 256), "'switch.max_transfers_per_input'", "1..=255"),
        (Box::new(|c| c.switch.crossbar_arbiter = "pim".into()), "'switch.crossbar_arbiter'", "known: round-robin, oldest-first, islip"),
    ];
    for (i, (edit, key, what)) in cases.iter().enumerate() {
        let mut c = ok();
        edit(&mut c);
        let e = err(&c);
        assert!(e.contains(key) && e.contains(what), "case {i}: {e}");
    }
}

#[test]
fn defaults_and_presets_are_valid() {
    let net = small_irregular();
    let mut c = SimConfig::default();
    c.traffic.classes = vec![class("u", 0, 0.2, ProcessKind::Poisson, 2048, PatternConfig::Uniform)];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    sim.run(50_000_000).unwrap();
    assert!(sim.results().delivered > 0);
    for p in ibnetsim_sim::PRESETS {
        let mut c = (p.build)();
        c.traffic.classes = vec![class("u", 0, 0.2, ProcessKind::Poisson, c.mtu_bytes, PatternConfig::Uniform)];
        let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        sim.run(50_000_000).unwrap();
    }
}

#[test]
fn overrides_that_fit_are_accepted_and_used() {
    let net = small_irregular();
    let mut c = ok();
    c.buffer_overrides = vec![BufferOverride {
        node: "s1".into(),
        port: 1,
        vl: Some(0),
        input_bytes: Some(4096),
        output_bytes: Some(320),
    }];
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).unwrap();
    // s1 port 1 is cabled to s0 port 1: s0's transmitter starts with the
    // overridden 4096 B = 64 credits for it, and s1's towards s0 with the
    // default; the other end of the link keeps its default too.
    let default = c.switch.input_buffer_bytes / 64;
    assert_ne!(default, 64, "the override must differ from the default to show");
    assert_eq!(sim.credits("s0", 1, 0, 0), Some((64, 64)));
    assert_eq!(sim.credits("s1", 1, 0, 0), Some((default, default)));
    assert_eq!(sim.credits("s2", 1, 0, 0), Some((default, default)));
    sim.run(100_000_000).unwrap();
    sim.check_conservation().unwrap();
}

#[test]
fn missing_lids_and_tables_are_refused() {
    let net = small_irregular();
    // A host cabled after LIDs were assigned has none.
    let mut f2 = net.fabric.clone();
    let late = f2.add_hca("late", 1).unwrap();
    let s0 = f2.node_by_name("s0").unwrap();
    f2.connect(late, 1, s0, 4, sdr(1.0)).unwrap();
    let e = Simulation::new(&f2, &net.lids, &net.tables, &ok()).err().unwrap().to_string();
    assert!(e.contains("'lids'") && e.contains("late:1"), "{e}");
    // Tables computed for a fabric without switch s4's node have no LFT for it.
    let mut f3 = ibnetsim_fabric::Fabric::new();
    f3.add_switch("only", 2).unwrap();
    let t3 = ibnetsim_sm::ForwardingTables::new(&f3, net.lids.top_lid());
    let e = Simulation::new(&net.fabric, &net.lids, &t3, &ok()).err().unwrap().to_string();
    assert!(e.contains("'tables'") && e.contains("has no forwarding table"), "{e}");
}

#[test]
fn inject_checks_its_arguments() {
    let net = small_irregular();
    let mut sim = Simulation::new(&net.fabric, &net.lids, &net.tables, &ok()).unwrap();
    assert!(sim.inject(0, 1, 0, 1).unwrap_err().to_string().contains("'inject.class'"));
    assert!(sim.inject(0, 0, 10, 1).unwrap_err().to_string().contains("'inject.src'"));
    assert!(sim.inject(0, 0, 1, 1).unwrap_err().to_string().contains("'inject.dst'"));
    sim.run(1_000).unwrap();
    assert!(sim.inject(10, 0, 1, 2).unwrap_err().to_string().contains("in the past"));
}

/// What a fabric cannot change is refused by `SimConfig::check` already, with
/// the key building names (so that a scenario's `--dry-run` sees it).
#[test]
fn the_fabric_free_check_refuses_workloads_building_would() {
    use ibnetsim_sim::traffic::ConnectionConfig;
    use ibnetsim_sim::AckMode;
    use ibnetsim_sim::ClosedLoopConfig;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|c| c.traffic.classes[0].payload_bytes = 4096), "traffic.classes[0].payload_bytes"),
        (Box::new(|c| c.traffic.classes[0].load = 1.5), "traffic.classes[0].load"),
        (Box::new(|c| c.traffic.classes.push(c.traffic.classes[0].clone())), "traffic.classes[1].name"),
        (Box::new(|c| c.traffic.closed_loop.push(ClosedLoopConfig { window: 0, ..Default::default() })), "traffic.closed_loop[0].window"),
        (Box::new(|c| c.traffic.closed_loop.push(ClosedLoopConfig { window: 65_537, ..Default::default() })), "traffic.closed_loop[0].window"),
        (
            Box::new(|c| {
                let name = c.traffic.classes[0].name.clone();
                c.traffic.closed_loop.push(ClosedLoopConfig { name, ..Default::default() })
            }),
            "traffic.closed_loop[0].name",
        ),
        (
            Box::new(|c| {
                c.traffic.connections.push(ConnectionConfig { source: "h0".into(), destination: "h1".into(), sl: 0, bandwidth_bps: 0, packet_bytes: 256 })
            }),
            "traffic.connections[0].bandwidth_bps",
        ),
        (
            // 26 B of headers: 26 B on the wire leave no payload.
            Box::new(|c| {
                c.traffic.connections.push(ConnectionConfig { source: "h0".into(), destination: "h1".into(), sl: 0, bandwidth_bps: 1, packet_bytes: 26 })
            }),
            "traffic.connections[0].packet_bytes",
        ),
        (
            Box::new(|c| {
                c.transport.ack = AckMode::Packet;
                c.transport.reply_sl = 16;
            }),
            "transport.reply_sl",
        ),
    ];
    for (i, (edit, key)) in cases.iter().enumerate() {
        // MTU 2048 and a Bernoulli process: 4096 B and a load of 1.5 cannot be.
        let mut c = uniform(0.5, ProcessKind::Bernoulli, 256);
        edit(&mut c);
        match c.check() {
            Err(SimError::Config { key: k, .. }) => assert_eq!(k, *key, "case {i}"),
            other => panic!("case {i}: {other:?}"),
        }
        assert!(err(&c).contains(&format!("'{key}'")), "case {i}: building names the same key");
    }
    assert!(ok().check().is_ok());
}

/// Closed-loop windows leave whole at time 0: what they would hold at once is
/// bounded by the fabric's senders, so building refuses it, naming the window.
#[test]
fn closed_loop_windows_too_large_for_the_fabric_are_refused() {
    use ibnetsim_sim::ClosedLoopConfig;
    let net = small_irregular();
    let hosts = net.fabric.cas().count() as u64;
    let mut c = ok();
    c.traffic.classes.clear();
    // 64 packets per message: 65 536 × 64 = 2^22 packets per source.
    let message_bytes = 64 * c.mtu_bytes;
    c.traffic.closed_loop = vec![ClosedLoopConfig { window: 65_536, message_bytes, ..Default::default() }];
    assert!(hosts > 4, "{hosts} hosts: more than 2^24 packets must be asked for");
    let e = Simulation::new(&net.fabric, &net.lids, &net.tables, &c).err().unwrap().to_string();
    let want = format!("would put {} packets into the send queues at time 0 ({hosts} sources here, 64 packets per message)", hosts << 22);
    assert!(e.contains("'traffic.closed_loop[0].window'") && e.contains(&want), "{e}");
    // A window that keeps the total within 2^24 packets builds.
    c.traffic.closed_loop[0].window = 4 * 65_536 / hosts as u32;
    assert!(Simulation::new(&net.fabric, &net.lids, &net.tables, &c).is_ok());
}

/// A host whose own port's VL arbitration table never sends the VL its
/// class's SL maps to could not send a packet: building refuses it, naming
/// the port, the SL and the VL. A class without load (what `inject` uses) is
/// not a sender, and stalls only if something is injected (deadlock.rs).
#[test]
fn a_sender_whose_port_never_sends_its_vl_is_refused() {
    use ibnetsim_sim::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
    let net = routed(star(3));
    let h0 = net.fabric.node_by_name("h0").unwrap();
    let only_vl0 = VlArbConfig { high: vec![], low: vec![(0, 10)], limit_of_high_priority: 0 };
    let qos = || QosTables {
        sl2vl: Sl2VlMap::modulo(2),
        vlarb: VlArbMap { default: VlArbConfig::uniform(2), per_port: vec![((h0, 1), only_vl0.clone())] },
    };
    let build = |sl: u8, load: f64, src: &str| {
        let mut c = config(vec![class("b", sl, load, ProcessKind::Poisson, 256, pair(src, "h2"))]);
        c.data_vls = 2;
        Simulation::with_qos(&net.fabric, &net.lids, &net.tables, &c, qos()).map(|_| ())
    };
    match build(1, 0.1, "h0") {
        Err(SimError::Config { key, msg }) => {
            assert_eq!(key, "vl_arbitration");
            assert!(msg.starts_with("h0/1 sends SL 1 on VL 1, which the port's VL arbitration table never sends"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    // SL 0 (VL 0) from h0, SL 1 from h1 (whose port sends both), and SL 1 without load all pass.
    assert!(build(0, 0.1, "h0").is_ok());
    assert!(build(1, 0.1, "h1").is_ok());
    assert!(build(1, 0.0, "h0").is_ok());
}

#[test]
fn more_distinct_cable_timings_than_a_port_can_index_are_refused() {
    // Pairs of 36-port switches joined by 36 cables each, every cable of its
    // own length: 1 821 pairs make 65 556 distinct timings, 20 more than a
    // port's 16-bit timing index can name.
    let mut f = ibnetsim_fabric::Fabric::new();
    let mut length = 1.0;
    for k in 0..1_821 {
        let a = f.add_switch(format!("a{k}"), 36).unwrap();
        let b = f.add_switch(format!("b{k}"), 36).unwrap();
        for p in 1..=36 {
            f.connect(a, p, b, p, sdr(length)).unwrap();
            length += 0.001;
        }
    }
    let lids = ibnetsim_sm::LidMap::assign(&f, 0).unwrap();
    let tables = ibnetsim_sm::ForwardingTables::new(&f, lids.top_lid());
    let e = Simulation::new(&f, &lids, &tables, &ok()).err().unwrap().to_string();
    assert!(e.contains("'fabric'") && e.contains("65536 distinct timings"), "{e}");
}
