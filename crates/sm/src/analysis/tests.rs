//! Hand-built fabrics with hand-filled tables, checked against values worked
//! out by hand; a differential test of the per-LID trees against tracing
//! every pair one by one; and the 1,944-host fat tree.

use std::collections::BTreeMap;

use ibnetsim_fabric::{Fabric, LinkEnd, LinkSpec, LinkSpeed, LinkWidth, NodeId, PortNum};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::lft::{ForwardingTables, NO_PATH};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}

/// A fabric with LIDs and tables to fill by hand.
struct Net {
    f: Fabric,
    lids: LidMap,
    t: ForwardingTables,
}

impl Net {
    fn new(f: Fabric, lmc: u8) -> Self {
        let lids = LidMap::assign(&f, lmc).unwrap();
        let t = ForwardingTables::new(&f, lids.top_lid());
        Net { f, lids, t }
    }

    fn id(&self, name: &str) -> NodeId {
        self.f.node_by_name(name).unwrap_or_else(|| panic!("no node {name}"))
    }

    /// Base LID of a CA's port 1, or a switch's LID.
    fn lid(&self, name: &str) -> Lid {
        let n = self.id(name);
        let port = if self.f.node(n).kind.is_switch() { 0 } else { 1 };
        self.lids.of_port(n, port).unwrap().base
    }

    fn set(&mut self, sw: &str, dest: &str, port: u8) {
        let (s, l) = (self.id(sw), self.lid(dest));
        self.t.set(s, l, port);
    }

    fn check_with(&self, sl: &SlView<'_>, opts: &AnalysisOptions) -> AnalysisReport {
        analyze(&self.f, &self.lids, &self.t, sl, opts).unwrap()
    }

    fn check(&self) -> AnalysisReport {
        self.check_with(&SlView::default(), &AnalysisOptions::default())
    }

    fn loads(&self) -> ChannelLoads {
        uniform_loads(&self.f, &self.lids, &self.t, LoadLids::Base).unwrap()
    }

    fn load(&self, loads: &ChannelLoads, from: &str, port: PortNum) -> f64 {
        let (dl, _) = DirLink::out_of(&self.f, self.id(from), port).unwrap();
        loads.loads[dl.0 as usize]
    }
}

/// Four 4-port switches in a ring (port 1 to the next switch's port 2, port 3
/// to a host, port 4 free). LIDs: h0..h3 = 1..4, s0..s3 = 5..8.
fn ring() -> Net {
    let mut f = Fabric::new();
    let s: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    let h: Vec<NodeId> = (0..4).map(|i| f.add_hca(format!("h{i}"), 1).unwrap()).collect();
    for i in 0..4 {
        f.connect(s[i], 1, s[(i + 1) % 4], 2, LinkSpec::default()).unwrap();
    }
    for i in 0..4 {
        f.connect(s[i], 3, h[i], 1, LinkSpec::default()).unwrap();
    }
    Net::new(f, 0)
}

/// Every route goes clockwise (out of port 1).
fn clockwise() -> Net {
    let mut n = ring();
    for i in 0..4 {
        for j in 0..4 {
            n.set(&format!("s{i}"), &format!("h{j}"), if i == j { 3 } else { 1 });
            n.set(&format!("s{i}"), &format!("s{j}"), if i == j { 0 } else { 1 });
        }
    }
    n
}

/// Clockwise, except that no route turns from s3->s0 into s0->s1: the routes
/// that would (s3 to h1 and h2, s2 to h1) go counter-clockwise instead.
fn broken_turn() -> Net {
    let mut n = clockwise();
    n.set("s2", "h1", 2);
    n.set("s3", "h1", 2);
    n.set("s3", "h2", 2);
    n
}

fn cycle_links(r: &AnalysisReport) -> Vec<(String, String, u8)> {
    r.credit_loops.cycle.as_ref().unwrap().iter().map(|s| (s.from.clone(), s.to.clone(), s.vl)).collect()
}

fn links(v: &[(&str, &str, u8)]) -> Vec<(String, String, u8)> {
    v.iter().map(|&(a, b, vl)| (a.to_string(), b.to_string(), vl)).collect()
}

#[test]
fn clockwise_ring_has_a_credit_loop_of_four_channels() {
    let n = clockwise();
    let r = n.check();
    let k = &r.credit_loops;
    assert_eq!(k.cyclic_sccs, 1);
    assert_eq!(k.channels_in_cycles, 4);
    // 4 host->switch, 4 clockwise, 4 switch->host channels; dependencies:
    // host link -> clockwise link (4), clockwise -> clockwise (4), clockwise -> host link (4).
    assert_eq!((k.channels, k.dependencies), (12, 12));
    assert_eq!(k.vls_used, vec![0]);
    assert_eq!(
        cycle_links(&r),
        links(&[("s0/1", "s1/2", 0), ("s1/1", "s2/2", 0), ("s2/1", "s3/2", 0), ("s3/1", "s0/2", 0)])
    );
    // Each step names a LID whose routes really go on into the next channel.
    for (i, step) in k.cycle.as_ref().unwrap().iter().enumerate() {
        let next_switch = n.id(&format!("s{}", (i + 1) % 4));
        assert_eq!(n.t.get(next_switch, step.dlid), Some(1), "step {i}: {step:?}");
    }
    assert!(r.has_defects());
    let text = r.to_string();
    assert!(text.contains("credit loops: CYCLE: 1 cyclic component with 4 channels"), "{text}");
    assert!(text.contains("    s2/1 -> s3/2 VL0 (routes to LID"), "{text}");
    assert!(text.ends_with("verdict: DEFECTS FOUND"), "{text}");
    // Nothing else is wrong with it.
    assert!(r.paths.reach.is_clean() && r.switch_paths.is_clean());
}

#[test]
fn clockwise_ring_path_lengths_and_stretch() {
    // From each host the other three are 1, 2 and 3 links clockwise: 2, 3 and
    // 4 switch hops, where the shortest ways are 2, 3 and 2.
    let r = clockwise().check();
    let p = &r.paths;
    assert_eq!((p.reach.pairs, p.reach.reachable_pairs, p.reach.destination_lids), (12, 12, 4));
    assert_eq!(p.hop_histogram, vec![0, 0, 4, 4, 4]);
    assert_eq!((p.min_hops, p.max_hops), (2, 4));
    assert_close!(p.mean_hops, 3.0);
    assert_eq!(p.non_minimal_pairs, 4);
    assert_close!(p.non_minimal_fraction, 1.0 / 3.0);
    assert_close!(p.mean_stretch, (1.0 + 1.0 + 2.0) / 3.0);
    assert_close!(p.max_stretch, 2.0);
    let w = p.worst_stretch.as_ref().unwrap();
    assert_eq!((w.hops, w.min_hops), (4, 2));
    assert_eq!(w.route.route, "h1/1 -> s1/1 -> s2/1 -> s3/1 -> s0/3 -> h0/1");
}

#[test]
fn clockwise_ring_channel_load() {
    // 4 hosts, 1/3 of a link rate from each to each; 12 routes of 1+2+3 ring
    // links spread over 4 clockwise links: 6 routes each, load 2.
    let n = clockwise();
    let r = n.check();
    let c = &r.channel_load;
    assert_close!(c.max_load, 2.0);
    assert_eq!(c.max_link.as_deref(), Some("s0/1 -> s1/2"));
    // 16 directed links: 8 host links at 1, 4 clockwise at 2, 4 counter-clockwise at 0.
    assert_close!(c.mean_load, 1.0);
    assert_close!(c.mean_switch_link_load, 1.0);
    assert_close!(c.throughput_bound, 0.5);
    assert_eq!(c.loaded_links, 12);
    assert_eq!(c.unrouted_fraction, 0.0);
    let loads = n.loads();
    for i in 0..4 {
        assert_close!(n.load(&loads, &format!("s{i}"), 1), 2.0);
        assert_eq!(n.load(&loads, &format!("s{i}"), 2), 0.0);
        assert_close!(n.load(&loads, &format!("s{i}"), 3), 1.0);
        assert_close!(n.load(&loads, &format!("h{i}"), 1), 1.0);
    }
}

#[test]
fn ring_with_a_broken_turn_has_no_credit_loop() {
    let r = broken_turn().check();
    assert!(!r.credit_loops.has_cycle(), "{r}");
    assert_eq!(r.credit_loops.cycle, None);
    assert!(!r.has_defects(), "{r}");
    assert!(r.to_string().contains("credit loops: none (14 channels"), "{r}");
    // Lengths, by hand: to h0 4,3,2; to h1 2,2,3; to h2 3,2,2; to h3 4,3,2.
    let p = &r.paths;
    assert_eq!(p.hop_histogram, vec![0, 0, 6, 4, 2]);
    assert_close!(p.mean_hops, 32.0 / 12.0);
    assert_eq!(p.non_minimal_pairs, 2);
    assert_close!(p.mean_stretch, 14.0 / 12.0);
    assert!(r.to_string().ends_with("verdict: ok"), "{r}");
}

#[test]
fn switch_routes_close_the_broken_turn_when_included() {
    // CA routes avoid the turn s3->s0 into s0->s1, but the switch-LID
    // entries still go clockwise: s2's and s3's own packets for s1 (LID 6)
    // make that turn, and the ring's cycle is back.
    let n = broken_turn();
    let opts = AnalysisOptions { cdg_switch_lids: true, ..Default::default() };
    let r = n.check_with(&SlView::default(), &opts);
    assert!(r.credit_loops.switch_lids && r.has_defects(), "{r}");
    let cycle = r.credit_loops.cycle.as_ref().unwrap();
    let steps: Vec<(&str, &str, Lid)> = cycle.iter().map(|s| (s.from.as_str(), s.to.as_str(), s.dlid)).collect();
    // Dependencies keep the first LID that made them: CA LIDs 1..4 come
    // before switch LIDs 5..8, and only s3->s0 into s0->s1 needs a switch LID.
    assert_eq!(steps, [("s0/1", "s1/2", 3), ("s1/1", "s2/2", 1), ("s2/1", "s3/2", 1), ("s3/1", "s0/2", 6)], "{r}");
    assert!(r.to_string().contains("routes from and to switches included"), "{r}");
    // Switch routes run on clockwise ring links that CA routes already use:
    // new dependencies, no new channel.
    assert_eq!(r.credit_loops.channels, 14);
}

#[test]
fn forwarding_loop_is_found_with_an_example() {
    let mut n = clockwise();
    n.set("s2", "h0", 2); // s1 sends LID 1 to s2, which sends it back.
    let r = n.check();
    let p = &r.paths.reach;
    assert_eq!((p.loop_pairs, p.lids_with_loops, p.unreachable_pairs, p.reachable_pairs), (2, 1, 0, 10));
    assert_eq!(p.examples.len(), 1);
    let e = &p.examples[0];
    assert_eq!(e.kind, Some(DefectKind::Loop));
    assert_eq!((e.src.as_str(), e.dst.as_str(), e.dlid), ("h1/1", "h0/1", 1));
    assert_eq!(e.route, "h1/1 -> s1/1 -> s2/2 -> s1 again (forwarding loop)");
    assert!(r.has_defects());
    // The two switches hold each other's channel: the shortest credit loop.
    assert_eq!(cycle_links(&r), links(&[("s1/1", "s2/2", 0), ("s2/2", "s1/1", 0)]));
    let text = r.to_string();
    assert!(
        text.contains("CA routes: 12 pairs to 4 LIDs: 10 delivered, 2 in forwarding loops; the tables of 1 LID"),
        "{text}"
    );
    assert!(text.contains("the tables of 1 LID hold a forwarding loop"), "{text}");
    assert!(text.contains("\n  forwarding loop (LID 0x0001 of h0/1): h1/1 -> s1/1 -> s2/2 -> s1 again"), "{text}");
}

#[test]
fn unreachable_pairs_are_counted_by_kind() {
    let mut n = clockwise();
    let s2 = n.id("s2");
    n.t.set(s2, n.lid("h3"), NO_PATH); // h0, h1, h2 -> h3 pass s2
    n.set("s0", "h1", 4); // port 4 has no cable: h0, h3 and h2 -> h1 pass s0
    n.set("s3", "h2", 3); // h3 -> h2 comes back to h3
    let r = n.check();
    let p = &r.paths.reach;
    assert_eq!((p.pairs, p.reachable_pairs, p.unreachable_pairs), (12, 5, 7));
    assert_eq!((p.no_path_pairs, p.uncabled_pairs, p.wrong_node_pairs, p.loop_pairs), (3, 3, 1, 0));
    let ex: Vec<(Option<DefectKind>, &str)> = p.examples.iter().map(|e| (e.kind, e.route.as_str())).collect();
    assert_eq!(
        ex,
        vec![
            (Some(DefectKind::Uncabled), "h0/1 -> s0: port 4 has no cable"),
            (Some(DefectKind::WrongNode), "h3/1 -> s3/3 -> h3/1 (wrong node: it does not own LID 0x0003)"),
            (Some(DefectKind::NoPath), "h0/1 -> s0/1 -> s1/1 -> s2: no LFT entry for LID 0x0004"),
        ]
    );
    // 7 of the 12 routes, each 1/3 of a host's rate, are dropped.
    assert_close!(r.channel_load.unrouted_fraction, 7.0 / 12.0);
    assert!(r.has_defects());
    assert!(
        r.to_string().contains(
            "5 delivered, 7 unreachable (no LFT entry 3, uncabled port 3, wrong node 1), no forwarding loop\n"
        ),
        "{r}"
    );
}

#[test]
fn report_serializes_with_the_verdict() {
    let mut n = clockwise();
    n.set("s2", "h0", 2);
    let r = n.check();
    let v: toml::Table = toml::Value::try_from(&r).unwrap().try_into().unwrap();
    assert_eq!(v["has_defects"].as_bool(), Some(true));
    assert_eq!(v["has_warnings"].as_bool(), Some(false));
    let paths = v["paths"].as_table().unwrap();
    // Reachability is flattened into `paths`, next to the lengths.
    assert_eq!(paths["loop_pairs"].as_integer(), Some(2));
    assert_eq!(paths["unreachable_pairs"].as_integer(), Some(0));
    assert_eq!(paths["non_minimal_pairs"].as_integer(), Some(3));
    assert_eq!(paths["examples"][0]["kind"].as_str(), Some("loop"));
    let cycle = v["credit_loops"]["cycle"].as_array().unwrap();
    assert_eq!(cycle.len(), 2);
    assert_eq!(cycle[0]["from"].as_str(), Some("s1/1"));
    assert_eq!(v["channel_load"]["lids"].as_str(), Some("base"));
    assert_eq!(v["fabric"]["switches"].as_integer(), Some(4));
}

#[test]
fn switch_lid_problems_are_warnings() {
    let mut n = broken_turn();
    let s0 = n.id("s0");
    n.t.set(s0, n.lid("s2"), NO_PATH); // s0 and s3 (through s0) cannot reach s2
    let r = n.check();
    let s = &r.switch_paths;
    assert_eq!((s.pairs, s.reachable_pairs, s.no_path_pairs, s.destination_lids), (12, 10, 2, 4));
    assert_eq!(s.examples[0].route, "s0: no LFT entry for LID 0x0007");
    assert!(!r.has_defects());
    assert!(r.has_warnings());
    let text = r.to_string();
    assert!(text.contains("warning: switch-LID routes: 12 pairs to 4 LIDs: 10 delivered"), "{text}");
    assert!(text.ends_with("verdict: ok for data traffic (see the switch-LID warning)"), "{text}");
}

/// Two switches `a` and `b`, four hosts each, one cable between them (port 5).
fn two_switches(hosts: LinkSpec, trunk: LinkSpec) -> Net {
    let mut f = Fabric::new();
    let a = f.add_switch("a", 5).unwrap();
    let b = f.add_switch("b", 5).unwrap();
    f.connect(a, 5, b, 5, trunk).unwrap();
    for i in 0..8u32 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(if i < 4 { a } else { b }, i % 4 + 1, h, 1, hosts).unwrap();
    }
    let mut n = Net::new(f, 0);
    for i in 0..8u8 {
        let (near, far) = if i < 4 { ("a", "b") } else { ("b", "a") };
        n.set(near, &format!("h{i}"), i % 4 + 1);
        n.set(far, &format!("h{i}"), 5);
    }
    n.set("a", "a", 0);
    n.set("a", "b", 5);
    n.set("b", "b", 0);
    n.set("b", "a", 5);
    n
}

#[test]
fn two_switch_channel_loads_are_exact() {
    // Each host sends 1/7 of its rate to each of the 7 others; the trunk carries
    // 4 sources x 4 destinations x 1/7 = 16/7 each way; every host link carries 7/7.
    let n = two_switches(LinkSpec::default(), LinkSpec::default());
    let r = n.check();
    let c = &r.channel_load;
    assert_close!(c.max_load, 16.0 / 7.0);
    assert_eq!(c.max_link.as_deref(), Some("a/5 -> b/5"));
    // 18 directed links: 16 host links at 1, 2 trunk directions at 16/7.
    assert_close!(c.mean_load, (16.0 + 32.0 / 7.0) / 18.0);
    assert_close!(c.mean_switch_link_load, 16.0 / 7.0);
    assert_close!(c.throughput_bound, 7.0 / 16.0);
    let loads = n.loads();
    assert_close!(n.load(&loads, "b", 5), 16.0 / 7.0);
    for i in 0..8 {
        assert_close!(n.load(&loads, &format!("h{i}"), 1), 1.0);
        assert_close!(n.load(&loads, if i < 4 { "a" } else { "b" }, i % 4 + 1), 1.0);
    }
    // 1 switch hop inside a switch (24 pairs), 2 across (32 pairs).
    assert_eq!(r.paths.hop_histogram, vec![0, 24, 32]);
    assert!(!r.has_defects());
}

#[test]
fn a_12x_trunk_carries_three_times_a_4x_one() {
    let x4 = LinkSpec::new(LinkWidth::X4, LinkSpeed::Qdr);
    let x12 = LinkSpec::new(LinkWidth::X12, LinkSpeed::Qdr);
    let n = two_switches(x4, x12);
    let loads = n.loads();
    assert_close!(n.load(&loads, "a", 5), 16.0 / 21.0);
    assert_close!(n.load(&loads, "b", 5), 16.0 / 21.0);
    assert_close!(n.load(&loads, "h0", 1), 1.0);
    assert_close!(loads.max().unwrap().1, 1.0);
    assert_close!(loads.throughput_bound(), 1.0);
    // Faster hosts on the same 4x trunk: the trunk load grows with their rate.
    let n = two_switches(x12, x4);
    assert_close!(n.load(&n.loads(), "a", 5), 3.0 * 16.0 / 7.0);
}

#[test]
fn traffic_matrix_loads() {
    let n = two_switches(LinkSpec::default(), LinkSpec::default());
    let port = |name: &str| LinkEnd { node: n.id(name), port: 1 };
    let flows = [
        Flow { src: port("h0"), dlid: n.lid("h4"), rate: 0.5 },
        Flow { src: port("h1"), dlid: n.lid("h4"), rate: 0.5 },
        Flow { src: port("h5"), dlid: n.lid("h0"), rate: 0.25 },
        Flow { src: port("h2"), dlid: n.lid("h2"), rate: 1.0 }, // loopback: no link
    ];
    let l = traffic_loads(&n.f, &n.lids, &n.t, &flows).unwrap();
    assert_close!(n.load(&l, "a", 5), 1.0);
    assert_close!(n.load(&l, "b", 5), 0.25);
    assert_close!(n.load(&l, "b", 1), 1.0); // b -> h4
    assert_close!(n.load(&l, "h0", 1), 0.5);
    assert_close!(n.load(&l, "a", 1), 0.25); // a -> h0
    assert_eq!(n.load(&l, "h2", 1), 0.0);
    assert_close!(l.offered, 1.25);
    assert_eq!(l.unrouted, 0.0);
    assert_close!(l.max_scale(), 1.0);

    let bad = |f: Flow| traffic_loads(&n.f, &n.lids, &n.t, &[flows[0], f]).unwrap_err().to_string();
    let e = bad(Flow { rate: -0.5, ..flows[0] });
    assert!(e.contains("traffic[1]") && e.contains("rate -0.5"), "{e}");
    let e = bad(Flow { dlid: n.lid("a"), ..flows[0] });
    assert!(e.contains("destination LID 0x0009 is not the LID of a CA port"), "{e}");
    let e = bad(Flow { src: LinkEnd { node: n.id("a"), port: 1 }, ..flows[0] });
    assert!(e.contains("is not a CA port with a LID"), "{e}");
}

/// Two switches with two cables between them (ports 3 and 4), two hosts each,
/// LMC 1: the base LID of a remote host goes over port 3, base + 1 over port 4.
fn two_paths() -> Net {
    let mut f = Fabric::new();
    let a = f.add_switch("a", 4).unwrap();
    let b = f.add_switch("b", 4).unwrap();
    f.connect(a, 3, b, 3, LinkSpec::default()).unwrap();
    f.connect(a, 4, b, 4, LinkSpec::default()).unwrap();
    for i in 0..4u32 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(if i < 2 { a } else { b }, i % 2 + 1, h, 1, LinkSpec::default()).unwrap();
    }
    let mut n = Net::new(f, 1);
    for i in 0..4u8 {
        let (near, far) = if i < 2 { ("a", "b") } else { ("b", "a") };
        let base = n.lid(&format!("h{i}"));
        let (nid, fid) = (n.id(near), n.id(far));
        for k in 0..2 {
            n.t.set(nid, base + k, i % 2 + 1);
            n.t.set(fid, base + k, 3 + k as u8);
        }
    }
    n.set("a", "a", 0);
    n.set("a", "b", 3);
    n.set("b", "b", 0);
    n.set("b", "a", 3);
    n
}

#[test]
fn lmc_traffic_on_base_lids_or_spread() {
    let n = two_paths();
    // 2 sources x 2 destinations x 1/3 cross each way.
    let base = uniform_loads(&n.f, &n.lids, &n.t, LoadLids::Base).unwrap();
    assert_close!(n.load(&base, "a", 3), 4.0 / 3.0);
    assert_eq!(n.load(&base, "a", 4), 0.0);
    let spread = uniform_loads(&n.f, &n.lids, &n.t, LoadLids::Spread).unwrap();
    assert_close!(n.load(&spread, "a", 3), 2.0 / 3.0);
    assert_close!(n.load(&spread, "b", 4), 2.0 / 3.0);
    assert_close!(n.load(&spread, "h3", 1), 1.0);
    let opts = AnalysisOptions { load_lids: LoadLids::Spread, ..Default::default() };
    let r = n.check_with(&SlView::default(), &opts);
    assert_close!(r.channel_load.max_load, 1.0);
    assert_eq!((r.fabric.ca_lids, r.fabric.lmc), (8, 1));
}

#[test]
fn lid_selection() {
    let n = two_paths();
    let pairs = |sel: LidSelection| {
        let opts = AnalysisOptions { dest_lids: sel, ..Default::default() };
        analyze(&n.f, &n.lids, &n.t, &SlView::default(), &opts).map(|r| r.paths.reach.pairs)
    };
    assert_eq!(pairs(LidSelection::All).unwrap(), 8 * 3);
    assert_eq!(pairs(LidSelection::Base).unwrap(), 4 * 3);
    assert_eq!(pairs(LidSelection::Offsets(vec![1])).unwrap(), 4 * 3);
    assert_eq!(pairs(LidSelection::Lids(vec![n.lid("h0")])).unwrap(), 3);
    let e = pairs(LidSelection::Offsets(vec![2])).unwrap_err().to_string();
    assert!(e.contains("LID offset 2 is beyond the 2 LIDs (2^LMC) of h0 port 1"), "{e}");
    let e = pairs(LidSelection::Lids(vec![n.lid("b")])).unwrap_err().to_string();
    assert!(e.contains("is not the LID of a CA port"), "{e}");
}

#[test]
fn hosts_cabled_back_to_back() {
    let mut f = Fabric::new();
    let a = f.add_hca("a", 1).unwrap();
    let b = f.add_hca("b", 1).unwrap();
    f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
    let n = Net::new(f, 0);
    let r = n.check();
    assert_eq!((r.paths.reach.pairs, r.paths.reach.reachable_pairs), (2, 2));
    assert_eq!(r.paths.hop_histogram, vec![2]);
    assert_close!(r.paths.mean_stretch, 1.0);
    assert_close!(r.channel_load.max_load, 1.0);
    assert_eq!((r.credit_loops.channels, r.credit_loops.dependencies), (2, 0));
    assert!(!r.has_defects() && !r.has_warnings());
}

/// SL 1 for the routes that cross the s3 -> s0 link of the clockwise ring.
fn crossing_sl(src: LinkEnd, dlid: Lid) -> u8 {
    let from = src.node.0 - 4; // hosts are nodes 4..8, LIDs 1..5
    let to = dlid as u32 - 1;
    u8::from(to < from)
}

#[test]
fn dateline_sl2vl_breaks_the_ring_cycle() {
    let n = clockwise();
    // SL 1 packets move to VL1 where they take the dateline link (s3 port 1)
    // and stay there after it: on s0, and on s1 when they come from s0.
    let dateline = |node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8| -> u8 {
        let after = match node.0 {
            3 => out_port == 1,
            0 => true,
            1 => in_port == 2,
            _ => false,
        };
        u8::from(sl == 1 && after)
    };
    let view = SlView::with_tables(&dateline).with_path_sl(PathSl::PerPair(&crossing_sl));
    let r = n.check_with(&view, &AnalysisOptions::default());
    assert!(!r.credit_loops.has_cycle(), "{r}");
    assert_eq!(r.credit_loops.vls_used, vec![0, 1]);
    assert!(!r.has_defects(), "{r}");
}

#[test]
fn sl_per_route_without_a_vl_change_keeps_a_cycle_on_vl1() {
    // SL i -> VL i: a crossing route stays on VL1 the whole way, and the four
    // three-link crossing routes still close a loop among themselves.
    let view = SlView::modulo(2).unwrap().with_path_sl(PathSl::PerPair(&crossing_sl));
    let r = clockwise().check_with(&view, &AnalysisOptions::default());
    assert_eq!(r.credit_loops.cyclic_sccs, 1);
    assert!(cycle_links(&r).iter().all(|c| c.2 == 1), "{r}");
}

#[test]
fn two_vls_with_everything_on_sl0_still_has_the_cycle() {
    let r = clockwise().check_with(&SlView::modulo(2).unwrap(), &AnalysisOptions::default());
    assert_eq!(r.credit_loops.vls_used, vec![0]);
    assert_eq!(r.credit_loops.cycle.as_ref().map(Vec::len), Some(4));
    assert!(r.fabric.sl_config.contains("SL i -> VL i mod 2, SL 0 on every route"));
}

#[test]
fn routes_mapped_to_vl15_are_defects() {
    let drop_at_s2 = |node: NodeId, _i: PortNum, out: PortNum, _sl: u8| if node.0 == 2 && out == 1 { 15 } else { 0 };
    let r = broken_turn().check_with(&SlView::with_tables(&drop_at_s2), &AnalysisOptions::default());
    // Turns into s2 port 1: from the host (port 3) and from s1 (port 2).
    assert_eq!(r.credit_loops.vl15_turns, 2);
    let ex = r.credit_loops.vl15_example.as_deref().unwrap();
    assert!(ex.starts_with("SL 0 maps to VL15 at s2 port "), "{ex}");
    assert!(r.has_defects());
}

#[test]
fn bad_inputs_are_errors() {
    let n = clockwise();
    assert!(SlView::modulo(0).is_err());
    let sl16 = |_: LinkEnd, _: Lid| 16u8;
    let view = SlView::default().with_path_sl(PathSl::PerPair(&sl16));
    let e = analyze(&n.f, &n.lids, &n.t, &view, &AnalysisOptions::default()).unwrap_err().to_string();
    assert!(e.contains("SL 16"), "{e}");
    // Tables of another fabric.
    let other = two_switches(LinkSpec::default(), LinkSpec::default());
    let e = analyze(&n.f, &n.lids, &other.t, &SlView::default(), &AnalysisOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no table for switch 's2'"), "{e}");
}

// ---------------------------------------------------------------- generated fabrics

/// Shortest-path tables: each switch sends a LID out of one of its ports on a
/// shortest path to the LID's switch, the `lid mod n`-th of the `n` such ports
/// (so a fat tree spreads destinations over its up links).
fn route_minimal(f: &Fabric, lids: &LidMap) -> ForwardingTables {
    let mut t = ForwardingTables::new(f, lids.top_lid());
    let sws: Vec<NodeId> = f.switches().collect();
    let mut by_target: BTreeMap<NodeId, Vec<(Lid, PortNum)>> = BTreeMap::new();
    for p in lids.ports() {
        let (sw, port) = if f.node(p.end.node).kind.is_switch() {
            (p.end.node, 0)
        } else {
            match f.peer(p.end.node, p.end.port) {
                Some(peer) if f.node(peer.node).kind.is_switch() => (peer.node, peer.port),
                _ => continue,
            }
        };
        by_target.entry(sw).or_default().extend(p.lids().map(|l| (l, port)));
    }
    for (target, dests) in by_target {
        let mut dist = vec![u32::MAX; f.num_nodes()];
        let mut queue = std::collections::VecDeque::from([target]);
        dist[target.index()] = 0;
        while let Some(u) = queue.pop_front() {
            for (_, peer) in f.switch_neighbors(u) {
                if dist[peer.node.index()] == u32::MAX {
                    dist[peer.node.index()] = dist[u.index()] + 1;
                    queue.push_back(peer.node);
                }
            }
        }
        for &s in &sws {
            if s == target {
                for &(l, port) in &dests {
                    t.set(s, l, port);
                }
                continue;
            }
            let down: Vec<PortNum> = f
                .switch_neighbors(s)
                .filter(|(_, peer)| dist[peer.node.index()].wrapping_add(1) == dist[s.index()])
                .map(|(p, _)| p)
                .collect();
            if !down.is_empty() {
                for &(l, _) in &dests {
                    t.set(s, l, down[l as usize % down.len()]);
                }
            }
        }
    }
    t
}

#[test]
fn two_level_fat_tree_loads_are_balanced() {
    // 4 leaves x 4 hosts, 4 spines, one cable from every leaf to every spine.
    // With destination-mod-4 up links each leaf-spine link carries, either
    // way, 4 hosts x 3 remote destinations x 1/15 = 0.8.
    let mut f = Fabric::new();
    let leaves: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("leaf{i}"), 8).unwrap()).collect();
    let spines: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("spine{i}"), 4).unwrap()).collect();
    for (l, &leaf) in leaves.iter().enumerate() {
        for (s, &spine) in spines.iter().enumerate() {
            f.connect(leaf, 5 + s as u32, spine, 1 + l as u32, LinkSpec::default()).unwrap();
        }
        for h in 0..4 {
            let host = f.add_hca(format!("h{}", 4 * l + h), 1).unwrap();
            f.connect(leaf, 1 + h as u32, host, 1, LinkSpec::default()).unwrap();
        }
    }
    let lids = LidMap::assign(&f, 0).unwrap();
    let t = route_minimal(&f, &lids);
    let r = analyze(&f, &lids, &t, &SlView::default(), &AnalysisOptions::default()).unwrap();
    assert!(!r.has_defects() && !r.has_warnings(), "{r}");
    assert_eq!(r.paths.non_minimal_pairs, 0);
    assert_eq!(r.paths.hop_histogram, vec![0, 16 * 3, 0, 16 * 12]);
    assert_close!(r.channel_load.mean_switch_link_load, 0.8);
    let loads = uniform_loads(&f, &lids, &t, LoadLids::Base).unwrap();
    for (i, &l) in loads.loads.iter().enumerate() {
        let dl = DirLink(i as u32);
        let sw = |e: LinkEnd| f.node(e.node).kind.is_switch();
        let want = if sw(dl.from(&f)) && sw(dl.to(&f)) { 0.8 } else { 1.0 };
        assert_close!(l, want);
    }
}

/// The 1,944-host, 270-switch fat tree of ib_flit_sim's `is4_3l_1944n`: 108
/// 36-port leaves (18 hosts, 18 up links), and three 648-port directors, each
/// 36 line ASICs (18 external ports, one cable to each of 18 spine ASICs).
/// Leaf `i` up link `k` goes to director `k / 6`, external port `6i + k % 6`.
fn fat_tree_1944() -> Fabric {
    let mut f = Fabric::new();
    let leaves: Vec<NodeId> = (0..108).map(|i| f.add_switch(format!("SW-2-{i}"), 36).unwrap()).collect();
    let mut lines = Vec::new();
    for c in 0..3 {
        let line: Vec<NodeId> = (0..36).map(|i| f.add_switch(format!("SWS_{c}_L{i}"), 36).unwrap()).collect();
        let spine: Vec<NodeId> = (0..18).map(|i| f.add_switch(format!("SWS_{c}_S{i}"), 36).unwrap()).collect();
        for (a, &l) in line.iter().enumerate() {
            for (m, &s) in spine.iter().enumerate() {
                f.connect(l, 19 + m as u32, s, 1 + a as u32, LinkSpec::default()).unwrap();
            }
        }
        lines.push(line);
    }
    for (i, &leaf) in leaves.iter().enumerate() {
        for k in 0..18 {
            let e = 6 * i + k % 6;
            f.connect(leaf, 19 + k as u32, lines[k / 6][e / 18], 1 + (e % 18) as u32, LinkSpec::default()).unwrap();
        }
    }
    for h in 0..1944u32 {
        let host = f.add_hca(format!("H-{}", h + 1), 1).unwrap();
        f.connect(leaves[(h / 18) as usize], 1 + h % 18, host, 1, LinkSpec::default()).unwrap();
    }
    f
}

#[test]
fn fat_tree_1944_is_clean() {
    let f = fat_tree_1944();
    assert_eq!((f.switches().count(), f.cas().count()), (270, 1944));
    let lids = LidMap::assign(&f, 0).unwrap();
    let t = route_minimal(&f, &lids);
    let start = std::time::Instant::now();
    let r = analyze(&f, &lids, &t, &SlView::default(), &AnalysisOptions::default()).unwrap();
    // For measuring (`cargo test --release -- --nocapture fat_tree`), never asserted.
    eprintln!("analysis of the 1944-host fat tree: {:.3} s\n{r}", start.elapsed().as_secs_f64());
    assert!(!r.has_defects() && !r.has_warnings(), "{r}");
    let p = &r.paths;
    assert_eq!(p.reach.pairs, 1944 * 1943);
    assert_eq!((p.min_hops, p.max_hops, p.non_minimal_pairs), (1, 5, 0));
    // Same leaf: 17 per host; across leaves, through a line ASIC of a director
    // both leaves reach directly (3 hops) or through a spine (5 hops).
    assert_eq!(p.hop_histogram[1], 1944 * 17);
    assert_eq!(p.hop_histogram.iter().sum::<u64>(), 1944 * 1943);
    assert_eq!(r.switch_paths.pairs, 270 * 269);
    assert!(r.credit_loops.channels > 0 && !r.credit_loops.has_cycle());
    assert!(r.channel_load.max_load >= 1.0 && r.channel_load.throughput_bound <= 1.0);
}

// ---------------------------------------------------------------- differential

/// A random small fabric (some CA-to-CA cables, some multi-port HCAs, mixed
/// widths) with random tables: half shortest-path, half noise with NO_PATH,
/// uncabled ports, port 0 and loops.
fn random_subnet(seed: u64) -> (Fabric, LidMap, ForwardingTables, bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = Fabric::new();
    let nsw = rng.random_range(1..6);
    let sws: Vec<NodeId> = (0..nsw).map(|i| f.add_switch(format!("s{i}"), 6).unwrap()).collect();
    let widths = [LinkWidth::X1, LinkWidth::X4, LinkWidth::X12];
    let spec = |rng: &mut ChaCha8Rng| LinkSpec::new(widths[rng.random_range(0..3)], LinkSpeed::Sdr);
    for i in 1..nsw {
        let j = rng.random_range(0..i);
        let (a, b) = (sws[i], sws[j]);
        let free = |f: &Fabric, n: NodeId| (1..=6u32).find(|&p| f.link_at(n, p as u8).is_none());
        if let (Some(pa), Some(pb)) = (free(&f, a), free(&f, b)) {
            let s = spec(&mut rng);
            f.connect(a, pa, b, pb, s).unwrap();
        }
    }
    for _ in 0..rng.random_range(0..4) {
        let (a, b) = (sws[rng.random_range(0..nsw)], sws[rng.random_range(0..nsw)]);
        let free =
            |f: &Fabric, n: NodeId, skip: u32| (1..=6u32).find(|&p| p != skip && f.link_at(n, p as u8).is_none());
        if let Some(pa) = free(&f, a, 0) {
            if let Some(pb) = free(&f, b, if a == b { pa } else { 0 }) {
                let s = spec(&mut rng);
                f.connect(a, pa, b, pb, s).unwrap();
            }
        }
    }
    for h in 0..rng.random_range(2..9) {
        let ports = rng.random_range(1..3u8);
        let host = f.add_hca(format!("h{h}"), ports).unwrap();
        for p in 1..=ports {
            if rng.random_bool(0.15) {
                // Cable straight to an earlier host with a free port, if any.
                let peer = f.cas().filter(|&c| c != host).find(|&c| f.link_at(c, 1).is_none());
                if let Some(c) = peer {
                    let s = spec(&mut rng);
                    f.connect(host, p as u32, c, 1, s).unwrap();
                    continue;
                }
            }
            let s = sws[rng.random_range(0..nsw)];
            if let Some(sp) = (1..=6u32).find(|&q| f.link_at(s, q as u8).is_none()) {
                let sp_spec = spec(&mut rng);
                f.connect(s, sp, host, p as u32, sp_spec).unwrap();
            }
        }
    }
    let lids = LidMap::assign(&f, rng.random_range(0..2)).unwrap();
    let mut t = route_minimal(&f, &lids);
    let noisy = rng.random_bool(0.5);
    if noisy {
        for &s in &sws {
            for l in 1..=lids.top_lid() {
                if rng.random_bool(0.3) {
                    let p = match rng.random_range(0..10) {
                        0 => NO_PATH,
                        1 => 0,
                        _ => rng.random_range(1..=6),
                    };
                    t.set(s, l, p);
                }
            }
        }
    }
    (f, lids, t, noisy)
}

/// The same figures, computed pair by pair with [`trace_route`] and a BFS per pair.
struct Naive {
    reach: Reachability,
    hist: Vec<u64>,
    non_min: u64,
    loads: Vec<f64>,
    channels: std::collections::BTreeSet<u32>,
    deps: std::collections::BTreeSet<(u32, u32)>,
}

fn naive(f: &Fabric, lids: &LidMap, t: &ForwardingTables) -> Naive {
    let mut channels = std::collections::BTreeSet::new();
    let mut deps = std::collections::BTreeSet::new();
    let eps: Vec<_> = lids.ca_ports(f).copied().collect();
    let mut reach = Reachability::default();
    let mut hist = Vec::new();
    let mut non_min = 0;
    let mut bps = vec![0.0; DirLink::count(f)];
    let n = eps.len();
    let attach = |e: LinkEnd| f.peer(e.node, e.port).filter(|p| f.node(p.node).kind.is_switch()).map(|p| p.node);
    for src in &eps {
        for dst in &eps {
            if src.end == dst.end {
                continue;
            }
            for dlid in dst.lids() {
                let r = trace_route(f, lids, t, src.end, dlid);
                let path: Vec<u32> =
                    r.hops.iter().filter_map(|h| DirLink::out_of(f, h.node, h.port)).map(|(d, _)| d.0).collect();
                channels.extend(path.iter().copied());
                deps.extend(path.windows(2).map(|w| (w[0], w[1])));
                reach.pairs += 1;
                match r.end {
                    RouteEnd::Delivered(_) => reach.reachable_pairs += 1,
                    RouteEnd::NoPath(_) => reach.no_path_pairs += 1,
                    RouteEnd::Uncabled(_) => reach.uncabled_pairs += 1,
                    RouteEnd::WrongNode(_) => reach.wrong_node_pairs += 1,
                    RouteEnd::Loop(_) => reach.loop_pairs += 1,
                }
                let Some(h) = r.switch_hops(f) else { continue };
                if hist.len() <= h {
                    hist.resize(h + 1, 0);
                }
                hist[h] += 1;
                let min = match (attach(src.end), attach(dst.end)) {
                    (Some(a), Some(b)) => {
                        let mut dist = vec![usize::MAX; f.num_nodes()];
                        let mut q = std::collections::VecDeque::from([a]);
                        dist[a.index()] = 0;
                        while let Some(u) = q.pop_front() {
                            for (_, p) in f.switch_neighbors(u) {
                                if dist[p.node.index()] == usize::MAX {
                                    dist[p.node.index()] = dist[u.index()] + 1;
                                    q.push_back(p.node);
                                }
                            }
                        }
                        dist[b.index()] + 1
                    }
                    _ => 0,
                };
                non_min += u64::from(h > min);
                if dlid == dst.base {
                    let rate = f.link(f.link_at(src.end.node, src.end.port).unwrap()).spec.data_rate_bps();
                    for hop in &r.hops {
                        let (dl, _) = DirLink::out_of(f, hop.node, hop.port).unwrap();
                        bps[dl.0 as usize] += rate / (n - 1) as f64;
                    }
                }
            }
        }
    }
    reach.unreachable_pairs = reach.no_path_pairs + reach.uncabled_pairs + reach.wrong_node_pairs;
    let loads =
        bps.iter().enumerate().map(|(i, b)| b / f.link(DirLink(i as u32).link()).spec.data_rate_bps()).collect();
    Naive { reach, hist, non_min, loads, channels, deps }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn trees_agree_with_tracing_every_pair(seed in any::<u64>()) {
        let (f, lids, t, noisy) = random_subnet(seed);
        let r = analyze(&f, &lids, &t, &SlView::default(), &AnalysisOptions::default()).unwrap();
        let Naive { reach, hist, non_min, loads, channels, deps } = naive(&f, &lids, &t);
        let p = &r.paths.reach;
        prop_assert_eq!(
            (p.pairs, p.reachable_pairs, p.no_path_pairs, p.uncabled_pairs, p.wrong_node_pairs, p.loop_pairs),
            (reach.pairs, reach.reachable_pairs, reach.no_path_pairs, reach.uncabled_pairs, reach.wrong_node_pairs, reach.loop_pairs)
        );
        prop_assert_eq!(p.unreachable_pairs, reach.unreachable_pairs);
        prop_assert_eq!(&r.paths.hop_histogram, &hist);
        prop_assert_eq!(r.paths.non_minimal_pairs, non_min);
        let mine = uniform_loads(&f, &lids, &t, LoadLids::Base).unwrap();
        for (i, (a, b)) in mine.loads.iter().zip(&loads).enumerate() {
            prop_assert!((a - b).abs() <= 1e-9 * b.max(1.0), "link {}: {} vs {}", i, a, b);
        }
        // Where no route loops, tracing stops where the tree walk does, so the
        // dependency graphs agree exactly (a loop is followed once more by the walk).
        if p.loop_pairs == 0 {
            prop_assert_eq!(r.credit_loops.channels, channels.len() as u64);
            prop_assert_eq!(r.credit_loops.dependencies, deps.len() as u64);
        }
        if !noisy {
            // (NO_PATH remains for hosts cabled straight to another host: no switch reaches them.)
            prop_assert_eq!((p.uncabled_pairs, p.loop_pairs, p.lids_with_loops), (0, 0, 0));
            prop_assert_eq!(r.paths.non_minimal_pairs, 0);
            prop_assert!(r.switch_paths.is_clean());
        }
    }
}

#[test]
fn a_loop_closed_only_through_vl_changes_is_found() {
    // The clockwise ring where each switch sends on VL (its index mod 2):
    // s0 -> s1 on VL0, s1 -> s2 on VL1, s2 -> s3 on VL0, s3 -> s0 on VL1.
    // Every dependency of the loop changes VL, and the loop is real: a
    // buffer on VL0 waits for one on VL1, which waits for one on VL0, …
    let alternate = |node: NodeId, _in: PortNum, out_port: PortNum, _sl: u8| -> u8 { u8::from(out_port == 1 && node.0 % 2 == 1) };
    let r = clockwise().check_with(&SlView::with_tables(&alternate), &AnalysisOptions::default());
    assert!(r.credit_loops.has_cycle(), "{r}");
    assert_eq!(r.credit_loops.vls_used, vec![0, 1]);
    assert_eq!(
        cycle_links(&r),
        links(&[("s0/1", "s1/2", 0), ("s1/1", "s2/2", 1), ("s2/1", "s3/2", 0), ("s3/1", "s0/2", 1)])
    );
}

/// One 4-port switch with h0 and h1, h2 with no cable (so no LID: not a
/// traffic end), and h3 cabled back to back with h4. LIDs: h0, h1, h3, h4 =
/// 1..4, the switch 5.
fn islands() -> Net {
    let mut f = Fabric::new();
    let s = f.add_switch("s", 4).unwrap();
    let h: Vec<NodeId> = (0..5).map(|i| f.add_hca(format!("h{i}"), 1).unwrap()).collect();
    f.connect(s, 1, h[0], 1, LinkSpec::default()).unwrap();
    f.connect(s, 2, h[1], 1, LinkSpec::default()).unwrap();
    f.connect(h[3], 1, h[4], 1, LinkSpec::default()).unwrap();
    let mut n = Net::new(f, 0);
    n.set("s", "h0", 1);
    n.set("s", "h1", 2);
    n
}

#[test]
fn traffic_that_cannot_reach_its_destination_is_counted_unrouted() {
    // Uniform: 4 CA ports with LIDs, each sends 1/3 of its rate to each
    // other. Delivered: h0 <-> h1 and h3 <-> h4, 4 of the 12 shares. The 8
    // others have no route (the switch has no entry for h3 or h4; h3 and h4
    // reach only each other): 8/3 host rates of the 4 offered.
    let n = islands();
    let l = n.loads();
    assert_close!(l.offered, 4.0);
    assert_close!(l.unrouted, 8.0 / 3.0);
    assert_close!(n.load(&l, "h3", 1), 1.0 / 3.0);
    assert_close!(n.load(&l, "h4", 1), 1.0 / 3.0);
    assert_close!(n.load(&l, "h0", 1), 1.0 / 3.0);
    assert_close!(n.load(&l, "s", 2), 1.0 / 3.0);
    // A traffic matrix: the back-to-back pair's link carries its flow, and
    // flows with no way to their destination are unrouted, by rate.
    let port = |name: &str| LinkEnd { node: n.id(name), port: 1 };
    let flows = [
        Flow { src: port("h3"), dlid: n.lid("h4"), rate: 0.5 },
        Flow { src: port("h4"), dlid: n.lid("h0"), rate: 0.25 },
        Flow { src: port("h0"), dlid: n.lid("h3"), rate: 0.125 },
        Flow { src: port("h1"), dlid: n.lid("h0"), rate: 0.0625 },
    ];
    let t = traffic_loads(&n.f, &n.lids, &n.t, &flows).unwrap();
    assert_close!(n.load(&t, "h3", 1), 0.5);
    assert_close!(n.load(&t, "s", 1), 0.0625);
    assert_close!(t.offered, 0.9375);
    assert_close!(t.unrouted, 0.375);
    // Only the kinds that occur are named.
    let text = n.check().to_string();
    assert!(
        text.contains("CA routes: 12 pairs to 4 LIDs: 4 delivered, 8 unreachable (no LFT entry 4, wrong node 4), no forwarding loop\n"),
        "{text}"
    );
}

#[test]
fn a_loop_no_ca_route_enters_is_still_a_defect() {
    // Switch a has h0 and h1; b and c, with no hosts, hang off a and are
    // cabled to each other. b and c send h0's LID to each other, but no CA
    // route passes them: no CA pair meets the loop, yet the tables hold it
    // (traffic from b or c to h0 would circle).
    let mut f = Fabric::new();
    let a = f.add_switch("a", 4).unwrap();
    let b = f.add_switch("b", 4).unwrap();
    let c = f.add_switch("c", 4).unwrap();
    for i in 0..2u32 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(a, i + 1, h, 1, LinkSpec::default()).unwrap();
    }
    f.connect(a, 3, b, 1, LinkSpec::default()).unwrap();
    f.connect(a, 4, c, 1, LinkSpec::default()).unwrap();
    f.connect(b, 2, c, 2, LinkSpec::default()).unwrap();
    let mut n = Net::new(f, 0);
    n.set("a", "h0", 1);
    n.set("a", "h1", 2);
    n.set("b", "h0", 2);
    n.set("c", "h0", 2);
    n.set("b", "h1", 1);
    n.set("c", "h1", 1);
    let r = n.check();
    let p = &r.paths.reach;
    assert_eq!((p.pairs, p.reachable_pairs, p.loop_pairs, p.lids_with_loops, p.unreachable_pairs), (2, 2, 0, 1, 0));
    assert!(r.has_defects());
    // A clean routing's report names no unreachable pairs.
    let clean = clockwise().check();
    let text = clean.to_string();
    assert!(text.contains("CA routes: 12 pairs to 4 LIDs: all delivered, no forwarding loop\n"), "{text}");
}

#[test]
fn the_busiest_link_is_the_first_of_those_within_rounding() {
    // Loads that differ by up to one part in 10^9 (summation order) name the
    // first such link; a load beyond that names its own.
    let at = |loads: Vec<f64>| ChannelLoads { loads, offered: 1.0, unrouted: 0.0 }.max();
    let b = 0.5;
    assert_eq!(at(vec![0.0, b, 0.25, b * (1.0 + 1e-9)]), Some((DirLink(1), b)));
    assert_eq!(at(vec![0.0, b, 0.25, b * (1.0 + 3e-9)]), Some((DirLink(3), b * (1.0 + 3e-9))));
    assert_eq!(at(vec![0.0, 0.0]), None);
}

/// `k` 3-port switches in a ring (port 1 to the next one's port 2, a host on
/// port 3), every route clockwise: a credit loop of `k` channels.
fn clockwise_ring(k: u32) -> Net {
    let mut f = Fabric::new();
    let s: Vec<NodeId> = (0..k).map(|i| f.add_switch(format!("s{i}"), 3).unwrap()).collect();
    for i in 0..k as usize {
        f.connect(s[i], 1, s[(i + 1) % k as usize], 2, LinkSpec::default()).unwrap();
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(s[i], 3, h, 1, LinkSpec::default()).unwrap();
    }
    let mut n = Net::new(f, 0);
    for i in 0..k {
        for j in 0..k {
            n.set(&format!("s{i}"), &format!("h{j}"), if i == j { 3 } else { 1 });
        }
    }
    n
}

#[test]
fn a_long_cycle_is_listed_up_to_24_channels() {
    // 24 channels are all listed; of 25, 24 and a line for the one left out.
    for (k, more) in [(24, None), (25, Some("    ... 1 more\n"))] {
        let text = clockwise_ring(k).check().to_string();
        assert!(text.contains(&format!("  cycle of {k} channels, each waiting on the next:\n")), "{text}");
        assert_eq!(text.matches(" VL0 (routes to LID ").count(), 24, "{text}");
        assert_eq!(text.contains("more\n"), more.is_some(), "{text}");
        if let Some(m) = more {
            assert!(text.contains(m), "{text}");
        }
    }
}

#[test]
fn the_subnet_managers_programmed_sl2vl_tables_are_what_the_check_reads() {
    // OpenSM options mapping SL 0 to VL 1 on every port, with 2 VLs: the
    // clockwise ring's cycle is then on VL 1, the only VL used.
    let conf = "qos TRUE\nqos_max_vls 2\nqos_sl2vl 1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0\n";
    let n = clockwise();
    let (sl2vl, _) = crate::qos::QosConfig::parse_opensm_conf(conf, None).unwrap().apply(&n.f);
    let r = n.check_with(&SlView::with_tables(&sl2vl), &AnalysisOptions::default());
    assert_eq!(r.credit_loops.vls_used, vec![1]);
    assert!(cycle_links(&r).iter().all(|c| c.2 == 1), "{r}");
}

#[test]
fn a_route_to_a_switch_counts_that_switch_as_a_hop() {
    // h0 -> s1: through s0, delivered at s1's port 0: 2 switches, as h0 -> h1.
    let n = clockwise();
    let h0 = LinkEnd { node: n.id("h0"), port: 1 };
    let to_switch = trace_route(&n.f, &n.lids, &n.t, h0, n.lid("s1"));
    assert_eq!(to_switch.describe(&n.f), "h0/1 -> s0/1 -> s1");
    assert_eq!(to_switch.switch_hops(&n.f), Some(2));
    assert_eq!(trace_route(&n.f, &n.lids, &n.t, h0, n.lid("h1")).switch_hops(&n.f), Some(2));
}
