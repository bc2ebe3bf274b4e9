//! Multicast groups through the public API: configured by name on the papers'
//! irregular networks and on real fabrics from shared/data, every member's
//! packet, flooded along the MFT ports (never back out of the arrival port),
//! reaches every other member exactly once and no switch twice.

use ibnetsim_fabric::gen::IrregularParams;
use ibnetsim_fabric::io::read_topology;
use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use ibnetsim_sm::dump::mcfdbs;
use ibnetsim_sm::{Lid, MulticastGroupConfig, SmConfig, Subnet, SubnetManager};

use crate::common::data_dir;

fn configure(f: &Fabric, engine: &str, groups: Vec<MulticastGroupConfig>) -> Subnet {
    let config = SmConfig { routing_engine: engine.into(), lmc: 1, multicast_groups: groups, ..SmConfig::default() };
    SubnetManager::new(config).configure(f).unwrap_or_else(|e| panic!("{engine}: {e}"))
}

/// CA ports reached by a packet of `mlid` sent by `src`; panics on a switch
/// reached twice or without an entry.
fn flood(f: &Fabric, s: &Subnet, mlid: Lid, src: (NodeId, PortNum)) -> Vec<(NodeId, PortNum)> {
    let first = f.peer(src.0, src.1).unwrap();
    let mut seen = vec![false; f.num_nodes()];
    let mut queue = vec![(first.node, first.port)];
    let mut got = Vec::new();
    while let Some((sw, arrival)) = queue.pop() {
        assert!(!std::mem::replace(&mut seen[sw.index()], true), "{mlid:#x}: {} reached twice", f.node(sw).name);
        let entry = s.mfts.get(sw, mlid).unwrap_or_else(|| panic!("{mlid:#x}: {} has no entry", f.node(sw).name));
        for p in entry.without(arrival) {
            let peer = f.peer(sw, p).unwrap();
            if f.node(peer.node).kind.is_switch() {
                queue.push((peer.node, peer.port));
            } else {
                got.push((peer.node, peer.port));
            }
        }
    }
    got.sort_unstable();
    got
}

fn check_all_groups(f: &Fabric, s: &Subnet) {
    for g in s.mfts.groups() {
        for &src in &g.members {
            let want: Vec<_> = g.members.iter().copied().filter(|&m| m != src).collect();
            assert_eq!(flood(f, s, g.mlid, src), want, "{:#x} from {}", g.mlid, f.node(src.0).name);
        }
    }
}

fn names(f: &Fabric, step: usize) -> Vec<String> {
    f.cas().step_by(step).map(|n| f.node(n).name.clone()).collect()
}

#[test]
fn groups_on_the_papers_irregular_networks() {
    for seed in 0..4 {
        let f = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap();
        let groups = vec![
            MulticastGroupConfig { mlid: 0xC000, members: names(&f, 1) },
            MulticastGroupConfig { mlid: 0xD123, members: names(&f, 7) },
        ];
        for engine in ["minhop", "updn"] {
            let s = configure(&f, engine, groups.clone());
            assert_eq!(s.mfts.groups().len(), 2);
            // Every host is a member of 0xC000: every switch is on its tree.
            assert!(f.switches().all(|sw| s.mfts.get(sw, 0xC000).is_some()));
            check_all_groups(&f, &s);
            let dump = mcfdbs::write(&f, &s.mfts);
            assert_eq!(dump.matches("\nSwitch 0x").count(), 16);
            assert_eq!(dump.lines().filter(|l| l.starts_with("0x")).count(), s.mfts.num_entries());
        }
    }
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn groups_on_real_fabrics() {
    let Some(dir) = data_dir() else { return };
    for rel in ["is4_3l_1944n/is4_3l_1944n.topo", "ibutils/RhinoBased512Nodes.topo", "ibsim/net.2sw2path4hca2port"] {
        let topo = read_topology(&dir.join("topologies").join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let f = &topo.fabric;
        // Members by `name:port`, every cabled CA port of every 5th CA.
        let ports: Vec<String> = f
            .cas()
            .step_by(5)
            .flat_map(|n| f.node(n).connected_ports().map(move |(p, _)| format!("{}:{p}", f.node(n).name)))
            .collect();
        let s = configure(f, "minhop", vec![MulticastGroupConfig { mlid: 0xC001, members: ports.clone() }]);
        assert_eq!(s.mfts.groups()[0].members.len(), ports.len(), "{rel}");
        check_all_groups(f, &s);
    }
}
