//! Quality of service state the subnet manager leaves on the ports: SLtoVL
//! mapping tables and VL arbitration tables, and OpenSM's options that set them.
//!
//! - [`sl2vl`]: IBA 7.6.6 / 14.2.5.8 `SLtoVLMappingTable`, one per (switch,
//!   input port, output port) and one per CA port, stored deduplicated.
//! - [`vlarb`]: IBA 7.6.9 / 14.2.5.9 `VLArbitrationTable` (high and low tables)
//!   and `PortInfo:VLHighLimit`, one per output port.
//! - [`opensm_conf`]: OpenSM's `qos*` options (from `opensm.conf` or from the
//!   `[qos]` table of a scenario file) and [`QosConfig::apply`], which programs
//!   the tables the way OpenSM's `osm_qos_setup` (opensm/osm_qos.c) does.
//!
//! Both table sets address ports through a [`PortLayout`]: a slot for every
//! `(node, port)` with `port` in `0..=num_ports`, and the number of operational
//! data VLs of each port. Our fabric model has no `PortInfo:VLCap`, so the
//! operational VLs are what the configuration says (see
//! [`QosConfig::apply`]: the global `qos_max_vls` on every port, as OpenSM's
//! masking never reads the per-class `*_max_vls`).

pub mod admission;
pub mod opensm_conf;
pub mod sl2vl;
pub mod sl2vl_dump;
pub mod vlarb;

pub use opensm_conf::{
    format_sl2vl, format_vlarb, parse_sl2vl, parse_vlarb, PortClass, QosConfig, QosParams, QosSection, QosSet,
    QosSetSection, RawOption,
};
pub use sl2vl::{Sl2VlMap, Sl2VlTables, VL_DROP};
pub use vlarb::{VlArbCap, VlArbConfig, VlArbTables, VLARB_MAX_ENTRIES};

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use crate::error::SmError;

/// Most data VLs a port can operate (VL0..VL14); VL15 is management only.
pub const MAX_DATA_VLS: u8 = 15;

/// Folds a configured VL onto a port with `data_vls` operational data VLs.
///
/// OpenSM masks every VL it writes with `(1 << (OperationalVLs - 1)) - 1`
/// (`vlarb_update_table_block` and `sl2vl_update_table` in osm_qos.c), leaving
/// VL15 alone in SL2VL tables. IBA's OperationalVLs encoding only allows 1, 2,
/// 4, 8 or 15 data VLs, and for those counts the mask equals `vl % data_vls`;
/// the remainder is how we extend it to the other counts the simulator allows.
#[inline]
pub fn fold_vl(vl: u8, data_vls: u8) -> u8 {
    if vl == sl2vl::VL_DROP {
        vl
    } else {
        vl % data_vls
    }
}

/// Checks a data-VL count given by a caller.
pub(crate) fn check_data_vls(key: &str, data_vls: u8) -> Result<(), SmError> {
    if (1..=MAX_DATA_VLS).contains(&data_vls) {
        Ok(())
    } else {
        Err(SmError::option(key, format!("{data_vls} data VLs is out of range; IBA ports operate 1..=15 data VLs")))
    }
}

/// Where each `(node, port)` lives in per-port arrays, and how many data VLs it operates.
#[derive(Debug, Clone)]
pub struct PortLayout {
    /// `offsets[n]` is the slot of `(n, 0)`; `offsets[n + 1] - offsets[n]` is `num_ports + 1`.
    offsets: Vec<u32>,
    switch: Vec<bool>,
    names: Vec<Box<str>>,
    vls: Vec<u8>,
}

impl PortLayout {
    /// Every port operates `data_vls` data VLs.
    pub fn uniform(fabric: &Fabric, data_vls: u8) -> Result<Self, SmError> {
        check_data_vls("data_vls", data_vls)?;
        Ok(Self::from_fn(fabric, |_, _| data_vls))
    }

    /// Operational data VLs given per port by `vls` (which must return 1..=15).
    pub(crate) fn from_fn(fabric: &Fabric, vls: impl Fn(NodeId, PortNum) -> u8) -> Self {
        let mut offsets = Vec::with_capacity(fabric.num_nodes() + 1);
        let mut per_port = Vec::new();
        for n in fabric.ids() {
            offsets.push(per_port.len() as u32);
            for p in 0..=fabric.node(n).num_ports {
                per_port.push(vls(n, p));
            }
        }
        offsets.push(per_port.len() as u32);
        PortLayout {
            offsets,
            switch: fabric.nodes().iter().map(|n| n.kind.is_switch()).collect(),
            names: fabric.nodes().iter().map(|n| n.name.clone().into_boxed_str()).collect(),
            vls: per_port,
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.switch.len()
    }

    /// Number of per-port slots (every node's ports 0..=num_ports).
    pub fn num_slots(&self) -> usize {
        self.vls.len()
    }

    /// Highest port number of `node`.
    #[inline]
    pub fn num_ports(&self, node: NodeId) -> PortNum {
        (self.offsets[node.index() + 1] - self.offsets[node.index()] - 1) as PortNum
    }

    /// True if `node` is a switch.
    #[inline]
    pub fn is_switch(&self, node: NodeId) -> bool {
        self.switch[node.index()]
    }

    /// The node's name, for messages.
    pub fn name(&self, node: NodeId) -> &str {
        &self.names[node.index()]
    }

    /// Index of `(node, port)` in per-port arrays.
    #[inline]
    pub fn slot(&self, node: NodeId, port: PortNum) -> usize {
        debug_assert!(port <= self.num_ports(node), "port {port} beyond node {}", self.name(node));
        self.offsets[node.index()] as usize + port as usize
    }

    /// Operational data VLs of `(node, port)`.
    #[inline]
    pub fn data_vls(&self, node: NodeId, port: PortNum) -> u8 {
        self.vls[self.slot(node, port)]
    }

    /// The most data VLs any port operates: what a data plane must provision.
    pub fn max_data_vls(&self) -> u8 {
        self.vls.iter().copied().max().unwrap_or(1)
    }

    /// Checks that `port` exists on `node` (0 only on a switch), for setters.
    pub(crate) fn check_port(&self, what: &str, node: NodeId, port: PortNum) -> Result<(), SmError> {
        if node.index() >= self.num_nodes() {
            return Err(SmError::option(what, format!("node #{} is not in this fabric", node.0)));
        }
        let max = self.num_ports(node);
        let min = if self.is_switch(node) { 0 } else { 1 };
        if port < min || port > max {
            return Err(SmError::option(
                what,
                format!("port {port} does not exist on '{}' (ports {min}..={max})", self.name(node)),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;

    #[test]
    fn fold_matches_opensm_mask_for_iba_vl_counts() {
        // OperationalVLs encodings 1..=5 mean 1, 2, 4, 8, 15 data VLs.
        for (op_vls, n) in [(1u32, 1u8), (2, 2), (3, 4), (4, 8), (5, 15)] {
            let mask = ((1u32 << (op_vls - 1)) - 1) as u8;
            for vl in 0..15u8 {
                assert_eq!(fold_vl(vl, n), vl & mask, "vl {vl} on {n} VLs");
            }
            assert_eq!(fold_vl(15, n), 15);
        }
        assert_eq!(fold_vl(7, 3), 1);
    }

    #[test]
    fn layout_slots_and_ports() {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 3).unwrap();
        let h = f.add_hca("h", 2).unwrap();
        f.connect(s, 1, h, 1, LinkSpec::default()).unwrap();
        let l = PortLayout::from_fn(&f, |n, p| if n == h { 2 } else { p + 1 });
        assert_eq!(l.num_slots(), 4 + 3);
        assert_eq!(l.slot(h, 2), 6);
        assert_eq!(l.data_vls(s, 3), 4);
        assert_eq!(l.data_vls(h, 1), 2);
        assert_eq!(l.max_data_vls(), 4);
        assert!(l
            .check_port("x", h, 0)
            .unwrap_err()
            .to_string()
            .contains("port 0 does not exist on 'h' (ports 1..=2)"));
        assert!(l.check_port("x", s, 0).is_ok());
        assert!(PortLayout::uniform(&f, 16).is_err());
        assert!(PortLayout::uniform(&f, 0).is_err());
    }
}
