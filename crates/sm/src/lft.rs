//! Linear forwarding tables: for each switch, the output port of every LID.

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use crate::lid::Lid;

/// Table entry for a LID the switch cannot forward (OpenSM's `OSM_NO_PATH`).
pub const NO_PATH: u8 = 0xFF;

/// One switch's linear forwarding table, indexed by LID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lft {
    ports: Vec<u8>,
}

impl Lft {
    /// A table for LIDs `0..=top_lid` with every entry [`NO_PATH`].
    pub fn new(top_lid: Lid) -> Self {
        Lft { ports: vec![NO_PATH; top_lid as usize + 1] }
    }

    /// Output port for `lid`, or `None` when there is no path.
    #[inline]
    pub fn get(&self, lid: Lid) -> Option<PortNum> {
        match self.ports.get(lid as usize) {
            Some(&p) if p != NO_PATH => Some(p),
            _ => None,
        }
    }

    /// Sets the output port for `lid`.
    #[inline]
    pub fn set(&mut self, lid: Lid, port: PortNum) {
        self.ports[lid as usize] = port;
    }

    /// Raw entries, [`NO_PATH`] where unset.
    pub fn entries(&self) -> &[u8] {
        &self.ports
    }
}

/// The forwarding tables of every switch of a fabric, indexed by node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardingTables {
    top_lid: Lid,
    lfts: Vec<Option<Lft>>,
}

impl ForwardingTables {
    /// Empty tables (every entry [`NO_PATH`]) for every switch of `fabric`.
    pub fn new(fabric: &Fabric, top_lid: Lid) -> Self {
        let lfts = fabric.nodes().iter().map(|n| n.kind.is_switch().then(|| Lft::new(top_lid))).collect();
        ForwardingTables { top_lid, lfts }
    }

    /// Highest LID of the tables.
    pub fn top_lid(&self) -> Lid {
        self.top_lid
    }

    /// The table of switch `sw`; `None` for a CA.
    pub fn lft(&self, sw: NodeId) -> Option<&Lft> {
        self.lfts.get(sw.index()).and_then(|l| l.as_ref())
    }

    /// Output port of switch `sw` for `lid`.
    #[inline]
    pub fn get(&self, sw: NodeId, lid: Lid) -> Option<PortNum> {
        self.lft(sw).and_then(|l| l.get(lid))
    }

    /// Sets the output port of switch `sw` for `lid`.
    ///
    /// # Panics
    /// If `sw` is not a switch or `lid` is beyond the tables: both are engine bugs.
    #[inline]
    pub fn set(&mut self, sw: NodeId, lid: Lid, port: PortNum) {
        self.lfts[sw.index()].as_mut().expect("forwarding table of a non-switch").set(lid, port);
    }
}
