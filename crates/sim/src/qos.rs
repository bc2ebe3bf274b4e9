//! The QoS tables the data plane reads: SL-to-VL mapping and VL arbitration.
//!
//! These are the data plane's own small types, so that the subnet manager's QoS
//! module (OpenSM keys `qos_sl2vl`, `qos_vlarb_high`, `qos_vlarb_low`,
//! `qos_high_limit`) can feed them with a plain conversion. IBA: a switch maps
//! SL to VL per (input port, output port) (SLtoVLMappingTable, IBA 7.6.6); a CA
//! port has one table, looked up here with input port 0. A port's
//! VLArbitrationTable has high- and low-priority lists of up to 64
//! (VL, weight) entries and `LimitOfHighPriority` (IBA 7.6.9).

use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use serde::{Deserialize, Serialize};

use crate::config::{SimConfig, Sl2VlConfig, VlArbitrationConfig};
use crate::error::SimError;

/// Entries in each VLArbitration table (IBA: up to 64).
pub const MAX_VLARB_ENTRIES: usize = 64;

/// One port's VLArbitrationTable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlArbConfig {
    /// High-priority entries `(VL, weight)`; weight in 64-byte units, 0 = skip.
    #[serde(default)]
    pub high: Vec<(u8, u8)>,
    /// Low-priority entries `(VL, weight)`.
    #[serde(default)]
    pub low: Vec<(u8, u8)>,
    /// High-priority bytes, in units of 4096, that may be sent before one
    /// low-priority packet gets a turn; 0 = one packet, 255 = unbounded.
    #[serde(default)]
    pub limit_of_high_priority: u8,
}

impl VlArbConfig {
    /// Every data VL in the low table with weight 1 (one packet per turn): a
    /// packet-by-packet round robin, the table a fabric without QoS runs.
    pub fn uniform(data_vls: u8) -> Self {
        VlArbConfig { high: Vec::new(), low: (0..data_vls).map(|v| (v, 1)).collect(), limit_of_high_priority: 0 }
    }

    /// Checks entry count and VL range; `key` prefixes error keys.
    pub fn validate(&self, key: &str, data_vls: u8) -> Result<(), SimError> {
        for (name, t) in [("high", &self.high), ("low", &self.low)] {
            if t.len() > MAX_VLARB_ENTRIES {
                return Err(SimError::config(
                    format!("{key}.{name}"),
                    format!("{} entries, but a VLArbitration table holds at most {MAX_VLARB_ENTRIES}", t.len()),
                ));
            }
            for (i, &(vl, _)) in t.iter().enumerate() {
                if vl >= data_vls {
                    return Err(SimError::config(
                        format!("{key}.{name}[{i}]"),
                        format!(
                            "VL {vl} is not a data VL of this fabric (data VLs are 0..={}; VL15 is never arbitrated by table)",
                            data_vls - 1
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// VLArbitration tables of every port: one default plus per-port overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlArbMap {
    /// Table of every port without an override.
    pub default: VlArbConfig,
    /// Per-port tables, `(node, port)`; a CA port is its own port number.
    pub per_port: Vec<((NodeId, PortNum), VlArbConfig)>,
}

impl VlArbMap {
    /// The same table on every port.
    pub fn uniform(table: VlArbConfig) -> Self {
        VlArbMap { default: table, per_port: Vec::new() }
    }
}

/// SL-to-VL mapping of every port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sl2VlMap {
    /// The same SL→VL map everywhere.
    Uniform([u8; 16]),
    /// A dense table per node: `vl(node, in_port, out_port, sl)`.
    PerPort {
        /// Offset of each node's block in `vls`.
        offsets: Vec<u32>,
        /// Ports + 1 of each node (row length).
        stride: Vec<u16>,
        /// `vls[offset + (in * stride + out) * 16 + sl]`.
        vls: Vec<u8>,
    },
}

impl Sl2VlMap {
    /// SL `i` → VL `i mod data_vls`, the usual default when QoS is off.
    pub fn modulo(data_vls: u8) -> Self {
        let mut m = [0u8; 16];
        for (sl, v) in m.iter_mut().enumerate() {
            *v = (sl as u8) % data_vls.max(1);
        }
        Sl2VlMap::Uniform(m)
    }

    /// A table built from `f(node, in_port, out_port, sl)` for every switch port
    /// pair and, for CAs, `f(node, 0, port, sl)`.
    pub fn from_fn(fabric: &Fabric, mut f: impl FnMut(NodeId, PortNum, PortNum, u8) -> u8) -> Self {
        let mut offsets = Vec::with_capacity(fabric.num_nodes());
        let mut stride = Vec::with_capacity(fabric.num_nodes());
        let mut vls = Vec::new();
        for n in fabric.ids() {
            let node = fabric.node(n);
            let s = node.num_ports as usize + 1;
            offsets.push(vls.len() as u32);
            stride.push(s as u16);
            for inp in 0..s {
                for out in 0..s {
                    for sl in 0..16u8 {
                        let relevant = if node.kind.is_switch() { inp != 0 && out != 0 } else { inp == 0 && out != 0 };
                        vls.push(if relevant { f(n, inp as PortNum, out as PortNum, sl) } else { 0 });
                    }
                }
            }
        }
        Sl2VlMap::PerPort { offsets, stride, vls }
    }

    /// The VL a packet of `sl` takes from `in_port` to `out_port` of `node`
    /// (`in_port` 0 at a CA).
    #[inline]
    pub fn vl(&self, node: u32, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        match self {
            Sl2VlMap::Uniform(m) => m[sl as usize & 15],
            Sl2VlMap::PerPort { offsets, stride, vls } => {
                let s = stride[node as usize] as usize;
                vls[offsets[node as usize] as usize + (in_port as usize * s + out_port as usize) * 16 + (sl as usize & 15)]
            }
        }
    }

    /// The highest VL the map uses for any SL in `sls`, for validation.
    pub fn max_vl(&self, sls: &[u8]) -> u8 {
        match self {
            Sl2VlMap::Uniform(m) => sls.iter().map(|&s| m[s as usize & 15]).max().unwrap_or(0),
            Sl2VlMap::PerPort { offsets, stride, vls } => {
                let mut max = 0;
                for (n, &off) in offsets.iter().enumerate() {
                    let s = stride[n] as usize;
                    for i in 0..s * s {
                        for &sl in sls {
                            max = max.max(vls[off as usize + i * 16 + sl as usize]);
                        }
                    }
                }
                max
            }
        }
    }
}

/// The QoS state of a fabric as the data plane needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QosTables {
    /// SL → VL per port pair.
    pub sl2vl: Sl2VlMap,
    /// VL arbitration per port.
    pub vlarb: VlArbMap,
}

impl QosTables {
    /// The tables a subnet manager programmed, e.g. from OpenSM's `qos_*`
    /// options ([`ibnetsim_sm::qos::QosConfig::apply`]). Every cabled output
    /// port gets its own VLArbitration table (switch port 0 carries no data).
    pub fn from_subnet_manager(
        fabric: &Fabric,
        sl2vl: &ibnetsim_sm::qos::Sl2VlTables,
        vlarb: &ibnetsim_sm::qos::VlArbTables,
    ) -> QosTables {
        let map = Sl2VlMap::from_fn(fabric, |n, i, o, sl| sl2vl.vl(n, i, o, sl));
        let mut per_port = Vec::new();
        for n in fabric.ids() {
            for (p, _) in fabric.node(n).connected_ports() {
                per_port.push(((n, p), vlarb.get(n, p).clone().into()));
            }
        }
        QosTables { sl2vl: map, vlarb: VlArbMap { default: VlArbConfig::default(), per_port } }
    }

    /// The tables paper 001's admission control programs: its SL2VL map on
    /// every port and, on every cabled output port, the VLArbitration table
    /// the accepted connections left there. The ports must run
    /// [`ibnetsim_sm::qos::admission::DATA_VLS`] data VLs.
    pub fn from_admission(adm: &ibnetsim_sm::qos::admission::Admission<'_>) -> QosTables {
        let per_port =
            adm.ports().map(|(e, _)| ((e.node, e.port), adm.vlarb(e).expect("a listed port is cabled").into())).collect();
        QosTables { sl2vl: Sl2VlMap::Uniform(adm.sl2vl()), vlarb: VlArbMap { default: adm.idle_vlarb().into(), per_port } }
    }
}

/// The subnet manager's table for one port is the same IBA structure.
impl From<ibnetsim_sm::qos::VlArbConfig> for VlArbConfig {
    fn from(t: ibnetsim_sm::qos::VlArbConfig) -> Self {
        VlArbConfig { high: t.high, low: t.low, limit_of_high_priority: t.limit_of_high_priority }
    }
}

/// The QoS tables a config describes (the same on every port).
pub fn from_config(c: &SimConfig) -> Result<QosTables, SimError> {
    crate::build::check_data_vls(c.data_vls)?;
    let sl2vl = match &c.sl2vl {
        Sl2VlConfig::Modulo => Sl2VlMap::modulo(c.data_vls),
        Sl2VlConfig::Table { vl_of_sl } => {
            if vl_of_sl.len() != 16 {
                return Err(SimError::config(
                    "sl2vl.vl_of_sl",
                    format!("needs one VL for each of the 16 SLs, got {} entries", vl_of_sl.len()),
                ));
            }
            let mut m = [0u8; 16];
            for (sl, &vl) in vl_of_sl.iter().enumerate() {
                if vl >= c.data_vls {
                    return Err(SimError::config(
                        format!("sl2vl.vl_of_sl[{sl}]"),
                        format!("VL {vl} is not a data VL (data VLs are 0..={})", c.data_vls - 1),
                    ));
                }
                m[sl] = vl;
            }
            Sl2VlMap::Uniform(m)
        }
    };
    let table = match &c.vl_arbitration {
        VlArbitrationConfig::Iba(t) if t.high.is_empty() && t.low.is_empty() => VlArbConfig::uniform(c.data_vls),
        VlArbitrationConfig::Iba(t) => t.clone(),
        VlArbitrationConfig::RoundRobin => VlArbConfig::uniform(c.data_vls),
    };
    Ok(QosTables { sl2vl, vlarb: VlArbMap::uniform(table) })
}


#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;

    #[test]
    fn modulo_wraps() {
        let m = Sl2VlMap::modulo(4);
        assert_eq!(m.vl(0, 1, 2, 5), 1);
        assert_eq!(m.vl(3, 0, 1, 15), 3);
    }

    #[test]
    fn from_fn_is_per_port_pair() {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 3).unwrap();
        let h = f.add_hca("h", 1).unwrap();
        f.connect(s, 1, h, 1, LinkSpec::default()).unwrap();
        let m = Sl2VlMap::from_fn(&f, |n, i, o, sl| if n == s { (i + o + sl) % 4 } else { 3 });
        assert_eq!(m.vl(s.0, 1, 2, 0), 3);
        assert_eq!(m.vl(s.0, 2, 3, 1), 2);
        assert_eq!(m.vl(h.0, 0, 1, 7), 3);
        assert_eq!(m.max_vl(&[0, 1]), 3);
    }

    #[test]
    fn vlarb_validation_names_entry() {
        let t = VlArbConfig { high: vec![(0, 1)], low: vec![(1, 4), (4, 1)], limit_of_high_priority: 0 };
        let e = t.validate("vl_arbitration", 2).unwrap_err().to_string();
        assert!(e.contains("'vl_arbitration.low[1]'") && e.contains("VL 4"), "{e}");
        assert!(t.validate("x", 5).is_ok());
    }
}
