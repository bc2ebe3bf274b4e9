//! Forwarding-table dumps from real fabrics and tools (shared/data): OpenSM's
//! `osm.fdbs` with its `subnet.lst`, ibdiagnet's copy of a live fabric's
//! listing, and ib_flit_sim's vector tables.
//!
//! The data folder is found through `IBNETSIM_SHARED_DATA` or beside the
//! repository; without it these tests are skipped, except under `CI=true`,
//! where a missing folder fails them.

use std::path::{Path, PathBuf};

use crate::common::data_dir;

use ibnetsim_fabric::{Fabric, LinkEnd, LinkSpec, NodeId, NodeKind};
use ibnetsim_sm::dump::{self, ucast_routes, vector, DumpFormat, SwitchKey};
use ibnetsim_sm::routing::file::FileEngine;
use ibnetsim_sm::{ForwardingTables, Lid, LidMap, PortLid, RoutingEngine};

fn topo(dir: &Path, rel: &str) -> PathBuf {
    dir.join("topologies").join(rel)
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn osm_fdbs_has_62_switches_and_4030_entries() {
    let Some(dir) = data_dir() else { return };
    let d = dump::read(&topo(&dir, "ibutils/osm.fdbs"), None).unwrap();
    assert_eq!(d.format, DumpFormat::UcastRoutes);
    assert_eq!(d.switches.len(), 62);
    assert_eq!(d.num_routes(), 4030);
    assert!(d.switches.iter().all(|s| s.routes.len() == 65 && s.routes.iter().all(|r| r.port.is_some())));
    let first = &d.switches[0];
    assert_eq!(first.key, SwitchKey::Guid(0x0002_c901_09fb_0000));
    assert_eq!((first.routes[0].lid, first.routes[0].port, first.routes[0].line), (1, Some(5), 3));
    assert_eq!(d.switches[3].key, SwitchKey::Guid(1));
}

/// The fabric of ibutils' `subnet.lst` (OpenSM's link list), with its LIDs.
fn read_subnet_lst(path: &Path) -> (Fabric, LidMap) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = Fabric::new();
    let mut lids: Vec<PortLid> = Vec::new();
    let field = |b: &str, key: &str| -> u64 {
        let v = &b[b.find(key).unwrap() + key.len()..];
        u64::from_str_radix(v.split_whitespace().next().unwrap(), 16).unwrap()
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (a, b) = line.split_once(" } { ").unwrap();
        let mut ends = Vec::new();
        for blk in [a, b] {
            let switch = blk.trim_start_matches("{ ").starts_with("SW");
            let guid = field(blk, "NodeGUID:");
            let port = field(blk, "PN:") as u8;
            let node = match f.node_by_guid(guid).filter(|&n| f.node(n).guid == guid) {
                Some(n) => n,
                None => {
                    let kind = if switch { NodeKind::Switch } else { NodeKind::Hca };
                    let n = f.add_node(kind, format!("{guid:016x}"), field(blk, "Ports:") as u8, Some(guid)).unwrap();
                    let desc = &blk[blk.find("Rev:").unwrap()..];
                    f.set_description(n, &desc[desc.find('{').unwrap() + 1..desc.find("} LID:").unwrap()]);
                    n
                }
            };
            let end = LinkEnd { node, port: if switch { 0 } else { port } };
            if !lids.iter().any(|p| p.end == end) {
                lids.push(PortLid { end, base: field(blk, "LID:") as Lid, lmc: 0 });
            }
            ends.push((node, port));
        }
        if f.link_at(ends[0].0, ends[0].1).is_none() {
            f.connect(ends[0].0, ends[0].1 as u32, ends[1].0, ends[1].1 as u32, LinkSpec::default()).unwrap();
        }
    }
    let lids = LidMap::from_entries(&f, 0, lids).unwrap();
    (f, lids)
}

/// Follows the tables from switch `sw` towards `lid`; the switch hops taken
/// when the LID's owner is reached.
fn walk(f: &Fabric, lids: &LidMap, t: &ForwardingTables, mut sw: NodeId, lid: Lid) -> Option<u32> {
    let owner = lids.owner(lid)?.end;
    for hops in 0..64 {
        let port = t.get(sw, lid)?;
        if port == 0 {
            return (owner == LinkEnd { node: sw, port: 0 }).then_some(hops);
        }
        let peer = f.peer(sw, port)?;
        if peer == owner {
            return Some(hops);
        }
        if !f.node(peer.node).kind.is_switch() {
            return None;
        }
        sw = peer.node;
    }
    None
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn osm_fdbs_with_subnet_lst_routes_every_lid_and_writes_back_byte_for_byte() {
    let Some(dir) = data_dir() else { return };
    let fdbs = topo(&dir, "ibutils/osm.fdbs");
    let (f, lids) = read_subnet_lst(&topo(&dir, "ibutils/subnet.lst"));
    assert_eq!((f.switches().count(), f.cas().count(), f.links().len()), (62, 3, 172));
    let engine = FileEngine::new(dump::read(&fdbs, None).unwrap()).with_lids(lids);
    let lids = engine.assign_lids(&f, 0).unwrap().unwrap();
    assert_eq!(lids.top_lid(), 65);
    let r = engine.route(&f, &lids).unwrap();
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    for sw in f.switches() {
        for lid in 1..=lids.top_lid() {
            assert!(walk(&f, &lids, &r.tables, sw, lid).is_some(), "LID {lid} from {}", f.node(sw).name);
        }
    }
    // Our listing of the loaded tables is OpenSM's, hop counts included. The
    // OpenSM that wrote osm.fdbs put a blank line after each switch; current
    // OpenSM (osm_dump.c) does not, and neither do we.
    let ours = ucast_routes::write(&f, &lids, &r.tables);
    let theirs = std::fs::read_to_string(&fdbs).unwrap();
    let theirs: Vec<&str> = theirs.lines().filter(|l| !l.is_empty()).collect();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours.len(), theirs.len());
    if let Some(i) = (0..ours.len()).find(|&i| ours[i] != theirs[i]) {
        panic!("line {} differs: ours {:?}, osm.fdbs {:?}", i + 1, ours[i], theirs[i]);
    }
    // And the same tables survive a trip through opensm-lfts.dump, LIDs included.
    let text = dump::opensm_lfts::write(&f, &lids, &r.tables);
    let d = dump::parse(&text, None).unwrap();
    let back = dump::derive_lids(&d, &f, 0).unwrap();
    assert_eq!(back.top_lid(), 65);
    assert!(lids.ports().iter().all(|p| back.of_port(p.end.node, p.end.port) == Some(p)));
    assert_eq!(dump::apply(&d, &f, &back).unwrap().tables, r.tables);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn ibdiagnet_fdbs_of_a_live_fabric() {
    let Some(dir) = data_dir() else { return };
    let path = topo(&dir, "ibnetdiscover-sample/ibdiagnet.fdbs");
    let d = dump::read(&path, None).unwrap();
    assert_eq!(d.switches.len(), 1);
    assert_eq!(d.switches[0].key, SwitchKey::Guid(0x0008_f105_0020_0134));
    let port = |lid: Lid| d.switches[0].routes.iter().find(|r| r.lid == lid).unwrap().port;
    assert_eq!((port(1), port(3), port(8), port(4)), (Some(0), Some(4), Some(5), None));
    // The fabric of ibnetdiscover.out, with the LIDs it reports.
    let mut f = Fabric::new();
    let s = f.add_node(NodeKind::Switch, "S-0008f10500200134", 36, Some(0x0008_f105_0020_0134)).unwrap();
    let n2 = f.add_node(NodeKind::Hca, "H-001e0bffff4cafc0", 2, Some(0x001e_0bff_ff4c_afc0)).unwrap();
    let n1 = f.add_node(NodeKind::Hca, "H-0002c90300001dd0", 2, Some(0x0002_c903_0000_1dd0)).unwrap();
    f.connect(s, 4, n2, 1, LinkSpec::default()).unwrap();
    f.connect(s, 5, n1, 1, LinkSpec::default()).unwrap();
    let e = |node, port, base| PortLid { end: LinkEnd { node, port }, base, lmc: 0 };
    let lids = LidMap::from_entries(&f, 0, vec![e(s, 0, 1), e(n2, 1, 3), e(n1, 1, 8)]).unwrap();
    let r = FileEngine::new(d).route(&f, &lids).unwrap();
    assert_eq!((r.tables.get(s, 3), r.tables.get(s, 8), r.tables.get(s, 1)), (Some(4), Some(5), Some(0)));
    assert_eq!(r.tables.get(s, 4), None);
    assert_eq!(walk(&f, &lids, &r.tables, s, 3), Some(0));
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is4_3l_1944n_vector_table_has_270_rows_of_1945() {
    let Some(dir) = data_dir() else { return };
    let fdbs = topo(&dir, "is4_3l_1944n/is4_3l_1944n.fdbs");
    let d = dump::read(&fdbs, None).unwrap();
    assert_eq!(d.format, DumpFormat::Vector);
    assert_eq!(d.switches.len(), 270);
    assert!(d.switches.iter().all(|s| s.routes.len() == 1945));
    assert_eq!(d.switches[0].key, SwitchKey::Name("SW_2_0_U1".into()));
    assert_eq!(d.switches[108].key, SwitchKey::Name("SWS_0_leaf1_U1".into()));
    // Row 0 starts `0: 255 0 1 2`: LID 0 unused, LID k on front-panel port k.
    let r0: Vec<Option<u8>> = d.switches[0].routes[..4].iter().map(|r| r.port).collect();
    assert_eq!(r0, vec![None, Some(1), Some(2), Some(3)]);
    // Row 269's last value is on the file's last line.
    let last = d.switches[269].routes.last().unwrap();
    assert_eq!((last.lid, last.port, last.line), (1944, Some(36), 5400));
}

/// The ib_flit_sim `.topo` of the small examples: `MTS800` 8-port switches and
/// `Cougar` 2-port HCAs, named `<name>/U1` as the IBDM reader names them.
fn read_flit_topo(path: &Path) -> Fabric {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = Fabric::new();
    let node = |f: &mut Fabric, ty: &str, name: &str| -> NodeId {
        let name = format!("{name}/U1");
        f.node_by_name(&name).unwrap_or_else(|| match ty {
            "MTS800" => f.add_switch(name, 8).unwrap(),
            "Cougar" => f.add_hca(name, 2).unwrap(),
            other => panic!("unexpected system type {other}"),
        })
    };
    let mut cur = None;
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            [] => cur = None,
            [ty, name] => cur = Some(node(&mut f, ty, name)),
            [p, "->", ty, name, rp] => {
                let a = cur.unwrap();
                let b = node(&mut f, ty, name);
                let (pa, pb) = (p[1..].parse::<u32>().unwrap(), rp[1..].parse::<u32>().unwrap());
                if f.link_at(a, pa as u8).is_none() {
                    f.connect(a, pa, b, pb, LinkSpec::default()).unwrap();
                }
            }
            other => panic!("unexpected line {other:?}"),
        }
    }
    f
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is1_3l_32n_vector_table_delivers_every_pair() {
    let Some(dir) = data_dir() else { return };
    let base = topo(&dir, "ib_flit_sim_small/is1_3l_32n/is1_3l_32n");
    let f = read_flit_topo(&base.with_extension("topo"));
    assert_eq!((f.switches().count(), f.cas().count()), (20, 32));
    let engine = FileEngine::open(&ibnetsim_sm::RoutingOptions {
        file: Some(base.with_extension("fdbs")),
        file_key: Some(base.with_extension("fdbs.ini")),
        ..Default::default()
    })
    .unwrap();
    let lids = engine.assign_lids(&f, 0).unwrap().unwrap();
    assert_eq!(lids.top_lid(), 32);
    let r = engine.route(&f, &lids).unwrap();
    let mut by_hops = [0u32; 6];
    for src in 1..=32u16 {
        let h = lids.owner(src).unwrap().end;
        let leaf = f.peer(h.node, h.port).unwrap().node;
        for dst in (1..=32u16).filter(|&d| d != src) {
            let hops = walk(&f, &lids, &r.tables, leaf, dst).expect("delivered");
            by_hops[hops as usize] += 1;
        }
    }
    // 1, 3 or 5 switches: same leaf, same level-1 pair, across the top.
    assert_eq!(by_hops, [96, 0, 128, 0, 768, 0]);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "needs shared/data beside the repository")]
fn is1_1l_8n_table_names_switches_the_fabric_lacks() {
    let Some(dir) = data_dir() else { return };
    let base = topo(&dir, "ib_flit_sim_small/is1_1l_8n/is1_1l_8n");
    let f = read_flit_topo(&base.with_extension("topo"));
    let d = dump::read(&base.with_extension("fdbs"), None).unwrap();
    let lids = dump::derive_lids(&d, &f, 0).unwrap();
    let err = dump::apply(&d, &f, &lids).unwrap_err().to_string();
    let ini = base.with_extension("fdbs.ini");
    assert_eq!(
        err,
        format!(
            "{}:3: switch 'SW_L0_0_1_U1' is not in the fabric (ib_flit_sim names a switch by its topology name \
             with '/' and '-' replaced by '_')",
            ini.display()
        )
    );
    // The key alone is fine.
    assert_eq!(vector::parse_key(&std::fs::read_to_string(&ini).unwrap(), Some(&ini)).unwrap().len(), 8);
}
