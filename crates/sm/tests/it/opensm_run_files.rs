//! Checking an OpenSM run with its own files: `guid2lid` gives the LIDs that
//! `opensm.fdbs` (which names no LID owners) refers to, and
//! `opensm-sl2vl.dump` gives the VLs of the credit-loop check.
//!
//! The files are in examples/opensm-ring4 (its README works the example by
//! hand): a ring A->B->C->D->A of four switches with one host each, routed
//! clockwise for one and two ring hops and back for three. Every switch
//! passes the two-hop routes on from its port 2 to its port 1, so with one
//! VL the four clockwise channels wait on each other in a ring.

use std::path::{Path, PathBuf};

use ibnetsim_fabric::io::read_topology;
use ibnetsim_fabric::Fabric;
use ibnetsim_sm::analysis::{analyze, AnalysisOptions, AnalysisReport, SlView};
use ibnetsim_sm::dump;
use ibnetsim_sm::guid2lid::read_guid2lid;
use ibnetsim_sm::qos::sl2vl_dump::read_sl2vl_dump;
use ibnetsim_sm::qos::Sl2VlTables;
use ibnetsim_sm::LidMap;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/opensm-ring4")
}

fn ring() -> (Fabric, LidMap, ibnetsim_sm::ForwardingTables) {
    let fabric = read_topology(&dir().join("ring4.net")).unwrap().fabric;
    let lids = read_guid2lid(&dir().join("guid2lid"), &fabric).unwrap();
    let fdbs = dump::read(&dir().join("opensm.fdbs"), None).unwrap();
    let tables = dump::apply(&fdbs, &fabric, &lids).unwrap().tables;
    (fabric, lids, tables)
}

fn check(sl2vl: Option<&Sl2VlTables>) -> AnalysisReport {
    let (f, lids, tables) = ring();
    let view = match sl2vl {
        Some(t) => SlView::with_tables(t),
        None => SlView::modulo(1).unwrap(),
    };
    analyze(&f, &lids, &tables, &view, &AnalysisOptions::default()).unwrap()
}

#[test]
fn guid2lid_numbers_the_ports_as_opensm_did() {
    let (f, lids, tables) = ring();
    let id = |n: &str| f.node_by_name(n).unwrap();
    // OpenSM gave the switches 1..4 and the hosts 5..8; ibnetsim's own
    // assignment would have numbered the hosts first.
    assert_eq!(lids.switch_lid(id("C")), Some(3));
    assert_eq!(lids.of_port(id("hb"), 1).unwrap().base, 6);
    assert_eq!(lids.lmc(), 0);
    // A's line for LID 7 (hc, two hops clockwise) is port 1; B's for LID 8 (hd) too.
    assert_eq!(tables.get(id("A"), 7), Some(1));
    assert_eq!(tables.get(id("B"), 8), Some(1));
    assert_eq!(tables.get(id("D"), 7), Some(2));
    let r = check(None);
    assert_eq!(r.paths.reach.unreachable_pairs, 0);
    // 12 host pairs: 8 over one ring link (one way or the other), 4 over two.
    let used: Vec<u64> = r.paths.hop_histogram.iter().copied().filter(|&n| n > 0).collect();
    assert_eq!(used, vec![8, 4]);
    assert_eq!(r.fabric.ca_lids, 4);
}

#[test]
fn one_vl_closes_the_clockwise_ring() {
    let r = check(None).credit_loops;
    assert_eq!(r.cyclic_sccs, 1);
    assert_eq!(r.channels_in_cycles, 4);
    let cycle = r.cycle.unwrap();
    let mut hops: Vec<(String, String, u8)> = cycle.iter().map(|s| (s.from.clone(), s.to.clone(), s.vl)).collect();
    hops.sort();
    let want = [("A/1", "B/2"), ("B/1", "C/2"), ("C/1", "D/2"), ("D/1", "A/2")];
    assert_eq!(hops, want.iter().map(|(a, b)| (a.to_string(), b.to_string(), 0)).collect::<Vec<_>>());
}

#[test]
fn the_dumped_sl2vl_breaks_the_ring_when_through_traffic_changes_vl() {
    // Each switch sends what it passes on (port 2 in, port 1 out) on VL1 and
    // its host's packets on VL0. A two-hop route runs VL0 then VL1 and ends:
    // nothing waits on a VL1 channel, so no cycle.
    let (f, ..) = ring();
    let t = read_sl2vl_dump(&dir().join("sl2vl-through-vl1.dump"), &f).unwrap();
    let a = f.node_by_name("A").unwrap();
    assert_eq!((t.vl(a, 2, 1, 0), t.vl(a, 3, 1, 0), t.vl(a, 2, 1, 1)), (1, 0, 0));
    let r = check(Some(&t)).credit_loops;
    assert_eq!(r.cyclic_sccs, 0);
    assert_eq!(r.vls_used, vec![0, 1]);
    // Channels: 4 clockwise links on VL0 (hosts' packets) and VL1 (passed
    // on), 4 counter-clockwise on VL0, 8 host links (4 each way) on VL0.
    assert_eq!(r.channels, 20);
    // Dependencies, 4 of each kind (one per switch): host link onto the
    // ring either way; ring onto host link, from VL0 clockwise, from VL0
    // counter-clockwise and from VL1 (the end of a two-hop route); and the
    // two-hop routes' one turn on the ring, VL0 onto VL1.
    assert_eq!(r.dependencies, 24);
}

#[test]
fn a_dumped_sl2vl_that_moves_the_whole_ring_keeps_the_loop() {
    // Everything leaving on port 1 takes VL1: the ring of waits moves to VL1.
    let (f, ..) = ring();
    let t = read_sl2vl_dump(&dir().join("sl2vl-clockwise-vl1.dump"), &f).unwrap();
    let r = check(Some(&t)).credit_loops;
    assert_eq!(r.cyclic_sccs, 1);
    assert!(r.cycle.unwrap().iter().all(|s| s.vl == 1));
}

#[test]
fn a_switch_missing_from_the_dump_is_named() {
    let (f, ..) = ring();
    let text = std::fs::read_to_string(dir().join("sl2vl-through-vl1.dump")).unwrap();
    // Drop switch D's block (the fourth).
    let blocks: Vec<&str> = text.split("\n\n").collect();
    let without_d = blocks.iter().enumerate().filter(|(i, _)| *i != 3).map(|(_, b)| *b).collect::<Vec<_>>().join("\n\n");
    let e = ibnetsim_sm::qos::sl2vl_dump::parse_sl2vl_dump(&without_d, Some(Path::new("x.dump")), &f).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.dump: switch 'D' has no row for input 0, output 1: OpenSM dumps every cabled port, \
         so give the SL2VL dump of the same run as the topology"
    );
}

mod lid_matrix {
    //! `opensm-lid-matrix.dump` of the ring, written by hand as
    //! `dump_lid_matrix` prints it: per switch, a row per switch LID of
    //! hex hop counts for ports 0..=3, port 0 the least. On a ring of four,
    //! from switch i towards the switch k places clockwise, port 1 (to i+1)
    //! takes 1 + d(k-1) hops and port 2 (to i-1) 1 + d(k+1), d(x) the ring
    //! distance; port 3 leads to a host: ff.

    use super::*;
    use ibnetsim_sm::lid_matrix::{compare, parse_lid_matrix, read_lid_matrix};

    #[test]
    fn the_ring_matches_its_matrix_and_routes_minimally() {
        let (f, lids, tables) = ring();
        let m = read_lid_matrix(&dir().join("opensm-lid-matrix.dump"), &f).unwrap();
        let a = f.node_by_name("A").unwrap();
        assert_eq!(m.hops(a, 2), Some(&[1, 1, 3, 0xff][..]));
        let r = compare(&f, &lids, &tables, &m);
        // 4 switches x 4 switch LIDs; 4 switches x 8 LIDs routed.
        assert_eq!((r.rows_checked, r.rows_differing, r.routes_checked, r.routes_longer), (16, 0, 32, 0), "{r}");
    }

    #[test]
    fn longer_routes_are_counted_with_examples() {
        // A sends D's LIDs (4 and 8) clockwise: A->B->C->D, 3 switch hops
        // where port 2 takes 1 (and 4 hops to host hd where 2 do).
        let (f, lids, _) = ring();
        let text = std::fs::read_to_string(dir().join("opensm.fdbs")).unwrap();
        let text = text
            .replacen("0x0004 : 002  : 01   : yes", "0x0004 : 001  : 03   : No 1 hop path possible via port 2!", 1)
            .replacen("0x0008 : 002  : 02   : yes", "0x0008 : 001  : 04   : No 2 hop path possible via port 2!", 1);
        let tables = dump::apply(&dump::parse(&text, None).unwrap(), &f, &lids).unwrap().tables;
        let m = read_lid_matrix(&dir().join("opensm-lid-matrix.dump"), &f).unwrap();
        let r = compare(&f, &lids, &tables, &m);
        assert_eq!((r.routes_checked, r.routes_longer), (32, 2));
        assert_eq!(
            r.route_examples,
            vec!["A: LID 0x0004 by port 1: 3 hops, the least is 1", "A: LID 0x0008 by port 1: 4 hops, the least is 2"]
        );
    }

    #[test]
    fn a_matrix_of_another_fabric_is_found_out() {
        let (f, lids, tables) = ring();
        let text = std::fs::read_to_string(dir().join("opensm-lid-matrix.dump")).unwrap();
        // Line 4: A towards C (LID 3); port 2 said to take 3 hops, not 2.
        let text = text.replacen("0x0003: 02 02 02 ff", "0x0003: 02 02 03 ff", 1);
        // And B's row for LID 1 gone.
        let text = text.replacen("0x0001: 01 03 01 ff # portguid 0x0000000000200000\n", "", 1);
        let m = parse_lid_matrix(&text, None, &f).unwrap();
        let r = compare(&f, &lids, &tables, &m);
        assert_eq!(r.rows_differing, 2);
        assert_eq!(
            r.row_examples,
            vec!["A: LID 0x0003 (switch C), line 4: port 2 has 03 hops, the fabric 02", "B: no row for LID 0x0001 (switch A)"]
        );
    }

    #[test]
    fn bad_lines_name_the_line() {
        let (f, ..) = ring();
        let err = |t: &str| parse_lid_matrix(t, Some(Path::new("m")), &f).unwrap_err().to_string();
        let head = "Switch: guid 0x0000000000200000\n";
        assert_eq!(
            err(&format!("{head}0x0001: 00 02 02\n")),
            "m:2: 3 hop counts, but switch 'A' has ports 0..=3: OpenSM writes one count per port, port 0 (the least) first"
        );
        assert_eq!(
            err(&format!("{head}0x0001: 00 02 02 zz\n")),
            "m:2: cannot read '0x0001: 00 02 02 zz': a row is '0x<LID>:' then one two-digit hex hop count per port, \
             port 0 first (OpenSM's dump_lid_matrix format)"
        );
        assert_eq!(
            err("Switch: guid 0x0000000000100000\n"),
            "m:1: no switch of the fabric has GUID 0x0000000000100000: give the LID matrix of the same OpenSM run as the topology"
        );
        assert_eq!(
            err(&format!("{head}0x0001: 00 02 02 ff\n0x0001: 00 02 02 ff\n")),
            "m:3: LID 0x0001 is listed twice for this switch, first at line 2"
        );
        assert!(err("0x0001: 00 02 02 ff\n").starts_with("m:1: cannot read '0x0001: 00 02 02 ff': rows come after"));
    }
}
