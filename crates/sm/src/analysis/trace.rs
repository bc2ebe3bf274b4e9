//! Following linear forwarding tables: one route at a time, and all routes to
//! one destination LID at once.
//!
//! IBA 18.2.4.3: a switch forwards a packet to the port its LFT gives for the
//! DLID, nothing else. So the routes to one LID form a functional graph over
//! the switches, an in-tree rooted at the destination when it is loop-free,
//! and whatever happens to a packet depends only on the switch it is at. A
//! [`DestTree`] resolves every switch once (a walk that stops at the first
//! switch already resolved), which makes a whole-fabric check cost
//! O(LIDs × switches) rather than O(pairs × hops). Every analysis reads these
//! trees; [`trace_route`] follows one pair for examples and for users.

use ibnetsim_fabric::{Fabric, LinkEnd, LinkId, NodeId, PortNum};

use crate::error::SmError;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// "No such index" in the dense arrays below.
pub(crate) const NONE: u32 = u32::MAX;

/// A link taken in one direction: link `l` leaving `ends[0]` is `2l`, leaving
/// `ends[1]` is `2l + 1`. Channel loads and the channel dependency graph are
/// indexed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirLink(pub u32);

impl DirLink {
    /// The direction leaving `(node, port)`, with the port it arrives at, if cabled.
    #[inline]
    pub fn out_of(fabric: &Fabric, node: NodeId, port: PortNum) -> Option<(DirLink, LinkEnd)> {
        let l = fabric.link_at(node, port)?;
        let link = fabric.link(l);
        let from = LinkEnd { node, port };
        let dir = u32::from(link.ends[0] != from);
        Some((DirLink(l.0 * 2 + dir), link.ends[1 - dir as usize]))
    }

    /// Number of directed links of `fabric`.
    pub fn count(fabric: &Fabric) -> usize {
        fabric.links().len() * 2
    }

    /// The undirected link.
    pub fn link(self) -> LinkId {
        LinkId(self.0 / 2)
    }

    /// The sending port.
    pub fn from(self, fabric: &Fabric) -> LinkEnd {
        fabric.link(self.link()).ends[(self.0 & 1) as usize]
    }

    /// The receiving port.
    pub fn to(self, fabric: &Fabric) -> LinkEnd {
        fabric.link(self.link()).ends[1 - (self.0 & 1) as usize]
    }
}

/// `name/port`, how examples print a port; a switch's port 0 is the switch itself.
pub(crate) fn port_name(fabric: &Fabric, end: LinkEnd) -> String {
    let name = &fabric.node(end.node).name;
    if end.port == 0 && fabric.node(end.node).kind.is_switch() {
        name.clone()
    } else {
        format!("{name}/{}", end.port)
    }
}

/// Where a CA port's cable goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attach {
    /// To a switch (dense index).
    Switch(u32),
    /// Straight to another CA's port.
    Ca(LinkEnd),
    /// Nowhere: the port has LIDs but no cable.
    Uncabled,
}

/// A CA port with LIDs: a traffic source and destination.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub end: LinkEnd,
    pub base: Lid,
    pub lids: u32,
    pub attach: Attach,
    /// The direction from the CA into the network, or [`NONE`].
    pub up: u32,
    /// The port at the other end of the cable (0 when uncabled).
    pub peer_port: PortNum,
    /// Data rate of the port's link in bit/s (0 when uncabled).
    pub rate_bps: f64,
}

/// The fabric, LIDs and tables with the indices every analysis needs.
pub(crate) struct Net<'a> {
    pub fabric: &'a Fabric,
    pub lids: &'a LidMap,
    pub tables: &'a ForwardingTables,
    /// Node → dense switch index, or [`NONE`] for a CA.
    pub sw_index: Vec<u32>,
    /// Dense switch index → node.
    pub switches: Vec<NodeId>,
    /// CA ports with LIDs, in LID order.
    pub endpoints: Vec<Endpoint>,
    /// LID → index in `endpoints`, or [`NONE`] (a switch LID or an unused one).
    pub lid_endpoint: Vec<u32>,
    /// Endpoints attached to each switch: `attached[start[s]..start[s + 1]]`.
    attached_start: Vec<u32>,
    attached: Vec<u32>,
    /// Endpoints not cabled to a switch (to another CA, or not at all).
    pub direct: Vec<u32>,
}

impl<'a> Net<'a> {
    /// Indexes a subnet, checking that LIDs and tables belong to `fabric`.
    pub fn new(fabric: &'a Fabric, lids: &'a LidMap, tables: &'a ForwardingTables) -> Result<Self, SmError> {
        let mut sw_index = vec![NONE; fabric.num_nodes()];
        let mut switches = Vec::new();
        for s in fabric.switches() {
            if tables.lft(s).is_none() {
                return Err(SmError::option(
                    "lfts",
                    format!(
                        "the forwarding tables have no table for switch '{}'; they belong to another fabric",
                        fabric.node(s).name
                    ),
                ));
            }
            sw_index[s.index()] = switches.len() as u32;
            switches.push(s);
        }
        let mut endpoints = Vec::new();
        let mut lid_endpoint = vec![NONE; lids.top_lid() as usize + 1];
        for p in lids.ports() {
            let Some(node) = fabric.nodes().get(p.end.node.index()) else {
                return Err(SmError::option(
                    "lid",
                    format!("LID {:#06x} belongs to node {} which the fabric does not have", p.base, p.end.node.0),
                ));
            };
            if node.kind.is_switch() {
                continue;
            }
            let (attach, up, rate_bps, peer_port) = match DirLink::out_of(fabric, p.end.node, p.end.port) {
                None => (Attach::Uncabled, NONE, 0.0, 0),
                Some((dl, peer)) => {
                    let rate = fabric.link(dl.link()).spec.data_rate_bps();
                    let at = match sw_index[peer.node.index()] {
                        NONE => Attach::Ca(peer),
                        s => Attach::Switch(s),
                    };
                    (at, dl.0, rate, peer.port)
                }
            };
            for lid in p.lids() {
                lid_endpoint[lid as usize] = endpoints.len() as u32;
            }
            endpoints.push(Endpoint { end: p.end, base: p.base, lids: p.count(), attach, up, peer_port, rate_bps });
        }
        let mut counts = vec![0u32; switches.len() + 1];
        for e in &endpoints {
            if let Attach::Switch(s) = e.attach {
                counts[s as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let attached_start = counts.clone();
        let mut attached = vec![0u32; *counts.last().unwrap_or(&0) as usize];
        for (i, e) in endpoints.iter().enumerate() {
            if let Attach::Switch(s) = e.attach {
                attached[counts[s as usize] as usize] = i as u32;
                counts[s as usize] += 1;
            }
        }
        let direct = (0..endpoints.len() as u32)
            .filter(|&e| !matches!(endpoints[e as usize].attach, Attach::Switch(_)))
            .collect();
        Ok(Net { fabric, lids, tables, sw_index, switches, endpoints, lid_endpoint, attached_start, attached, direct })
    }

    /// Endpoints cabled to switch `s` (dense index).
    #[inline]
    pub fn attached(&self, s: u32) -> &[u32] {
        &self.attached[self.attached_start[s as usize] as usize..self.attached_start[s as usize + 1] as usize]
    }

    /// The endpoint owning `lid`, if a CA port does.
    #[inline]
    pub fn endpoint_of(&self, lid: Lid) -> Option<u32> {
        match self.lid_endpoint.get(lid as usize) {
            Some(&e) if e != NONE => Some(e),
            _ => None,
        }
    }

    /// Switch LIDs, as (dense switch, LID).
    pub fn switch_lids(&self) -> Vec<(u32, Lid)> {
        self.switches.iter().enumerate().filter_map(|(i, &s)| self.lids.switch_lid(s).map(|l| (i as u32, l))).collect()
    }
}

/// What happens to a packet for the tree's LID once it is at a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Delivered after passing this many switches (this one included).
    Reached(u16),
    /// Dropped at this switch: its LFT has no entry.
    NoPath(u32),
    /// Sent out of an uncabled port of this switch.
    Uncabled(u32),
    /// Delivered to a port (or this switch's port 0) that does not own the LID.
    Wrong(u32),
    /// Forwarded around a loop; the switch is one the packet reaches twice.
    Loop(u32),
}

const UNSEEN: u8 = 0;
const ON_STACK: u8 = 1;
const DONE: u8 = 2;

/// The fate of a packet for one LID at every switch, and the tree edges.
pub(crate) struct DestTree {
    pub fate: Vec<Fate>,
    /// Next switch (dense), or [`NONE`] where the route leaves the switches.
    pub next: Vec<u32>,
    /// Directed link a switch sends the LID's packets on, or [`NONE`].
    pub out: Vec<u32>,
    /// Switches in resolution order: a switch comes after the one it forwards to.
    pub order: Vec<u32>,
    /// Whether some switch is in (or leads into) a forwarding loop.
    pub has_loop: bool,
    state: Vec<u8>,
    stack: Vec<u32>,
}

impl DestTree {
    /// Buffers for a fabric of `n` switches.
    pub fn new(n: usize) -> Self {
        DestTree {
            fate: vec![Fate::NoPath(0); n],
            next: vec![NONE; n],
            out: vec![NONE; n],
            order: Vec::with_capacity(n),
            has_loop: false,
            state: vec![UNSEEN; n],
            stack: Vec::new(),
        }
    }

    /// Resolves every switch for destination `dlid`.
    pub fn build(&mut self, net: &Net<'_>, dlid: Lid) {
        let owner = net.lids.owner(dlid).map(|p| p.end);
        self.state.fill(UNSEEN);
        self.order.clear();
        self.has_loop = false;
        for s0 in 0..net.switches.len() as u32 {
            if self.state[s0 as usize] == DONE {
                continue;
            }
            self.stack.clear();
            let mut s = s0;
            // Either the top of the stack ends the route itself (`own`), or it
            // forwards to a switch whose fate is known (`carried`).
            let (own, carried) = loop {
                match self.state[s as usize] {
                    DONE => break (None, self.fate[s as usize]),
                    ON_STACK => {
                        self.has_loop = true;
                        break (None, Fate::Loop(s));
                    }
                    _ => {}
                }
                self.state[s as usize] = ON_STACK;
                self.stack.push(s);
                self.next[s as usize] = NONE;
                self.out[s as usize] = NONE;
                let node = net.switches[s as usize];
                let end = match net.tables.get(node, dlid) {
                    None => Fate::NoPath(s),
                    Some(0) if owner == Some(LinkEnd { node, port: 0 }) => Fate::Reached(1),
                    Some(0) => Fate::Wrong(s),
                    Some(p) => match DirLink::out_of(net.fabric, node, p) {
                        None => Fate::Uncabled(s),
                        Some((dl, peer)) => {
                            self.out[s as usize] = dl.0;
                            match net.sw_index[peer.node.index()] {
                                NONE if owner == Some(peer) => Fate::Reached(1),
                                NONE => Fate::Wrong(s),
                                t => {
                                    self.next[s as usize] = t;
                                    s = t;
                                    continue;
                                }
                            }
                        }
                    },
                };
                break (Some(end), end);
            };
            let mut f = carried;
            for (i, &s) in self.stack.iter().enumerate().rev() {
                let top = i + 1 == self.stack.len();
                if !(top && own.is_some()) {
                    if let Fate::Reached(h) = f {
                        f = Fate::Reached(h.saturating_add(1));
                    }
                }
                self.fate[s as usize] = f;
                self.state[s as usize] = DONE;
                self.order.push(s);
            }
        }
    }
}

/// How a traced route ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteEnd {
    /// At the port owning the DLID.
    Delivered(LinkEnd),
    /// At a switch whose LFT has no entry for the DLID.
    NoPath(NodeId),
    /// Sent out of a port with no cable.
    Uncabled(LinkEnd),
    /// Delivered to a port that does not own the DLID (a CA port, or port 0 of
    /// a switch that is not the destination).
    WrongNode(LinkEnd),
    /// At a switch the route has already passed.
    Loop(NodeId),
}

/// One route, followed hop by hop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Where it starts: a CA port, or a switch (port 0).
    pub src: LinkEnd,
    /// The destination LID.
    pub dlid: Lid,
    /// Every (node, output port) the packet leaves through, the source first.
    pub hops: Vec<LinkEnd>,
    /// How it ends.
    pub end: RouteEnd,
}

impl Route {
    /// Whether the packet arrives at the DLID's owner.
    pub fn delivered(&self) -> bool {
        matches!(self.end, RouteEnd::Delivered(_))
    }

    /// Switches the route passes, when it is delivered.
    pub fn switch_hops(&self, fabric: &Fabric) -> Option<usize> {
        let RouteEnd::Delivered(dst) = self.end else { return None };
        let passed = self.hops.iter().filter(|h| fabric.node(h.node).kind.is_switch()).count();
        Some(passed + usize::from(fabric.node(dst.node).kind.is_switch()))
    }

    /// `h1/1 -> s1/3 -> s2/1 -> h4/1`, with the reason when it is not delivered.
    pub fn describe(&self, fabric: &Fabric) -> String {
        let mut s: Vec<String> = self.hops.iter().map(|&h| port_name(fabric, h)).collect();
        let name = |n: NodeId| fabric.node(n).name.clone();
        s.push(match self.end {
            RouteEnd::Delivered(e) => port_name(fabric, e),
            RouteEnd::NoPath(n) => format!("{}: no LFT entry for LID {:#06x}", name(n), self.dlid),
            RouteEnd::Uncabled(e) => format!("{}: port {} has no cable", name(e.node), e.port),
            RouteEnd::WrongNode(e) if fabric.node(e.node).kind.is_switch() => {
                format!("{}: LFT gives port 0 (the switch itself), which does not own the LID", name(e.node))
            }
            RouteEnd::WrongNode(e) => {
                format!("{} (wrong node: it does not own LID {:#06x})", port_name(fabric, e), self.dlid)
            }
            RouteEnd::Loop(n) => format!("{} again (forwarding loop)", name(n)),
        });
        s.join(" -> ")
    }
}

/// Follows the LFTs from `src` toward `dlid`: from a CA port over its cable,
/// or from a switch (`src.port` ignored) by its own table.
pub fn trace_route(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables, src: LinkEnd, dlid: Lid) -> Route {
    let owner = lids.owner(dlid).map(|p| p.end);
    let mut hops = Vec::new();
    let mut seen = vec![false; fabric.num_nodes()];
    let mut at = if fabric.node(src.node).kind.is_switch() {
        src.node
    } else {
        hops.push(src);
        match fabric.peer(src.node, src.port) {
            None => return Route { src, dlid, hops, end: RouteEnd::Uncabled(src) },
            Some(p) if Some(p) == owner => return Route { src, dlid, hops, end: RouteEnd::Delivered(p) },
            Some(p) if fabric.node(p.node).kind.is_ca() => {
                return Route { src, dlid, hops, end: RouteEnd::WrongNode(p) }
            }
            Some(p) => p.node,
        }
    };
    let end = loop {
        if std::mem::replace(&mut seen[at.index()], true) {
            break RouteEnd::Loop(at);
        }
        let Some(port) = tables.get(at, dlid) else { break RouteEnd::NoPath(at) };
        let here = LinkEnd { node: at, port };
        if port == 0 {
            break if owner == Some(here) { RouteEnd::Delivered(here) } else { RouteEnd::WrongNode(here) };
        }
        let Some(peer) = fabric.peer(at, port) else { break RouteEnd::Uncabled(here) };
        hops.push(here);
        if fabric.node(peer.node).kind.is_ca() {
            break if owner == Some(peer) { RouteEnd::Delivered(peer) } else { RouteEnd::WrongNode(peer) };
        }
        at = peer.node;
    };
    Route { src, dlid, hops, end }
}
