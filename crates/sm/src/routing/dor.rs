//! `dor`: dimension-order routing, as OpenSM does it.
//!
//! OpenSM's `dor` engine (`osm_ucast_dor_setup` in `opensm/osm_ucast_mgr.c`)
//! is not a coordinate-based router: it is `minhop` with one change in
//! `osm_switch_recommend_path` (`opensm/osm_switch.c`). Among the minimum-hop
//! ports, only those cabled to the same neighbour as the lowest-numbered one
//! are used, and the route counts balance only across those parallel cables.
//! Every later LID of a port (LMC > 0) scans from port 1 again instead of
//! rotating, and the LMC bookkeeping tells parallel cables apart by remote
//! port. So a switch always moves along its lowest-numbered productive
//! dimension: with dimension d cabled on ports 2d+1 and 2d+2 (meshes and tori)
//! or dimension i on port i+1 (hypercubes), as the generators number them,
//! that is X first, then Y, then Z.
//!
//! On a mesh or hypercube the result is deadlock-free dimension-order routing;
//! on a torus the wrap-around links close credit loops inside a dimension
//! (OpenSM's answer is `torus-2QoS`, with extra virtual lanes). On any other
//! fabric it is still a valid minimum-hop routing that prefers low port
//! numbers. Options used: none.

use ibnetsim_fabric::Fabric;

use super::minhop::MinimalPaths;
use super::ucast::build_lfts;
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::hops::SwitchHops;
use crate::lid::LidMap;

/// The dimension-order engine.
#[derive(Debug, Clone, Default)]
pub struct Dor;

/// Registry constructor.
pub(crate) fn build(_options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(Dor))
}

impl RoutingEngine for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let hops = SwitchHops::compute(fabric);
        let tables = build_lfts(fabric, lids, &hops, &MinimalPaths(&hops), true)?;
        Ok(Routing::unicast(tables, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::minhop::MinHop;
    use crate::routing::testfab::{self, check_routes, trace};
    use crate::routing::{build_engine, RoutingOptions};
    use ibnetsim_fabric::{LinkSpec, NodeId};
    use proptest::prelude::*;

    /// A `w × h` mesh, switch `x{i}y{j}`; port 1 = +X, 2 = -X, 3 = +Y, 4 = -Y
    /// (dimension d on ports 2d+1/2d+2); `hosts` HCAs on ports 5.. of each switch.
    fn mesh(w: usize, h: usize, hosts: u32, parallel_x: bool) -> (Fabric, Vec<Vec<NodeId>>) {
        let mut f = Fabric::new();
        let grid: Vec<Vec<NodeId>> =
            (0..w).map(|i| (0..h).map(|j| f.add_switch(format!("x{i}y{j}"), 12).unwrap()).collect()).collect();
        for i in 0..w {
            for j in 0..h {
                if i + 1 < w {
                    f.connect(grid[i][j], 1, grid[i + 1][j], 2, LinkSpec::default()).unwrap();
                    if parallel_x {
                        f.connect(grid[i][j], 9, grid[i + 1][j], 10, LinkSpec::default()).unwrap();
                    }
                }
                if j + 1 < h {
                    f.connect(grid[i][j], 3, grid[i][j + 1], 4, LinkSpec::default()).unwrap();
                }
            }
        }
        for (i, col) in grid.iter().enumerate() {
            for (j, &sw) in col.iter().enumerate() {
                for k in 0..hosts {
                    let ca = f.add_hca(format!("h{i}_{j}_{k}"), 1).unwrap();
                    f.connect(sw, 5 + k, ca, 1, LinkSpec::default()).unwrap();
                }
            }
        }
        (f, grid)
    }

    /// Coordinates of every switch.
    fn coords(grid: &[Vec<NodeId>]) -> std::collections::HashMap<NodeId, (usize, usize)> {
        let mut m = std::collections::HashMap::new();
        for (i, col) in grid.iter().enumerate() {
            for (j, &sw) in col.iter().enumerate() {
                m.insert(sw, (i, j));
            }
        }
        m
    }

    /// Whether every route of `tables` moves along X until the X coordinate is
    /// right, and only then along Y.
    fn x_then_y(f: &Fabric, grid: &[Vec<NodeId>], lids: &LidMap, tables: &crate::ForwardingTables) -> bool {
        let at = coords(grid);
        for sw in f.switches() {
            for p in lids.ports() {
                for lid in p.lids() {
                    let path = trace(f, lids, tables, sw, lid).unwrap();
                    let mut moved_y = false;
                    for w in path.windows(2) {
                        let (a, b) = (at[&w[0].0], at[&w[1].0]);
                        if a.1 != b.1 {
                            moved_y = true;
                        } else if moved_y {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    #[test]
    fn mesh_3x3_routes_x_first_then_y() {
        let (f, grid) = mesh(3, 3, 1, false);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = Dor.route(&f, &lids).unwrap();
        check_routes(&f, &lids, &r.tables).unwrap();
        assert!(x_then_y(&f, &grid, &lids, &r.tables));
        // By hand: from x0y0 to the host of x2y2, +X, +X, +Y, +Y, then the host port.
        let dst = lids.of_port(f.node_by_name("h2_2_0").unwrap(), 1).unwrap().base;
        let path: Vec<(String, u8)> =
            trace(&f, &lids, &r.tables, grid[0][0], dst).unwrap().into_iter().map(|(n, p)| (f.node(n).name.clone(), p)).collect();
        let want = [("x0y0", 1), ("x1y0", 1), ("x2y0", 3), ("x2y1", 3), ("x2y2", 5)];
        assert_eq!(path, want.map(|(n, p)| (n.to_string(), p)));
        // Minhop balances instead and takes some Y-first routes on the same mesh.
        let m = MinHop.route(&f, &lids).unwrap();
        assert!(!x_then_y(&f, &grid, &lids, &m.tables));
    }

    #[test]
    fn parallel_cables_of_one_dimension_share_the_load() {
        // Ports 1 and 9 both go +X: routes alternate between them; Y is never used first.
        let (f, grid) = mesh(2, 2, 2, true);
        let lids = LidMap::assign(&f, 0).unwrap();
        let r = Dor.route(&f, &lids).unwrap();
        assert!(x_then_y(&f, &grid, &lids, &r.tables));
        let ports: Vec<u8> = ["h1_0_0", "h1_0_1", "h1_1_0", "h1_1_1"]
            .iter()
            .map(|h| r.tables.get(grid[0][0], lids.of_port(f.node_by_name(h).unwrap(), 1).unwrap().base).unwrap())
            .collect();
        assert_eq!(ports, vec![1, 9, 1, 9]);
    }

    #[test]
    fn lmc_lids_spread_over_parallel_cables_of_the_first_dimension() {
        let (f, grid) = mesh(2, 1, 1, true);
        let lids = LidMap::assign(&f, 2).unwrap();
        let r = Dor.route(&f, &lids).unwrap();
        let p = lids.of_port(f.node_by_name("h1_0_0").unwrap(), 1).unwrap();
        let ports: Vec<u8> = p.lids().map(|l| r.tables.get(grid[0][0], l).unwrap()).collect();
        assert_eq!(ports, vec![1, 9, 1, 9]);
    }

    #[test]
    fn registered() {
        assert_eq!(build_engine("dor", &RoutingOptions::default()).unwrap().name(), "dor");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn random_fabrics_get_minimal_loop_free_routes(seed in any::<u64>(), switches in 1usize..12, extra in 0usize..12) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let lids = LidMap::assign(&f, 1).unwrap();
            let r = Dor.route(&f, &lids).unwrap();
            let hops = SwitchHops::compute(&f);
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            testfab::check_minimal(&f, &lids, &hops, &r.tables).map_err(TestCaseError::fail)?;
        }
    }
}
