//! Per-path SLs from the subnet manager's routing engine.

use ibnetsim_sim::{PatternConfig, ProcessKind, Simulation};
use ibnetsim_sm::Subnet;

use crate::common::*;

#[test]
fn packets_take_the_routing_engines_path_sl() {
    // The subnet manager's per-path SL (lash, dfsssp and torus-2QoS set one
    // per pair) overrides the class's SL: h0 → h1 travels on SL 1, the other
    // pairs keep SL 0.
    let net = routed(star(3));
    let mut sn = Subnet::from_parts("minhop", net.lids.clone(), net.tables.clone());
    let base = |h: &str| net.lids.of_port(net.fabric.node_by_name(h).unwrap(), 1).unwrap().base;
    sn.path_sl = ibnetsim_sm::PathSl::table(&net.lids);
    sn.path_sl.set(base("h0"), base("h1"), 1);
    let mut c = config(vec![class("a", 0, 0.0, ProcessKind::Poisson, 256, PatternConfig::Uniform)]);
    c.data_vls = 2;
    let mut sim = Simulation::from_subnet(&net.fabric, &sn, &c, None).unwrap();
    sim.inject(0, 0, 0, 1).unwrap();
    sim.inject(0, 0, 0, 2).unwrap();
    sim.inject(0, 0, 1, 0).unwrap();
    sim.run(50_000_000).unwrap();
    let r = sim.results();
    let per_sl: Vec<(u8, u64)> = r.sls.iter().map(|s| (s.sl, s.delivered_packets)).collect();
    assert_eq!(per_sl, vec![(0, 2), (1, 1)]);
}
