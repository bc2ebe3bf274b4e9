//! SLtoVL mapping tables (IBA 7.6.6, attribute `SLtoVLMappingTable` 14.2.5.8).
//!
//! A switch has one 16-entry table per (input port, output port): the VL a
//! packet of service level SL takes on the output link. A CA port has one table
//! for the packets it sends (the input port plays no part). VL15 carries only
//! subnet management; a data packet whose SL maps to VL15 is discarded (IBA
//! 7.6.6), which is how OpenSM's `qos_sl2vl` lets a user disable an SL
//! (doc/qos-config.txt: "the VL15 used here means drop this SL").
//!
//! Real fabrics program the same table on almost every pair, so tables live
//! once in a deduplicated pool and each node keeps indices into it in the
//! coarsest shape that describes it: one index for the whole node, one per
//! output port, or one per (input, output) pair. A 2,000-host fabric with
//! default tables thus costs a few bytes per node; only switches given tables
//! per input port pay `(ports + 1)^2` indices.

use std::sync::Arc;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};
use rustc_hash::FxHashMap;

use super::PortLayout;
use crate::error::SmError;

/// The VL that means "drop": VL15 is reserved for subnet management packets.
pub const VL_DROP: u8 = 15;

/// One SLtoVL table: entry `sl` is the VL for service level `sl`.
pub type Sl2VlMap = [u8; 16];

/// How one node indexes the pool.
#[derive(Debug, Clone)]
enum Shape {
    /// Every (input, output) pair, or every port of a CA, uses one table.
    Shared(u32),
    /// One table per output port (a CA's ports, or a switch whose inputs all agree).
    PerOut(Box<[u32]>),
    /// One table per (input, output) pair of a switch, row-major by input port.
    Full { stride: u16, ix: Box<[u32]> },
}

/// The SLtoVL tables of a whole fabric.
#[derive(Debug, Clone)]
pub struct Sl2VlTables {
    layout: Arc<PortLayout>,
    pool: Vec<Sl2VlMap>,
    dedup: FxHashMap<Sl2VlMap, u32>,
    nodes: Vec<Shape>,
}

/// The table every port gets by default: SL `i` to VL `i mod data_vls`.
pub fn uniform_map(data_vls: u8) -> Sl2VlMap {
    std::array::from_fn(|sl| sl as u8 % data_vls)
}

impl Sl2VlTables {
    /// Every port maps SL `i` to VL `i mod data_vls`, the spread OpenSM's default
    /// `qos_sl2vl` gives once folded onto fewer VLs. `data_vls` is 1..=15.
    pub fn uniform(fabric: &Fabric, data_vls: u8) -> Result<Self, SmError> {
        Ok(Self::with_layout(Arc::new(PortLayout::uniform(fabric, data_vls)?), &uniform_map(data_vls)))
    }

    /// Every node uses `map` everywhere (the caller has checked it fits every port).
    pub(crate) fn with_layout(layout: Arc<PortLayout>, map: &Sl2VlMap) -> Self {
        let mut t = Sl2VlTables { nodes: Vec::new(), layout, pool: Vec::new(), dedup: FxHashMap::default() };
        let ix = t.intern(map);
        t.nodes = vec![Shape::Shared(ix); t.layout.num_nodes()];
        t
    }

    /// The VL for a packet of service level `sl` (0..=15) that entered `node` at
    /// `in_port` and leaves at `out_port`. For a CA, `out_port` is the CA port
    /// it is sent from and `in_port` is ignored. 15 means the packet is dropped.
    #[inline]
    pub fn vl(&self, node: NodeId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        debug_assert!(sl < 16, "SL {sl} is not 0..=15");
        self.pool[self.index(node, in_port, out_port) as usize][sl as usize & 15]
    }

    /// The whole table used from `in_port` to `out_port` of `node`.
    pub fn table(&self, node: NodeId, in_port: PortNum, out_port: PortNum) -> &Sl2VlMap {
        &self.pool[self.index(node, in_port, out_port) as usize]
    }

    #[inline]
    fn index(&self, node: NodeId, in_port: PortNum, out_port: PortNum) -> u32 {
        debug_assert!(in_port <= self.layout.num_ports(node) && out_port <= self.layout.num_ports(node));
        match &self.nodes[node.index()] {
            Shape::Shared(i) => *i,
            Shape::PerOut(ix) => ix[out_port as usize],
            Shape::Full { stride, ix } => ix[in_port as usize * *stride as usize + out_port as usize],
        }
    }

    /// The most data VLs any port operates.
    pub fn data_vls(&self) -> u8 {
        self.layout.max_data_vls()
    }

    /// Operational data VLs of one port.
    pub fn port_data_vls(&self, node: NodeId, port: PortNum) -> u8 {
        self.layout.data_vls(node, port)
    }

    /// The port layout (shared with the VL arbitration tables built alongside).
    pub fn layout(&self) -> &Arc<PortLayout> {
        &self.layout
    }

    /// Distinct tables in the pool (including ones no longer referenced).
    pub fn pool_len(&self) -> usize {
        self.pool.len()
    }

    /// Sets the table from `in_port` to `out_port` of switch `node`.
    pub fn set_pair(
        &mut self,
        node: NodeId,
        in_port: PortNum,
        out_port: PortNum,
        map: &Sl2VlMap,
    ) -> Result<(), SmError> {
        self.check_switch(node)?;
        self.layout.check_port("sl2vl", node, in_port)?;
        self.check_map(node, out_port, map)?;
        self.put_pair(node, in_port, out_port, map);
        Ok(())
    }

    /// Sets the table of every input port towards `out_port` of switch `node`
    /// (OpenSM's optimized SL2VL write, attribute modifier `0x20000 | out`).
    pub fn set_out_port(&mut self, node: NodeId, out_port: PortNum, map: &Sl2VlMap) -> Result<(), SmError> {
        self.check_switch(node)?;
        self.check_map(node, out_port, map)?;
        self.put_out_port(node, out_port, map);
        Ok(())
    }

    /// Sets every (input, output) pair of switch `node`, port 0 included.
    pub fn set_switch(&mut self, node: NodeId, map: &Sl2VlMap) -> Result<(), SmError> {
        self.check_switch(node)?;
        for out in 0..=self.layout.num_ports(node) {
            self.check_map(node, out, map)?;
        }
        let ix = self.intern(map);
        self.nodes[node.index()] = Shape::Shared(ix);
        Ok(())
    }

    /// Sets the table of CA `node`'s `port`.
    pub fn set_ca_port(&mut self, node: NodeId, port: PortNum, map: &Sl2VlMap) -> Result<(), SmError> {
        if self.layout.is_switch(node) {
            return Err(SmError::option(
                "sl2vl",
                format!("'{}' is a switch; give its tables per (input, output) port pair", self.layout.name(node)),
            ));
        }
        self.check_map(node, port, map)?;
        self.put_out_port(node, port, map);
        Ok(())
    }

    /// Sets the table of every port of every CA.
    pub fn set_all_cas(&mut self, map: &Sl2VlMap) -> Result<(), SmError> {
        let cas: Vec<NodeId> =
            (0..self.layout.num_nodes() as u32).map(NodeId).filter(|&n| !self.layout.is_switch(n)).collect();
        for &n in &cas {
            for p in 1..=self.layout.num_ports(n) {
                self.check_map(n, p, map)?;
            }
        }
        let ix = self.intern(map);
        for n in cas {
            self.nodes[n.index()] = Shape::Shared(ix);
        }
        Ok(())
    }

    fn check_switch(&self, node: NodeId) -> Result<(), SmError> {
        if node.index() >= self.layout.num_nodes() {
            return Err(SmError::option("sl2vl", format!("node #{} is not in this fabric", node.0)));
        }
        if !self.layout.is_switch(node) {
            return Err(SmError::option(
                "sl2vl",
                format!("'{}' is a channel adapter; it has one table per port (set_ca_port)", self.layout.name(node)),
            ));
        }
        Ok(())
    }

    /// Every VL must be 15 (drop) or one the output port operates.
    fn check_map(&self, node: NodeId, out_port: PortNum, map: &Sl2VlMap) -> Result<(), SmError> {
        self.layout.check_port("sl2vl", node, out_port)?;
        let n = self.layout.data_vls(node, out_port);
        for (sl, &vl) in map.iter().enumerate() {
            if vl != VL_DROP && vl >= n {
                return Err(SmError::option(
                    "sl2vl",
                    format!(
                        "SL {sl} maps to VL {vl}, but '{}' port {out_port} operates {n} data VLs (0..={}); use 15 to drop the SL",
                        self.layout.name(node),
                        n - 1
                    ),
                ));
            }
        }
        Ok(())
    }

    fn intern(&mut self, map: &Sl2VlMap) -> u32 {
        if let Some(&i) = self.dedup.get(map) {
            return i;
        }
        let i = self.pool.len() as u32;
        self.pool.push(*map);
        self.dedup.insert(*map, i);
        i
    }

    /// Sets all inputs towards `out` (for a CA: its port `out`) without checks.
    pub(crate) fn put_out_port(&mut self, node: NodeId, out: PortNum, map: &Sl2VlMap) {
        let ix = self.intern(map);
        let ports = self.layout.num_ports(node) as usize + 1;
        let shape = &mut self.nodes[node.index()];
        match shape {
            Shape::Shared(cur) if *cur == ix => {}
            Shape::Shared(cur) => {
                let mut v = vec![*cur; ports].into_boxed_slice();
                v[out as usize] = ix;
                *shape = Shape::PerOut(v);
            }
            Shape::PerOut(v) => v[out as usize] = ix,
            Shape::Full { stride, ix: v } => {
                let s = *stride as usize;
                for input in 0..ports {
                    v[input * s + out as usize] = ix;
                }
            }
        }
    }

    /// Sets one (input, output) pair of a switch without checks.
    pub(crate) fn put_pair(&mut self, node: NodeId, input: PortNum, out: PortNum, map: &Sl2VlMap) {
        if self.index(node, input, out) == self.dedup.get(map).copied().unwrap_or(u32::MAX) {
            return;
        }
        let ix = self.intern(map);
        let ports = self.layout.num_ports(node) as usize + 1;
        let shape = &mut self.nodes[node.index()];
        let full: Box<[u32]> = match shape {
            Shape::Full { ix: v, .. } => std::mem::take(v),
            Shape::Shared(cur) => vec![*cur; ports * ports].into_boxed_slice(),
            Shape::PerOut(cols) => (0..ports * ports).map(|k| cols[k % ports]).collect(),
        };
        let mut full = full;
        full[input as usize * ports + out as usize] = ix;
        *shape = Shape::Full { stride: ports as u16, ix: full };
    }

    /// Returns a node to the coarsest shape that still describes its tables.
    pub(crate) fn compact(&mut self, node: NodeId) {
        let ports = self.layout.num_ports(node) as usize + 1;
        // A CA has no port 0; its slot only holds whatever the node started with.
        let first = if self.layout.is_switch(node) { 0 } else { 1 };
        let shape = &mut self.nodes[node.index()];
        if let Shape::Full { ix, .. } = shape {
            if (1..ports).all(|r| ix[r * ports..(r + 1) * ports] == ix[..ports]) {
                *shape = Shape::PerOut(ix[..ports].into());
            }
        }
        if let Shape::PerOut(v) = shape {
            if v[first..].iter().all(|&x| x == v[first]) {
                *shape = Shape::Shared(v[first]);
            }
        }
    }

    /// Index entries held by all nodes: the memory the per-port indexing costs.
    pub fn index_entries(&self) -> usize {
        self.nodes
            .iter()
            .map(|s| match s {
                Shape::Shared(_) => 1,
                Shape::PerOut(v) => v.len(),
                Shape::Full { ix, .. } => ix.len(),
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    /// Two 4-port switches joined on port 4, hosts h0, h1 on s0 ports 1-2, h2 on s1 port 1.
    fn two_switches() -> (Fabric, NodeId, NodeId, Vec<NodeId>) {
        let mut f = Fabric::new();
        let s0 = f.add_switch("s0", 4).unwrap();
        let s1 = f.add_switch("s1", 4).unwrap();
        f.connect(s0, 4, s1, 4, LinkSpec::default()).unwrap();
        let mut hosts = Vec::new();
        for (i, (s, p)) in [(s0, 1), (s0, 2), (s1, 1)].into_iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(s, p, h, 1, LinkSpec::default()).unwrap();
            hosts.push(h);
        }
        (f, s0, s1, hosts)
    }

    #[test]
    fn uniform_maps_sl_modulo_vls() {
        let (f, s0, _, hosts) = two_switches();
        for n in [1u8, 2, 3, 4, 8, 15] {
            let t = Sl2VlTables::uniform(&f, n).unwrap();
            assert_eq!(t.data_vls(), n);
            for sl in 0..16u8 {
                assert_eq!(t.vl(s0, 1, 4, sl), sl % n);
                assert_eq!(t.vl(s0, 0, 2, sl), sl % n);
                assert_eq!(t.vl(hosts[0], 0, 1, sl), sl % n);
            }
            assert_eq!(t.pool_len(), 1);
            assert_eq!(t.index_entries(), f.num_nodes());
        }
        assert_eq!(uniform_map(4), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert!(Sl2VlTables::uniform(&f, 0).is_err());
    }

    #[test]
    fn setters_change_only_their_scope() {
        let (f, s0, s1, hosts) = two_switches();
        let mut t = Sl2VlTables::uniform(&f, 4).unwrap();
        let mut m = [0u8; 16];
        m[3] = VL_DROP;
        m[5] = 2;
        t.set_pair(s0, 1, 4, &m).unwrap();
        assert_eq!(t.vl(s0, 1, 4, 5), 2);
        assert_eq!(t.vl(s0, 1, 4, 3), VL_DROP);
        assert_eq!(t.vl(s0, 2, 4, 5), 1);
        assert_eq!(t.vl(s0, 1, 3, 5), 1);
        assert_eq!(t.vl(s1, 1, 4, 5), 1);
        assert_eq!(t.index_entries(), 25 + 4);

        let mut o = [1u8; 16];
        o[0] = 3;
        t.set_out_port(s1, 1, &o).unwrap();
        for input in 0..=4 {
            assert_eq!(t.vl(s1, input, 1, 0), 3);
            assert_eq!(t.vl(s1, input, 2, 0), 0);
        }
        t.set_ca_port(hosts[2], 1, &o).unwrap();
        assert_eq!(t.vl(hosts[2], 0, 1, 7), 1);
        assert_eq!(t.vl(hosts[1], 0, 1, 7), 3);

        t.set_all_cas(&[2; 16]).unwrap();
        for &h in &hosts {
            assert_eq!(t.vl(h, 0, 1, 0), 2);
        }
        t.set_switch(s0, &[0; 16]).unwrap();
        assert_eq!(t.vl(s0, 1, 4, 5), 0);
        // The pool keeps one copy of each distinct table.
        t.set_pair(s1, 2, 3, &m).unwrap();
        assert_eq!(t.pool_len(), 5);
    }

    #[test]
    fn setter_errors_name_the_port_and_the_rule() {
        let (f, s0, _, hosts) = two_switches();
        let mut t = Sl2VlTables::uniform(&f, 4).unwrap();
        let mut m = [0u8; 16];
        m[9] = 4;
        let e = t.set_pair(s0, 1, 2, &m).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid option 'sl2vl': SL 9 maps to VL 4, but 's0' port 2 operates 4 data VLs (0..=3); use 15 to drop the SL"
        );
        let e = t.set_pair(s0, 5, 2, &[0; 16]).unwrap_err().to_string();
        assert!(e.contains("port 5 does not exist on 's0' (ports 0..=4)"), "{e}");
        let e = t.set_pair(hosts[0], 0, 1, &[0; 16]).unwrap_err().to_string();
        assert!(e.contains("'h0' is a channel adapter"), "{e}");
        let e = t.set_ca_port(s0, 1, &[0; 16]).unwrap_err().to_string();
        assert!(e.contains("'s0' is a switch"), "{e}");
        let e = t.set_ca_port(hosts[0], 2, &[0; 16]).unwrap_err().to_string();
        assert!(e.contains("port 2 does not exist on 'h0' (ports 1..=1)"), "{e}");
        assert!(t.set_switch(s0, &m).is_err());
        assert!(t.set_all_cas(&m).is_err());
        // A failed set leaves the tables as they were.
        assert_eq!(t.vl(s0, 1, 2, 9), 1);
        assert_eq!(t.vl(hosts[0], 0, 1, 9), 1);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Pair(u8, u8, Sl2VlMap),
        Out(u8, Sl2VlMap),
        Switch(Sl2VlMap),
    }

    fn arb_map() -> impl Strategy<Value = Sl2VlMap> {
        // Few distinct values so that tables repeat and deduplication is exercised.
        prop::array::uniform16(prop::sample::select(vec![0u8, 1, 15]))
    }

    fn arb_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..=4u8, 0..=4u8, arb_map()).prop_map(|(i, o, m)| Op::Pair(i, o, m)),
            (0..=4u8, arb_map()).prop_map(|(o, m)| Op::Out(o, m)),
            arb_map().prop_map(Op::Switch),
        ]
    }

    proptest! {
        /// The compact shapes answer exactly as a plain per-pair table would.
        #[test]
        fn compact_storage_matches_naive_model(ops in prop::collection::vec(arb_op(), 0..40)) {
            let (f, s0, _, _) = two_switches();
            let mut t = Sl2VlTables::uniform(&f, 2).unwrap();
            let mut naive = [[uniform_map(2); 5]; 5];
            for op in &ops {
                match *op {
                    Op::Pair(i, o, m) => { t.set_pair(s0, i, o, &m).unwrap(); naive[i as usize][o as usize] = m; }
                    Op::Out(o, m) => { t.set_out_port(s0, o, &m).unwrap(); for row in naive.iter_mut() { row[o as usize] = m; } }
                    Op::Switch(m) => { t.set_switch(s0, &m).unwrap(); naive = [[m; 5]; 5]; }
                }
            }
            for i in 0..5u8 {
                for o in 0..5u8 {
                    prop_assert_eq!(t.table(s0, i, o), &naive[i as usize][o as usize]);
                }
            }
            prop_assert!(t.pool_len() <= 1 + ops.len());
        }
    }
}
