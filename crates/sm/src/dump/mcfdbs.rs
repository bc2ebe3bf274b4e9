//! OpenSM's multicast forwarding table dump, `opensm.mcfdbs`, as
//! `dump_mcast_routes` in opensm/osm_dump.c writes it (OpenSM writes it with
//! the other routing dumps when routing logging is on).
//!
//! ```text
//!
//! Switch 0x0002c90300000200
//! LID    : Out Port(s)
//! 0xC000 : 0x001  0x002 
//! ```
//!
//! Byte for byte: switches in OpenSM's `sw_guid_tbl` order
//! ([`super::opensm_switch_order`]), a switch only if it has an entry; its
//! header starts with a blank line; then one line per MLID in ascending order,
//! `0x%04X :` followed by ` 0x%03X ` for each port in ascending order (so ports
//! are two blanks apart and the line ends in a blank). Hex digits are upper case.
//! Write-only: the simulator takes multicast groups from its configuration.

use std::fmt::Write as _;

use ibnetsim_fabric::Fabric;

use super::opensm_switch_order;
use crate::mft::MulticastTables;

/// Writes the multicast tables as OpenSM's `opensm.mcfdbs`.
pub fn write(fabric: &Fabric, mfts: &MulticastTables) -> String {
    let mut out = String::new();
    for sw in opensm_switch_order(fabric) {
        let entries = mfts.entries(sw);
        if entries.is_empty() {
            continue;
        }
        // `fmt::Write` for `String` cannot fail.
        let _ = write!(out, "\nSwitch 0x{:016x}\nLID    : Out Port(s)\n", fabric.node(sw).guid);
        for (mlid, ports) in entries {
            let _ = write!(out, "0x{mlid:04X} :");
            for p in ports {
                let _ = write!(out, " 0x{p:03X} ");
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mft::MulticastGroup;
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    #[test]
    fn writes_opensm_bytes() {
        // a (GUID ..0200) - b (GUID ..0100), a member on each; b sorts first.
        let mut f = Fabric::new();
        let a = f.add_node(NodeKind::Switch, "a", 20, Some(0x0002_c903_0000_0200)).unwrap();
        let b = f.add_node(NodeKind::Switch, "b", 20, Some(0x0002_c903_0000_0100)).unwrap();
        f.connect(a, 1, b, 1, LinkSpec::default()).unwrap();
        let mut hosts = Vec::new();
        for (i, (sw, p)) in [(a, 2), (b, 17), (a, 3)].into_iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, p, h, 1, LinkSpec::default()).unwrap();
            hosts.push((h, 1));
        }
        let idle = f.add_switch("idle", 4).unwrap();
        f.connect(idle, 1, b, 18, LinkSpec::default()).unwrap();
        let groups = vec![
            MulticastGroup { mlid: 0xFFFE, members: hosts[..2].to_vec() },
            MulticastGroup { mlid: 0xC000, members: vec![hosts[0], hosts[2]] },
        ];
        let t = MulticastTables::build(&f, groups).unwrap();
        assert_eq!(t.get(idle, 0xC000), None);
        let want = "\nSwitch 0x0002c90300000100\nLID    : Out Port(s)\n\
                    0xFFFE : 0x001  0x011 \n\
                    \nSwitch 0x0002c90300000200\nLID    : Out Port(s)\n\
                    0xC000 : 0x002  0x003 \n\
                    0xFFFE : 0x001  0x002 \n";
        assert_eq!(write(&f, &t), want);
        assert_eq!(write(&f, &MulticastTables::new()), "");
    }
}
