//! Multicast at the switch: the forwarding sets of the subnet manager's MFTs,
//! and replication of a packet into several output queues.
//!
//! A packet whose DLID is a multicast LID is forwarded to every port of its
//! switch's MFT entry except the one it arrived on (`crates/sm/src/mft.rs`).
//! It stays at the head of its input queue while the crossbar copies it, one
//! output port per grant, each copy a packet of its own in the arena (the
//! slab reuses freed slots, so a copy allocates nothing once the run has
//! warmed up). The ports still owed a copy are kept per input queue for its
//! head — only a head is ever replicated — so a packet carries no port set.
//! When the last copy has been granted the original leaves the input buffer,
//! its credits go back when that copy's last byte has left, and it is retired
//! (counted in `Metrics::retired`). A switch without an entry for the MLID
//! drops the packet (`no_route`). Each member CA other than the sender
//! receives one copy.
//!
//! MFTs are stored per group (a sorted list of MLIDs, a group index by binary
//! search), `groups × switches` port sets: nothing grows with the 16 k
//! multicast LIDs, and the unicast LFT stays sized by the unicast LIDs.

use ibnetsim_fabric::NodeId;
use ibnetsim_sm::{Lid, MulticastTables, PortSet, MULTICAST_LID_BASE};

use crate::packet::{PacketId, NIL};

/// Whether `dlid` is a multicast LID.
#[inline]
pub fn is_multicast(dlid: u16) -> bool {
    dlid >= MULTICAST_LID_BASE
}

/// The multicast state of all switches.
#[derive(Debug, Clone, Default)]
pub(crate) struct Multicast {
    /// Group MLIDs, sorted; a group's index is its position.
    mlids: Vec<Lid>,
    /// `sets[switch * groups + group]`: the MFT entry.
    sets: Vec<PortSet>,
    /// Member hosts of each group.
    members: Vec<Vec<u32>>,
    /// Per input queue: the head whose copies are being made, and the ports
    /// still owed one.
    head: Vec<PacketId>,
    left: Vec<PortSet>,
}

impl Multicast {
    /// The tables of `mfts` for switches `switch_nodes` (dense switch order),
    /// with `host_of` mapping a member (node, port) to its host index, over
    /// `queues` input queues. Empty (and never consulted) without groups.
    /// `cabled(switch, port)` tells the ports that lead somewhere: the others
    /// are left out of every set, so that a head is never owed a copy it
    /// cannot send.
    pub fn new(
        mfts: &MulticastTables,
        switch_nodes: &[u32],
        host_of: impl Fn(NodeId, u8) -> Option<u32>,
        cabled: impl Fn(usize, u8) -> bool,
        queues: usize,
    ) -> Self {
        if mfts.is_empty() {
            return Multicast::default();
        }
        let mut groups: Vec<_> = mfts.groups().iter().collect();
        groups.sort_by_key(|g| g.mlid);
        let mlids: Vec<Lid> = groups.iter().map(|g| g.mlid).collect();
        let mut sets = vec![PortSet::new(); switch_nodes.len() * mlids.len()];
        for (s, &node) in switch_nodes.iter().enumerate() {
            for (g, &mlid) in mlids.iter().enumerate() {
                if let Some(set) = mfts.get(NodeId(node), mlid) {
                    sets[s * mlids.len() + g] = set.iter().filter(|&p| cabled(s, p)).collect();
                }
            }
        }
        let members = groups.iter().map(|g| g.members.iter().filter_map(|&(n, p)| host_of(n, p)).collect()).collect();
        Multicast { mlids, sets, members, head: vec![NIL; queues], left: vec![PortSet::new(); queues] }
    }

    /// The group of `mlid`, if the subnet manager routed one.
    #[inline]
    pub fn group(&self, mlid: Lid) -> Option<usize> {
        self.mlids.binary_search(&mlid).ok()
    }

    /// The member hosts of the group of `mlid`.
    pub fn members(&self, mlid: Lid) -> Option<&[u32]> {
        self.group(mlid).map(|g| self.members[g].as_slice())
    }

    /// The ports switch `swi` still owes a copy of `head` of input queue
    /// `queue` (arrived on `in_port`): the MFT entry without the arrival port
    /// until the first copy is granted, then what is left.
    #[inline]
    pub fn ports_left(&self, swi: u32, queue: usize, head: PacketId, mlid: Lid, in_port: u8) -> PortSet {
        if self.head[queue] == head {
            return self.left[queue];
        }
        match self.group(mlid) {
            Some(g) => self.sets[swi as usize * self.mlids.len() + g].without(in_port),
            None => PortSet::new(),
        }
    }

    /// Whether copies of `head` of input queue `queue` have begun (one may be
    /// crossing the switch now).
    #[inline]
    pub fn copying(&self, queue: usize, head: PacketId) -> bool {
        self.head.get(queue) == Some(&head)
    }

    /// The multicast head of input queue `queue` has left it (copied or
    /// discarded): whatever was owed for it is void. (A unicast head leaves
    /// nothing to forget: only multicast heads are ever recorded here.)
    #[inline]
    pub fn forget(&mut self, queue: usize) {
        if let Some(h) = self.head.get_mut(queue) {
            *h = NIL;
        }
    }

    /// A copy of `head` has been granted towards `port`; returns whether
    /// copies remain to be made.
    pub fn copied(&mut self, swi: u32, queue: usize, head: PacketId, mlid: Lid, in_port: u8, port: u8) -> bool {
        let mut left = self.ports_left(swi, queue, head, mlid, in_port);
        left.remove(port);
        if left.is_empty() {
            self.head[queue] = NIL;
            false
        } else {
            self.head[queue] = head;
            self.left[queue] = left;
            true
        }
    }
}
