//! The fabric graph: an arena of nodes (switches, CAs) with numbered ports, and
//! an arena of point-to-point links between ports.
//!
//! Conventions follow IBA: ports are numbered from 1; a switch's port 0 is its
//! management port and is never cabled. Every node has a 64-bit node GUID; a CA
//! port's GUID is the node GUID plus the port number, and a switch has one port
//! GUID equal to its node GUID (port 0), as HCAs and switches of the
//! Mellanox/OpenSM world number them.

use rustc_hash::FxHashMap;

use crate::error::FabricError;
use crate::rate::LinkSpec;

/// Port number on a node: 1..=num_ports, 0 for a switch's management port.
pub type PortNum = u8;

/// Index of a node in [`Fabric::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The arena index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a link in [`Fabric::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

impl LinkId {
    /// The arena index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A switch: forwards by LFT, has a management port 0.
    Switch,
    /// A host channel adapter.
    Hca,
    /// A target channel adapter (storage, I/O).
    Tca,
}

impl NodeKind {
    /// True for switches.
    pub fn is_switch(self) -> bool {
        self == NodeKind::Switch
    }
    /// True for channel adapters (HCA or TCA).
    pub fn is_ca(self) -> bool {
        !self.is_switch()
    }
    /// The ibnetdiscover keyword: `Switch` or `Ca`.
    pub fn keyword(self) -> &'static str {
        if self.is_switch() {
            "Switch"
        } else {
            "Ca"
        }
    }
}

/// One end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkEnd {
    /// The node.
    pub node: NodeId,
    /// Its port.
    pub port: PortNum,
}

/// A switch or a channel adapter.
#[derive(Debug, Clone)]
pub struct Node {
    /// Switch, HCA or TCA.
    pub kind: NodeKind,
    /// Unique name within the fabric (the ibnetdiscover/ibsim id, e.g. `sw3` or `H-12`).
    pub name: String,
    /// IBA NodeDescription (free text, at most 64 bytes on a real fabric).
    pub description: String,
    /// Node GUID.
    pub guid: u64,
    /// System image GUID (chassis), equal to `guid` for a standalone node.
    pub system_guid: u64,
    /// Ports, excluding a switch's port 0.
    pub num_ports: u8,
    /// The link at each port, indexed by port number (index 0 unused).
    pub ports: Vec<Option<LinkId>>,
}

impl Node {
    /// GUID of `port`: the node GUID for a switch, node GUID + port for a CA.
    pub fn port_guid(&self, port: PortNum) -> u64 {
        if self.kind.is_switch() {
            self.guid
        } else {
            self.guid + port as u64
        }
    }

    /// Ports that carry a link, in ascending order.
    pub fn connected_ports(&self) -> impl Iterator<Item = (PortNum, LinkId)> + '_ {
        self.ports
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(p, l)| l.map(|l| (p as PortNum, l)))
    }
}

/// A cable between two ports.
#[derive(Debug, Clone)]
pub struct Link {
    /// The two ends, in the order they were connected.
    pub ends: [LinkEnd; 2],
    /// Width, speed and cable.
    pub spec: LinkSpec,
}

impl Link {
    /// The end opposite `end`'s node/port.
    pub fn other(&self, end: LinkEnd) -> LinkEnd {
        if self.ends[0] == end {
            self.ends[1]
        } else {
            self.ends[0]
        }
    }
}

/// Base of the GUIDs we make up for generated nodes (Mellanox OUI 0x0002c9).
const GENERATED_GUID_BASE: u64 = 0x0002_c903_0000_0000;

/// An InfiniBand fabric.
#[derive(Debug, Clone, Default)]
pub struct Fabric {
    nodes: Vec<Node>,
    links: Vec<Link>,
    by_name: FxHashMap<String, NodeId>,
    by_guid: FxHashMap<u64, NodeId>,
}

impl Fabric {
    /// An empty fabric.
    pub fn new() -> Self {
        Fabric::default()
    }

    /// Adds a node. Without a GUID, one is derived from the node's index so that
    /// generated fabrics are reproducible; the low byte is left free for CA port GUIDs.
    pub fn add_node(
        &mut self,
        kind: NodeKind,
        name: impl Into<String>,
        num_ports: u8,
        guid: Option<u64>,
    ) -> Result<NodeId, FabricError> {
        let name = name.into();
        if self.by_name.contains_key(&name) {
            return Err(FabricError::DuplicateNode(name));
        }
        if num_ports == 0 {
            return Err(FabricError::param("num_ports", format!("node '{name}' must have at least one port")));
        }
        let id = NodeId(self.nodes.len() as u32);
        let guid = match guid {
            Some(g) => g,
            None => {
                let mut g = GENERATED_GUID_BASE + ((id.0 as u64 + 1) << 8);
                while self.by_guid.contains_key(&g) {
                    g += 1 << 8;
                }
                g
            }
        };
        if self.by_guid.contains_key(&guid) {
            return Err(FabricError::DuplicateNode(format!("{name} (GUID {guid:#018x})")));
        }
        self.by_name.insert(name.clone(), id);
        self.by_guid.insert(guid, id);
        self.nodes.push(Node {
            kind,
            description: name.clone(),
            name,
            guid,
            system_guid: guid,
            num_ports,
            ports: vec![None; num_ports as usize + 1],
        });
        Ok(id)
    }

    /// Adds a switch with `num_ports` external ports.
    pub fn add_switch(&mut self, name: impl Into<String>, num_ports: u8) -> Result<NodeId, FabricError> {
        self.add_node(NodeKind::Switch, name, num_ports, None)
    }

    /// Adds an HCA with `num_ports` ports.
    pub fn add_hca(&mut self, name: impl Into<String>, num_ports: u8) -> Result<NodeId, FabricError> {
        self.add_node(NodeKind::Hca, name, num_ports, None)
    }

    /// Cables port `pa` of `a` to port `pb` of `b`.
    pub fn connect(
        &mut self,
        a: NodeId,
        pa: u32,
        b: NodeId,
        pb: u32,
        spec: LinkSpec,
    ) -> Result<LinkId, FabricError> {
        let pa = self.check_free_port(a, pa)?;
        let pb = self.check_free_port(b, pb)?;
        if a == b && pa == pb {
            return Err(FabricError::SelfLoop { node: self.nodes[a.index()].name.clone(), port: pa });
        }
        if let Err(why) = check_cable_length(spec.length_m) {
            let (na, nb) = (&self.nodes[a.index()].name, &self.nodes[b.index()].name);
            return Err(FabricError::param("length_m", format!("the cable {na}/{pa} – {nb}/{pb}: {why}")));
        }
        let id = LinkId(self.links.len() as u32);
        self.links.push(Link { ends: [LinkEnd { node: a, port: pa }, LinkEnd { node: b, port: pb }], spec });
        self.nodes[a.index()].ports[pa as usize] = Some(id);
        self.nodes[b.index()].ports[pb as usize] = Some(id);
        Ok(id)
    }

    fn check_free_port(&self, n: NodeId, port: u32) -> Result<PortNum, FabricError> {
        let node = &self.nodes[n.index()];
        if port == 0 || port > node.num_ports as u32 {
            return Err(FabricError::PortOutOfRange { node: node.name.clone(), port, num_ports: node.num_ports });
        }
        let port = port as PortNum;
        if let Some(l) = node.ports[port as usize] {
            let peer = self.links[l.index()].other(LinkEnd { node: n, port });
            return Err(FabricError::PortInUse {
                node: node.name.clone(),
                port,
                peer: self.nodes[peer.node.index()].name.clone(),
                peer_port: peer.port,
            });
        }
        Ok(port)
    }

    /// Sets a node's description (NodeDescription).
    pub fn set_description(&mut self, n: NodeId, description: impl Into<String>) {
        self.nodes[n.index()].description = description.into();
    }

    /// Sets a node's system image GUID.
    pub fn set_system_guid(&mut self, n: NodeId, guid: u64) {
        self.nodes[n.index()].system_guid = guid;
    }

    /// All nodes, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// All links, indexed by [`LinkId`].
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// One node.
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// One link.
    #[inline]
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.index()]
    }

    /// Number of links.
    pub fn num_links(&self) -> usize {
        self.links.len()
    }

    /// Sets the cable length of link `id`; a length is a finite number of
    /// metres, 0 or more (the message says why not).
    pub fn set_cable_length(&mut self, id: LinkId, length_m: f64) -> Result<(), String> {
        check_cable_length(length_m)?;
        self.links[id.index()].spec.length_m = length_m;
        Ok(())
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Ids of all switches, in index order.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.ids().filter(|&n| self.node(n).kind.is_switch())
    }

    /// Ids of all channel adapters, in index order.
    pub fn cas(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.ids().filter(|&n| self.node(n).kind.is_ca())
    }

    /// Ids of all nodes.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Every cabled CA port, in node then port order: the endpoints that get LIDs
    /// and send and receive traffic.
    pub fn ca_ports(&self) -> Vec<LinkEnd> {
        self.cas()
            .flat_map(|n| self.node(n).connected_ports().map(move |(port, _)| LinkEnd { node: n, port }))
            .collect()
    }

    /// The link at a port, if cabled.
    #[inline]
    pub fn link_at(&self, n: NodeId, port: PortNum) -> Option<LinkId> {
        self.nodes[n.index()].ports.get(port as usize).copied().flatten()
    }

    /// The port at the other end of the cable at `(n, port)`.
    #[inline]
    pub fn peer(&self, n: NodeId, port: PortNum) -> Option<LinkEnd> {
        self.link_at(n, port).map(|l| self.links[l.index()].other(LinkEnd { node: n, port }))
    }

    /// A node by its unique name.
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// A node by node GUID, or by the port GUID of one of its ports
    /// (a CA port's GUID is its node GUID plus the port number).
    pub fn node_by_guid(&self, guid: u64) -> Option<NodeId> {
        if let Some(&n) = self.by_guid.get(&guid) {
            return Some(n);
        }
        (1..=u8::MAX as u64).filter(|&p| p <= guid).find_map(|p| {
            let n = *self.by_guid.get(&(guid - p))?;
            let node = self.node(n);
            (node.kind.is_ca() && p <= node.num_ports as u64).then_some(n)
        })
    }

    /// Resolves a user's reference to a node: a name, a description, or a GUID
    /// in hex (`0x0002c9…`).
    pub fn resolve(&self, what: &str) -> Result<NodeId, FabricError> {
        if let Some(n) = self.node_by_name(what) {
            return Ok(n);
        }
        let hex = what.strip_prefix("0x").or_else(|| what.strip_prefix("0X"));
        if let Some(g) = hex.and_then(|h| u64::from_str_radix(h, 16).ok()) {
            if let Some(n) = self.node_by_guid(g) {
                return Ok(n);
            }
        }
        let by_desc: Vec<NodeId> = self.ids().filter(|&n| self.node(n).description == what).collect();
        match by_desc.as_slice() {
            [one] => Ok(*one),
            [] => Err(FabricError::UnknownNode(what.to_string())),
            _ => Err(FabricError::UnknownNode(format!("{what} (description is not unique; give a name or GUID)"))),
        }
    }

    /// Switch-to-switch adjacency: for each switch port with a switch on the other
    /// end, `(port, peer switch, peer port)`.
    pub fn switch_neighbors(&self, sw: NodeId) -> impl Iterator<Item = (PortNum, LinkEnd)> + '_ {
        self.node(sw).connected_ports().filter_map(move |(p, _)| {
            let peer = self.peer(sw, p)?;
            self.node(peer.node).kind.is_switch().then_some((p, peer))
        })
    }

    /// Checks that every node can reach every other one over links.
    pub fn check_connected(&self) -> Result<(), FabricError> {
        if self.nodes.is_empty() {
            return Err(FabricError::Disconnected { detail: "the fabric has no nodes".into() });
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![NodeId(0)];
        seen[0] = true;
        while let Some(n) = stack.pop() {
            for (p, _) in self.node(n).connected_ports() {
                let peer = self.peer(n, p).expect("connected port has a peer");
                if !seen[peer.node.index()] {
                    seen[peer.node.index()] = true;
                    stack.push(peer.node);
                }
            }
        }
        let unreached: Vec<&str> =
            self.ids().filter(|n| !seen[n.index()]).map(|n| self.node(n).name.as_str()).collect();
        if unreached.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = unreached.iter().take(8).copied().collect();
        Err(FabricError::Disconnected {
            detail: format!(
                "{} of {} nodes cannot be reached from '{}': {}{}",
                unreached.len(),
                self.nodes.len(),
                self.nodes[0].name,
                shown.join(", "),
                if unreached.len() > shown.len() { ", …" } else { "" }
            ),
        })
    }
}

/// A cable length is a finite number of metres, 0 or more.
fn check_cable_length(length_m: f64) -> Result<(), String> {
    if length_m.is_finite() && length_m >= 0.0 {
        Ok(())
    } else {
        Err(format!("{length_m} m: a cable length is a finite number of metres, 0 or more"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::LinkSpec;

    fn two_switches() -> (Fabric, NodeId, NodeId) {
        let mut f = Fabric::new();
        let a = f.add_switch("a", 4).unwrap();
        let b = f.add_switch("b", 4).unwrap();
        f.connect(a, 1, b, 2, LinkSpec::default()).unwrap();
        (f, a, b)
    }

    #[test]
    fn a_cable_of_negative_or_unknown_length_is_refused_naming_it() {
        let mut f = Fabric::new();
        let a = f.add_switch("a", 4).unwrap();
        let b = f.add_switch("b", 4).unwrap();
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = f.connect(a, 1, b, 2, LinkSpec { length_m: bad, ..LinkSpec::default() }).unwrap_err().to_string();
            assert!(e.contains("length_m") && e.contains("a/1 – b/2"), "{e}");
        }
        // Nothing was cabled by the refusals; 0 m is a cable without delay.
        f.connect(a, 1, b, 2, LinkSpec { length_m: 0.0, ..LinkSpec::default() }).unwrap();
    }

    #[test]
    fn a_generated_guid_steps_past_one_given_explicitly() {
        // The second node would get base + 2·256; a node already holds it, so
        // the next free one, base + 3·256, is taken (the low byte stays free).
        let mut f = Fabric::new();
        let taken = GENERATED_GUID_BASE + 0x200;
        let x = f.add_node(NodeKind::Switch, "x", 4, Some(taken)).unwrap();
        let y = f.add_node(NodeKind::Switch, "y", 4, None).unwrap();
        assert_eq!(f.node(x).guid, 0x0002_c903_0000_0200);
        assert_eq!(f.node(y).guid, 0x0002_c903_0000_0300);
    }

    #[test]
    fn peer_is_symmetric() {
        let (f, a, b) = two_switches();
        assert_eq!(f.peer(a, 1), Some(LinkEnd { node: b, port: 2 }));
        assert_eq!(f.peer(b, 2), Some(LinkEnd { node: a, port: 1 }));
        assert_eq!(f.peer(a, 2), None);
    }

    #[test]
    fn port_errors_name_the_node() {
        let (mut f, a, b) = two_switches();
        let e = f.connect(a, 5, b, 1, LinkSpec::default()).unwrap_err();
        assert_eq!(e.to_string(), "port 5 is out of range for node 'a', which has ports 1..=4");
        let e = f.connect(a, 1, b, 3, LinkSpec::default()).unwrap_err();
        assert_eq!(e.to_string(), "port 1 of node 'a' is already connected to 'b' port 2");
        assert!(f.add_switch("a", 4).is_err());
    }

    #[test]
    fn disconnected_is_reported() {
        let (mut f, _, _) = two_switches();
        f.add_hca("lonely", 1).unwrap();
        let e = f.check_connected().unwrap_err().to_string();
        assert!(e.contains("1 of 3 nodes") && e.contains("lonely"), "{e}");
    }

    #[test]
    fn resolve_by_name_guid_and_port_guid() {
        let mut f = Fabric::new();
        let s = f.add_switch("s", 2).unwrap();
        let h = f.add_hca("h", 2).unwrap();
        f.connect(s, 1, h, 1, LinkSpec::default()).unwrap();
        assert_eq!(f.resolve("s").unwrap(), s);
        let pg = f.node(h).port_guid(2);
        assert_eq!(f.resolve(&format!("{pg:#x}")).unwrap(), h);
        let mut g = Fabric::new();
        let real = g.add_node(NodeKind::Hca, "node1", 2, Some(0x2c90300001dd0)).unwrap();
        assert_eq!(g.node_by_guid(0x2c90300001dd1), Some(real));
        assert_eq!(g.node_by_guid(0x2c90300001dd3), None);
        assert!(f.resolve("nobody").is_err());
    }
}
