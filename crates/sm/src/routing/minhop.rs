//! `minhop`: OpenSM's default routing engine.
//!
//! Every switch forwards each LID on a port that lies on a minimum-hop path to
//! the LID's owner (OpenSM's `osm_ucast_minhop_setup`: `build_lid_matrices`
//! then `ucast_mgr_build_lfts`, in `opensm/osm_ucast_mgr.c`). Among equal-hop
//! ports the routes are balanced by per-port route counts, and with LMC > 0 the
//! LIDs of one port are spread over different remote systems and nodes; both
//! are OpenSM's rules, implemented in [`super::ucast`].
//!
//! Minimal paths on a fabric with cycles can form credit loops; `updn` or `dor`
//! (on meshes) avoid them. Options used: none.

use ibnetsim_fabric::Fabric;

use super::ucast::{build_lfts, PathSet};
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::hops::{SwitchHops, UNREACHABLE};
use crate::lid::LidMap;

/// The min-hop engine.
#[derive(Debug, Clone, Default)]
pub struct MinHop;

/// Registry constructor.
pub(crate) fn build(_options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(MinHop))
}

/// Minimal paths: the hop to `peer` is on a path iff it brings the packet one
/// hop closer to `dst`.
pub(crate) struct MinimalPaths<'a>(pub &'a SwitchHops);

impl PathSet for MinimalPaths<'_> {
    fn reachable(&self, sw: usize, dst: usize) -> bool {
        self.0.by_index(sw, dst) != UNREACHABLE
    }

    fn on_path(&self, sw: usize, peer: usize, dst: usize) -> bool {
        let d = self.0.by_index(sw, dst);
        d != UNREACHABLE && self.0.by_index(peer, dst) == d - 1
    }
}

impl RoutingEngine for MinHop {
    fn name(&self) -> &'static str {
        "minhop"
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let hops = SwitchHops::compute(fabric);
        let tables = build_lfts(fabric, lids, &hops, &MinimalPaths(&hops), false)?;
        Ok(Routing::unicast(tables, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testfab::{self, check_routes, host, ring4, trace, two_switch_parallel};
    use crate::routing::{build_engine, RoutingOptions};
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn route(f: &Fabric, lmc: u8) -> (LidMap, Routing) {
        testfab::routed(&MinHop, f, lmc)
    }

    #[test]
    fn ring_lfts_by_hand() {
        let f = ring4();
        let (_, r) = route(&f, 0);
        let row = |sw: &str| r.tables.lft(f.node_by_name(sw).unwrap()).unwrap().entries().to_vec();
        // Destinations are routed h0..h3 (every switch has one CA, so switch
        // table order), then the switch LIDs s0..s3, which are not counted.
        // At s0 (port 1 to s1, port 2 to s3): h0 local; h1 port 1; h2 is two
        // hops both ways and port 2 has carried nothing yet; h3 port 2. LID 7
        // (s2) is again a tie: port 1 carries 1 route, port 2 carries 2.
        //                    LID: 0    1  2  3  4  5  6  7  8
        assert_eq!(row("s0"), vec![255, 3, 1, 2, 2, 0, 1, 1, 2]);
        // At s1 (port 1 to s2, port 2 to s0): h3 ties 1–1, the scan meets port 1 first.
        assert_eq!(row("s1"), vec![255, 2, 3, 1, 1, 2, 0, 1, 2]);
        assert_eq!(row("s2"), vec![255, 1, 2, 3, 1, 2, 2, 0, 1]);
        assert_eq!(row("s3"), vec![255, 1, 2, 2, 3, 1, 1, 2, 0]);
    }

    #[test]
    fn parallel_links_alternate() {
        let f = two_switch_parallel(2, 4);
        let (lids, r) = route(&f, 0);
        let a = f.node_by_name("a").unwrap();
        // Hosts of b (b0..b3) leave a by ports 1, 2, 1, 2.
        let ports: Vec<u8> =
            (0..4).map(|i| r.tables.get(a, lids.of_port(host(&f, "b", i), 1).unwrap().base).unwrap()).collect();
        assert_eq!(ports, vec![1, 2, 1, 2]);
        // a's own hosts are on ports 3..6.
        let local: Vec<u8> =
            (0..4).map(|i| r.tables.get(a, lids.of_port(host(&f, "a", i), 1).unwrap().base).unwrap()).collect();
        assert_eq!(local, vec![3, 4, 5, 6]);
        // The switch LID of b is not counted and goes to the first port.
        assert_eq!(r.tables.get(a, lids.switch_lid(f.node_by_name("b").unwrap()).unwrap()), Some(1));
        assert_eq!(r.tables.get(a, lids.switch_lid(a).unwrap()), Some(0));
    }

    #[test]
    fn lmc2_spreads_lids_of_one_port_over_parallel_links() {
        let f = two_switch_parallel(2, 4);
        let (lids, r) = route(&f, 2);
        let a = f.node_by_name("a").unwrap();
        let at_a = |i: usize| -> Vec<u8> {
            lids.of_port(host(&f, "b", i), 1).unwrap().lids().map(|l| r.tables.get(a, l).unwrap()).collect()
        };
        // Offset 0 alternates 1, 2, 1, 2 by load; every later LID starts its
        // scan one past the port of the previous LID of the same host, so the
        // four LIDs of each host alternate between the two cables.
        assert_eq!(at_a(0), vec![1, 2, 1, 2]);
        assert_eq!(at_a(1), vec![2, 1, 2, 1]);
        assert_eq!(at_a(2), vec![1, 2, 1, 2]);
        assert_eq!(at_a(3), vec![2, 1, 2, 1]);
        check_routes(&f, &lids, &r.tables).unwrap();
    }

    /// a reaches b through m1, m2 and m3 (a's ports 1, 2, 3); one host on b; LMC 1.
    fn three_middles(m1_m2_one_chassis: bool) -> Fabric {
        let mut f = Fabric::new();
        let a = f.add_switch("a", 8).unwrap();
        let b = f.add_switch("b", 8).unwrap();
        for i in 0..3u32 {
            let m = f.add_switch(format!("m{}", i + 1), 8).unwrap();
            f.connect(a, i + 1, m, 1, LinkSpec::default()).unwrap();
            f.connect(m, 2, b, i + 1, LinkSpec::default()).unwrap();
        }
        if m1_m2_one_chassis {
            let sys = 0x0002_c9ff_0000_0100;
            f.set_system_guid(f.node_by_name("m1").unwrap(), sys);
            f.set_system_guid(f.node_by_name("m2").unwrap(), sys);
        }
        let h = f.add_hca("b0", 1).unwrap();
        f.connect(b, 8, h, 1, LinkSpec::default()).unwrap();
        f
    }

    #[test]
    fn lmc_spreading_prefers_another_system_then_another_node() {
        for (chassis, want) in [(false, vec![1, 2]), (true, vec![1, 3])] {
            let f = three_middles(chassis);
            let (lids, r) = route(&f, 1);
            let a = f.node_by_name("a").unwrap();
            let got: Vec<u8> =
                lids.of_port(host(&f, "b", 0), 1).unwrap().lids().map(|l| r.tables.get(a, l).unwrap()).collect();
            // The second LID scans from port 2. m2 is a new system unless it
            // shares m1's chassis; then m3 (a new system) beats m2 (only a new node).
            assert_eq!(got, want, "m1 and m2 in one chassis: {chassis}");
        }
    }

    #[test]
    fn switch_without_switch_links_is_unroutable() {
        // Two switches joined only through a dual-ported HCA: connected, but no
        // switch can forward to the other side.
        let mut f = Fabric::new();
        let s0 = f.add_switch("s0", 4).unwrap();
        let s1 = f.add_switch("s1", 4).unwrap();
        let bridge = f.add_hca("bridge", 2).unwrap();
        f.connect(s0, 1, bridge, 1, LinkSpec::default()).unwrap();
        f.connect(s1, 1, bridge, 2, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let err = MinHop.route(&f, &lids).unwrap_err();
        assert!(matches!(err, SmError::Unroutable { .. }), "{err}");
        assert_eq!(err.to_string(), "LID 0x0002 (bridge port 2) is unreachable from switch 's0'");
    }

    #[test]
    fn registered() {
        assert_eq!(build_engine("minhop", &RoutingOptions::default()).unwrap().name(), "minhop");
    }

    #[test]
    fn fat_tree_routes_are_minimal_and_loop_free() {
        let f = testfab::fat_tree(4, 4, 2, 3);
        let (lids, r) = route(&f, 0);
        let hops = SwitchHops::compute(&f);
        check_routes(&f, &lids, &r.tables).unwrap();
        testfab::check_minimal(&f, &lids, &hops, &r.tables).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn random_fabrics_route_on_minimal_paths(
            seed in any::<u64>(), switches in 1usize..14, extra in 0usize..14, lmc in 0u8..3,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let (lids, r) = route(&f, lmc);
            let hops = SwitchHops::compute(&f);
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            testfab::check_minimal(&f, &lids, &hops, &r.tables).map_err(TestCaseError::fail)?;
            // Deterministic: a second run gives identical tables.
            let again = MinHop.route(&f, &lids).unwrap();
            prop_assert_eq!(&again.tables, &r.tables);
            let _ = trace; // used by other engines' tests
        }
    }
}
