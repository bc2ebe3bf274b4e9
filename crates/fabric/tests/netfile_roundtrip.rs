//! Property: any fabric written with `write_netfile` reads back identically
//! (nodes, GUIDs, descriptions, every port's peer, width, speed and LIDs).

use ibnetsim_fabric::io::{parse_netfile, write_netfile};
use ibnetsim_fabric::{Fabric, LinkSpec, LinkSpeed, LinkWidth, NodeId, NodeKind};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Spec {
    switches: Vec<u8>,
    cas: Vec<u8>,
    /// (node a, port pick a, node b, port pick b, width, speed)
    links: Vec<(usize, usize, usize, usize, usize, usize)>,
    descs: Vec<String>,
    guid_seed: Vec<Option<u64>>,
    sys_guid: Vec<Option<u64>>,
    lid_seed: Vec<(u16, u8)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (prop::collection::vec(1u8..=36, 1..6), prop::collection::vec(1u8..=2, 0..8)).prop_flat_map(|(switches, cas)| {
        let n = switches.len() + cas.len();
        (
            Just(switches),
            Just(cas),
            prop::collection::vec((0..n, 0usize..36, 0..n, 0usize..36, 0usize..5, 0usize..8), 0..40),
            prop::collection::vec("[a-zA-Z0-9 ;:/_.=#-]{0,24}", n),
            prop::collection::vec(prop::option::of(1u64..u64::MAX / 2), n),
            prop::collection::vec(prop::option::of(any::<u64>()), n),
            prop::collection::vec((1u16..0xc000, 0u8..=7), n * 2),
        )
            .prop_map(|(switches, cas, links, descs, guid_seed, sys_guid, lid_seed)| Spec {
                switches,
                cas,
                links,
                descs,
                guid_seed,
                sys_guid,
                lid_seed,
            })
    })
}

/// Builds the fabric; impossible links (busy port, self loop) are skipped.
fn build(s: &Spec) -> (Fabric, Vec<(NodeId, u8, u16, u8)>) {
    let mut f = Fabric::new();
    let kinds = s.switches.iter().map(|&p| (NodeKind::Switch, p)).chain(s.cas.iter().map(|&p| (NodeKind::Hca, p)));
    for (i, (kind, ports)) in kinds.enumerate() {
        let name = if kind.is_switch() { format!("sw-{i}") } else { format!("host/{i}") };
        // Distinct by construction: the index is in the low bits.
        let guid = s.guid_seed[i].map(|g| (g << 8) | i as u64);
        let id = f.add_node(kind, name, ports, guid).unwrap();
        f.set_description(id, s.descs[i].clone());
        if let Some(sg) = s.sys_guid[i] {
            f.set_system_guid(id, sg);
        }
    }
    let widths = [LinkWidth::X1, LinkWidth::X2, LinkWidth::X4, LinkWidth::X8, LinkWidth::X12];
    for &(a, pa, b, pb, w, sp) in &s.links {
        let na = NodeId(a as u32);
        let nb = NodeId(b as u32);
        let pa = 1 + (pa % f.node(na).num_ports as usize) as u32;
        let pb = 1 + (pb % f.node(nb).num_ports as usize) as u32;
        let _ = f.connect(na, pa, nb, pb, LinkSpec::new(widths[w], LinkSpeed::ALL[sp]));
    }
    let mut lids = Vec::new();
    for id in f.ids() {
        let n = f.node(id);
        let (lid, lmc) = s.lid_seed[id.index() * 2];
        if n.kind.is_switch() {
            if lid % 3 != 0 {
                lids.push((id, 0, lid, lmc));
            }
        } else {
            for (k, (p, _)) in n.connected_ports().enumerate() {
                let (lid, lmc) = s.lid_seed[id.index() * 2 + k];
                if lid % 3 != 0 {
                    lids.push((id, p, lid, lmc));
                }
            }
        }
    }
    (f, lids)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn write_then_read_is_identity(s in spec()) {
        let (f, lids) = build(&s);
        let mut out = Vec::new();
        write_netfile(&f, Some(&lids), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = parse_netfile(&text, None).unwrap();
        let g = &back.fabric;
        prop_assert_eq!(g.num_nodes(), f.num_nodes());
        prop_assert_eq!(g.links().len(), f.links().len());
        for id in f.ids() {
            let (x, y) = (f.node(id), g.node(id));
            prop_assert_eq!(x.kind, y.kind);
            prop_assert_eq!(&x.name, &y.name);
            prop_assert_eq!(x.num_ports, y.num_ports);
            prop_assert_eq!(x.guid, y.guid);
            prop_assert_eq!(x.system_guid, y.system_guid);
            prop_assert_eq!(&x.description, &y.description);
            for p in 1..=x.num_ports {
                prop_assert_eq!(f.peer(id, p), g.peer(id, p));
                if let (Some(a), Some(b)) = (f.link_at(id, p), g.link_at(id, p)) {
                    prop_assert_eq!(f.link(a).spec, g.link(b).spec);
                }
            }
        }
        let mut want = lids.clone();
        want.sort();
        let mut got = back.lids.clone();
        got.sort();
        prop_assert_eq!(got, want);
    }
}
