//! Which virtual lane a route's packets use on each link: the SL of every
//! route, and the SLtoVL tables that turn it into a VL hop by hop.
//!
//! IBA 7.6.6: a packet keeps its service level from source to destination; at
//! every output port the VL is looked up from the SL in the SLtoVL table of the
//! (input port, output port) pair of a switch, or of the sending port of a CA.
//! VL15 carries only subnet management, so a data packet whose SL maps to VL15
//! is dropped (the way OpenSM's `qos_sl2vl` disables an SL).
//!
//! The analysis only needs the lookup, so it reads tables through the small
//! [`Sl2VlLookup`] trait: the QoS module's tables, a closure or the default
//! spread [`ModuloSl2Vl`] (SL `i` → VL `i mod n`, OpenSM's default folded onto
//! `n` data VLs) all implement it.

use ibnetsim_fabric::{LinkEnd, NodeId, PortNum};

use crate::error::SmError;
use crate::lid::Lid;

/// Highest data VL plus one: VL15 is management only.
pub const VL15: u8 = 15;

/// The SLtoVL mapping of a whole fabric.
pub trait Sl2VlLookup {
    /// The VL taken on `out_port` of `node` by a packet of service level `sl`
    /// (0..=15) that entered at `in_port`. For a CA, `out_port` is the sending
    /// port and `in_port` is 0. A result of 15 or more means the packet is dropped.
    fn vl(&self, node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8;
}

/// Any `Fn(node, in_port, out_port, sl) -> vl` is a lookup; tests and callers
/// with a hand-made policy (a dateline, say) need nothing more.
impl<F: Fn(NodeId, PortNum, PortNum, u8) -> u8> Sl2VlLookup for F {
    #[inline]
    fn vl(&self, node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        self(node, in_port, out_port, sl)
    }
}

/// SL `i` → VL `i mod data_vls` on every port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuloSl2Vl {
    data_vls: u8,
}

impl ModuloSl2Vl {
    /// The spread over `data_vls` data VLs (1..=15).
    pub fn new(data_vls: u8) -> Result<Self, SmError> {
        if (1..=VL15).contains(&data_vls) {
            Ok(ModuloSl2Vl { data_vls })
        } else {
            Err(SmError::option("data_vls", format!("{data_vls} data VLs is out of range; IBA ports operate 1..=15")))
        }
    }

    /// Number of data VLs.
    pub fn data_vls(self) -> u8 {
        self.data_vls
    }
}

impl Default for ModuloSl2Vl {
    /// One data VL: every SL on VL0.
    fn default() -> Self {
        ModuloSl2Vl { data_vls: 1 }
    }
}

impl Sl2VlLookup for ModuloSl2Vl {
    #[inline]
    fn vl(&self, _node: NodeId, _in_port: PortNum, _out_port: PortNum, sl: u8) -> u8 {
        sl % self.data_vls
    }
}

/// The service level of each route (OpenSM's `path_sl`).
#[derive(Clone, Copy)]
pub enum PathSl<'a> {
    /// Every (source port, destination LID) pair uses this SL.
    Fixed(u8),
    /// The SL of the pair (source CA port, destination LID). A table of pairs
    /// is passed as a closure over it.
    PerPair(&'a (dyn Fn(LinkEnd, Lid) -> u8 + Sync)),
}

impl std::fmt::Debug for PathSl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathSl::Fixed(sl) => write!(f, "PathSl::Fixed({sl})"),
            PathSl::PerPair(_) => f.write_str("PathSl::PerPair(..)"),
        }
    }
}

/// Where the SLtoVL tables come from.
#[derive(Clone, Copy)]
pub enum Sl2VlSource<'a> {
    /// The spread SL `i` → VL `i mod n` everywhere.
    Modulo(ModuloSl2Vl),
    /// Tables given by the caller (the QoS module's, or a closure).
    Tables(&'a (dyn Sl2VlLookup + Sync)),
}

/// The SL/VL configuration the credit-loop check reads.
#[derive(Clone, Copy)]
pub struct SlView<'a> {
    /// SLtoVL tables.
    pub sl2vl: Sl2VlSource<'a>,
    /// SL of each route.
    pub path_sl: PathSl<'a>,
}

impl Default for SlView<'_> {
    /// One data VL and SL 0 for every route.
    fn default() -> Self {
        SlView { sl2vl: Sl2VlSource::Modulo(ModuloSl2Vl::default()), path_sl: PathSl::Fixed(0) }
    }
}

impl std::fmt::Debug for SlView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables = match self.sl2vl {
            Sl2VlSource::Modulo(m) => format!("SL i -> VL i mod {}", m.data_vls),
            Sl2VlSource::Tables(_) => "tables".to_string(),
        };
        f.debug_struct("SlView").field("sl2vl", &tables).field("path_sl", &self.path_sl).finish()
    }
}

impl<'a> SlView<'a> {
    /// SL `i` → VL `i mod data_vls` on every port, SL 0 for every route.
    pub fn modulo(data_vls: u8) -> Result<Self, SmError> {
        Ok(SlView { sl2vl: Sl2VlSource::Modulo(ModuloSl2Vl::new(data_vls)?), path_sl: PathSl::Fixed(0) })
    }

    /// Given tables, SL 0 for every route.
    pub fn with_tables(tables: &'a (dyn Sl2VlLookup + Sync)) -> Self {
        SlView { sl2vl: Sl2VlSource::Tables(tables), path_sl: PathSl::Fixed(0) }
    }

    /// The same tables with another route-SL choice.
    pub fn with_path_sl(self, path_sl: PathSl<'a>) -> Self {
        SlView { path_sl, ..self }
    }

    /// The VL on `out_port` of `node` (see [`Sl2VlLookup::vl`]).
    #[inline]
    pub fn vl(&self, node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        match self.sl2vl {
            Sl2VlSource::Modulo(m) => m.vl(node, in_port, out_port, sl),
            Sl2VlSource::Tables(t) => t.vl(node, in_port, out_port, sl),
        }
    }

    /// The SL of the route from CA port `src` to `dlid`, checked to be 0..=15.
    #[inline]
    pub fn sl(&self, src: LinkEnd, dlid: Lid) -> Result<u8, SmError> {
        let sl = match self.path_sl {
            PathSl::Fixed(sl) => sl,
            PathSl::PerPair(f) => f(src, dlid),
        };
        if sl < 16 {
            Ok(sl)
        } else {
            Err(SmError::option(
                "path_sl",
                format!("SL {sl} given for the route to LID {dlid:#06x} is out of range; SLs are 0..=15"),
            ))
        }
    }
}

/// The subnet manager's programmed SL2VL tables.
impl Sl2VlLookup for crate::qos::Sl2VlTables {
    fn vl(&self, node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        crate::qos::Sl2VlTables::vl(self, node, in_port, out_port, sl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modulo_spreads_and_rejects_bad_counts() {
        let m = ModuloSl2Vl::new(4).unwrap();
        let vls: Vec<u8> = (0..16).map(|sl| m.vl(NodeId(0), 1, 2, sl)).collect();
        assert_eq!(vls, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert!(ModuloSl2Vl::new(0).is_err());
        assert!(ModuloSl2Vl::new(16).is_err());
        assert_eq!(ModuloSl2Vl::new(15).unwrap().vl(NodeId(0), 0, 1, 15), 0);
    }

    #[test]
    fn closures_are_lookups_and_bad_sls_are_errors() {
        let f = |_n: NodeId, i: PortNum, _o: PortNum, sl: u8| if i == 3 { 1 } else { sl };
        let view = SlView::with_tables(&f);
        assert_eq!(view.vl(NodeId(2), 3, 1, 0), 1);
        assert_eq!(view.vl(NodeId(2), 2, 1, 0), 0);
        let bad = |_s: LinkEnd, _d: Lid| 16u8;
        let view = view.with_path_sl(PathSl::PerPair(&bad));
        let e = view.sl(LinkEnd { node: NodeId(0), port: 1 }, 7).unwrap_err().to_string();
        assert!(e.contains("SL 16") && e.contains("0x0007"), "{e}");
    }
}
