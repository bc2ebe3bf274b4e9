//! The channel dependency graph on a hand-built ring where the VL depends on
//! the output port, so that dependencies of one channel differ only in
//! (port, VL), and switches' own routes run on a VL other than 0.

use ibnetsim_fabric::{Fabric, LinkSpec, NodeId, PortNum};
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, AnalysisReport, SlView};
use ibnetsim_sm::{ForwardingTables, LidMap};

/// Four 4-port switches in a ring, port 1 to the next switch's port 2, a host
/// on port 3; every route goes clockwise. Nodes s0..s3 are 0..3, h0..h3 4..7.
fn clockwise_ring() -> (Fabric, LidMap, ForwardingTables) {
    let mut f = Fabric::new();
    let s: Vec<NodeId> = (0..4).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
    let h: Vec<NodeId> = (0..4).map(|i| f.add_hca(format!("h{i}"), 1).unwrap()).collect();
    for i in 0..4 {
        f.connect(s[i], 1, s[(i + 1) % 4], 2, LinkSpec::default()).unwrap();
        f.connect(s[i], 3, h[i], 1, LinkSpec::default()).unwrap();
    }
    let lids = LidMap::assign(&f, 0).unwrap();
    let mut t = ForwardingTables::new(&f, lids.top_lid());
    for i in 0..4 {
        for j in 0..4 {
            let hl = lids.of_port(h[j], 1).unwrap().base;
            let sl = lids.of_port(s[j], 0).unwrap().base;
            t.set(s[i], hl, if i == j { 3 } else { 1 });
            t.set(s[i], sl, if i == j { 0 } else { 1 });
        }
    }
    (f, lids, t)
}

/// Port 1 (a host's port, or a switch's clockwise port) sends on VL2, every
/// other port on VL0. Into a switch from the ring, routes leave on (port 1,
/// VL2) or (port 3, VL0): two dependencies of one channel.
fn vl_by_port(_node: NodeId, _in_port: PortNum, out_port: PortNum, _sl: u8) -> u8 {
    if out_port == 1 {
        2
    } else {
        0
    }
}

fn check(switch_lids: bool) -> AnalysisReport {
    let (f, lids, t) = clockwise_ring();
    let opts = AnalysisOptions { cdg_switch_lids: switch_lids, ..AnalysisOptions::default() };
    analyze(&f, &lids, &t, &SlView::with_tables(&vl_by_port), &opts).unwrap()
}

#[test]
fn dependencies_that_differ_in_port_and_vl_are_all_kept() {
    // By hand: channels h_i -> s_i (VL2), s_i -> s_i+1 (VL2) and s_i -> h_i
    // (VL0), 4 each. Dependencies: h_i -> s_i goes on clockwise (4); a ring
    // channel into s_i+1 goes on clockwise or down to h_i+1 (8). Switches'
    // own routes use the same channels and add no dependency (their routes
    // to switch LIDs end in the switch). The ring's four VL2 channels are the
    // cycle. None of it maps to VL15.
    for switch_lids in [false, true] {
        let r = check(switch_lids);
        let k = &r.credit_loops;
        assert_eq!((k.channels, k.dependencies), (12, 12), "switch LIDs: {switch_lids}: {r}");
        assert_eq!(k.vls_used, vec![0, 2], "switch LIDs: {switch_lids}");
        assert_eq!((k.vl15_turns, k.cyclic_sccs, k.channels_in_cycles), (0, 1, 4), "switch LIDs: {switch_lids}: {r}");
        let cycle: Vec<(&str, &str, u8)> =
            k.cycle.as_ref().expect("a cycle").iter().map(|s| (s.from.as_str(), s.to.as_str(), s.vl)).collect();
        assert_eq!(cycle, [("s0/1", "s1/2", 2), ("s1/1", "s2/2", 2), ("s2/1", "s3/2", 2), ("s3/1", "s0/2", 2)]);
    }
}
