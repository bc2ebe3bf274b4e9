//! Nue's two graphs: the switch network (OpenSM's `network_t`) and its
//! complete channel dependency graph (`ccdg_t`), with the colours that mark
//! the cCDG's disjoint acyclic subgraphs.
//!
//! Orders follow OpenSM, since they decide ties. Switches are sorted by LID as
//! OpenSM compares them: in network byte order read as a host integer, i.e.
//! byte-swapped ([`opensm_lid_key`]). A switch's cables are taken in port
//! order (ports with a switch at the far end; loopback cables are left out).
//! A channel's dependencies are the channels leaving the switch it enters, in
//! that switch's port order, without the channel straight back over the same
//! cable. Every switch also has a "fake" channel (OpenSM's channel from the
//! switch to itself over port 0): the source of the search toward a
//! destination there, depending on every channel leaving the switch.
//!
//! Colours are OpenSM's scheme of `color_t` objects with a `real_col` pointer,
//! kept as indices: a channel or dependency holds a colour index `c` and its
//! colour reads as `real[c]`, one level deep. Merging a subgraph into another
//! redirects `real` of the merged colour; at the end of each search the
//! indices are replaced by what they read (OpenSM's `fix_ccdg_colors`). The
//! one-level reading is OpenSM's, and so are the cases where a subgraph merged
//! during a search reads a colour older than the search's own (see
//! `Search::closes_cycle` in `super::search`).

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use crate::lid::{Lid, LidMap};

/// No link / no node.
pub(super) const NONE: u32 = u32::MAX;

/// Distance of a switch not reached (OpenSM's `INFINITY`, see the module docs
/// of [`super`] for why it is larger here).
pub(super) const INF: u64 = u64::MAX;

/// Colour of a dependency that would close a cycle.
pub(super) const BLOCKED: u32 = 0;
/// Colour of channels and dependencies no path uses.
pub(super) const UNUSED: u32 = 1;
/// Colour of the escape paths; a destination's own colours start above it.
pub(super) const ESCAPE: u32 = 2;

/// OpenSM's sort key for a LID (`compare_lids` on `ib_net16_t`).
pub(super) fn opensm_lid_key(lid: Lid) -> u16 {
    lid.swap_bytes()
}

/// A switch of the network.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub sw: NodeId,
    /// LIDs whose traffic enters here: the switch's own and its CA ports'
    /// (OpenSM's `num_terminals`); the weight a path from here adds.
    pub terminals: u64,
    /// Its outgoing links, in port order.
    pub links: Vec<u32>,
}

/// One direction of a switch-to-switch cable; also the cCDG channel of the
/// same index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    pub from: u32,
    pub port: PortNum,
    pub to: u32,
    pub peer_port: PortNum,
    /// The link the other way over the same cable.
    pub reverse: u32,
}

/// The network and its complete CDG.
pub(super) struct Graph {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Node index of each fabric node, [`NONE`] for CAs.
    pub node_of: Vec<u32>,
    /// Dependencies of channel `c`: `dep_to[dep_start[c]..dep_start[c + 1]]`.
    /// Channels `0..links.len()` are the links, then one fake channel per node.
    pub dep_start: Vec<u32>,
    pub dep_to: Vec<u32>,
}

impl Graph {
    pub(super) fn new(fabric: &Fabric, lids: &LidMap) -> Self {
        let mut switches: Vec<(NodeId, Lid)> =
            fabric.switches().filter_map(|s| lids.switch_lid(s).map(|l| (s, l))).collect();
        switches.sort_by_key(|&(_, l)| opensm_lid_key(l));
        let mut node_of = vec![NONE; fabric.num_nodes()];
        for (i, &(s, _)) in switches.iter().enumerate() {
            node_of[s.index()] = i as u32;
        }
        let mut nodes = Vec::with_capacity(switches.len());
        let mut links: Vec<Link> = Vec::new();
        for (i, &(s, _)) in switches.iter().enumerate() {
            let mut terminals = lids.of_port(s, 0).map_or(1, |p| p.count() as u64);
            let mut out = Vec::new();
            for (port, _) in fabric.node(s).connected_ports() {
                let Some(peer) = fabric.peer(s, port) else { continue };
                if peer.node == s {
                    continue;
                }
                if fabric.node(peer.node).kind.is_ca() {
                    terminals += lids.of_port(peer.node, peer.port).map_or(0, |p| p.count() as u64);
                    continue;
                }
                let to = node_of[peer.node.index()];
                if to == NONE {
                    continue;
                }
                out.push(links.len() as u32);
                links.push(Link { from: i as u32, port, to, peer_port: peer.port, reverse: NONE });
            }
            nodes.push(Node { sw: s, terminals, links: out });
        }
        for l in 0..links.len() {
            let Link { to, peer_port, .. } = links[l];
            links[l].reverse = nodes[to as usize].links.iter().copied().find(|&r| links[r as usize].port == peer_port).unwrap_or(NONE);
        }
        let mut dep_start = Vec::with_capacity(links.len() + nodes.len() + 1);
        let mut dep_to = Vec::new();
        for link in &links {
            dep_start.push(dep_to.len() as u32);
            for &next in &nodes[link.to as usize].links {
                let n = links[next as usize];
                // Not straight back over the same cable.
                if n.to == link.from && n.peer_port == link.port {
                    continue;
                }
                dep_to.push(next);
            }
        }
        for node in &nodes {
            dep_start.push(dep_to.len() as u32);
            dep_to.extend_from_slice(&node.links);
        }
        dep_start.push(dep_to.len() as u32);
        Graph { nodes, links, node_of, dep_start, dep_to }
    }

    /// Channels of the cCDG: links, then fake channels.
    pub(super) fn channels(&self) -> usize {
        self.links.len() + self.nodes.len()
    }

    /// The fake channel of node `n`.
    pub(super) fn fake(&self, n: u32) -> u32 {
        self.links.len() as u32 + n
    }

    /// Indices (into `dep_to`) of channel `c`'s dependencies.
    pub(super) fn deps(&self, c: u32) -> std::ops::Range<usize> {
        self.dep_start[c as usize] as usize..self.dep_start[c as usize + 1] as usize
    }

    /// The dependency from channel `a` to channel `b` (OpenSM's
    /// `get_ccdg_edge_betw_nodes`), if there is one.
    pub(super) fn dep(&self, a: u32, b: u32) -> Option<usize> {
        self.deps(a).find(|&d| self.dep_to[d] == b)
    }

    /// Whether two links join the same two switches in opposite directions
    /// (OpenSM compares the LIDs only, so a parallel cable counts too).
    pub(super) fn opposite(&self, a: u32, b: u32) -> bool {
        let (a, b) = (self.links[a as usize], self.links[b as usize]);
        a.from == b.to && a.to == b.from
    }
}

/// The colours of the cCDG's channels and dependencies.
pub(super) struct Colors {
    /// Colour index of each channel, and whether it was painted in this search.
    pub chan: Vec<u32>,
    pub chan_wet: Vec<bool>,
    /// Colour index of each dependency (by index into `Graph::dep_to`).
    pub dep: Vec<u32>,
    pub dep_wet: Vec<bool>,
    /// What each colour index reads as.
    pub real: Vec<u32>,
}

impl Colors {
    pub(super) fn new(g: &Graph, colors: usize) -> Self {
        Colors {
            chan: vec![UNUSED; g.channels()],
            chan_wet: vec![false; g.channels()],
            dep: vec![UNUSED; g.dep_to.len()],
            dep_wet: vec![false; g.dep_to.len()],
            real: (0..colors as u32).collect(),
        }
    }

    /// Every channel and dependency unused, every colour itself (a new layer).
    pub(super) fn reset(&mut self) {
        self.chan.fill(UNUSED);
        self.chan_wet.fill(false);
        self.dep.fill(UNUSED);
        self.dep_wet.fill(false);
        for (i, r) in self.real.iter_mut().enumerate() {
            *r = i as u32;
        }
    }

    pub(super) fn of_chan(&self, c: u32) -> u32 {
        self.real[self.chan[c as usize] as usize]
    }

    pub(super) fn of_dep(&self, d: usize) -> u32 {
        self.real[self.dep[d] as usize]
    }

    /// Undoes a dependency painted in this search (`reset_ccdg_edge_color`).
    pub(super) fn reset_dep(&mut self, d: usize) {
        if self.dep_wet[d] {
            self.dep[d] = UNUSED;
            self.dep_wet[d] = false;
        }
    }

    /// Paints dependency `d` (out of `head`) in `head`'s colour.
    pub(super) fn add_dep(&mut self, head: u32, d: usize) {
        self.dep[d] = self.chan[head as usize];
        self.dep_wet[d] = true;
    }
}
