//! Ports: what every `(node, port)` of the fabric owns, switch or CA alike —
//! its input (receive) VL buffers, its output (send) VL buffers, the credits
//! it holds for the receiver across its link, its transmitter with VL
//! arbitration, and its SL2VL and VLArbitration tables (IBA attributes of a
//! port). Arrays are indexed by global port, or by [`crate::layout::Layout::pv`].

use ibnetsim_fabric::PortNum;

use crate::arbitration::{VlArbState, VlArbTable, VlArbiter};
use crate::credits::{Credits, PortCredits};
use crate::engine::Time;
use crate::flow_control::FlowControlPackets;
use crate::link::LinkTiming;
use crate::metrics::BusyTally;
use crate::packet::PacketQueue;
use crate::qos::Sl2VlMap;
use crate::sim::NONE;
use crate::switch::CrossbarInput;
use crate::table::IdVec;

/// Static description of one `(node, port)`: 16 bytes, so that four share
/// a cache line and a large fabric's ports stay in the caches (every event
/// reads one or two; its node and the timing of its cable are kept apart,
/// the timing as an index into the few distinct ones).
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
pub(crate) struct PortModel {
    /// Global index of the port at the other end of the cable, or `NONE`.
    pub peer: u32,
    /// The dense switch index of the node when `is_switch`, else the host
    /// index of the CA port (`NONE`: no host): [`PortModel::switch`],
    /// [`PortModel::host`]. One field for both leaves room for `peer_switch`.
    owner: u32,
    /// The dense switch index of the peer's node; `NONE` when the peer is a
    /// CA or there is none. A packet's arrival needs nothing else of the
    /// receiving port, so a transmission does not read the peer's model (on
    /// a large fabric a cache miss at every hop).
    pub peer_switch: u32,
    /// Index of the cable's timing in [`Ports::timings`] (both directions are the same).
    pub timing: u16,
    /// Port number on the node.
    pub port: PortNum,
    /// The node is a switch.
    pub is_switch: bool,
}

impl PortModel {
    /// The model of port `port` of a node, switch `switch` (`NONE`: a CA,
    /// whose host is `host`), cabled to `peer` on switch `peer_switch`.
    pub fn new(port: PortNum, switch: u32, host: u32, peer: u32, peer_switch: u32, timing: u16) -> Self {
        let is_switch = switch != NONE;
        PortModel { peer, owner: if is_switch { switch } else { host }, peer_switch, timing, port, is_switch }
    }

    /// The dense index of the switch the port belongs to (a switch port).
    #[inline(always)]
    pub fn switch(&self) -> u32 {
        debug_assert!(self.is_switch, "a CA port has no switch");
        self.owner
    }

    /// The dense index of the switch the port belongs to, or `NONE` for a
    /// CA port.
    #[inline(always)]
    pub fn switch_or_none(&self) -> u32 {
        if self.is_switch {
            self.owner
        } else {
            NONE
        }
    }

    /// The host index of a CA port, `NONE` for a switch port or a CA port
    /// that is not a host.
    #[inline(always)]
    pub fn host(&self) -> u32 {
        if self.is_switch {
            NONE
        } else {
            self.owner
        }
    }
}

/// An output (switch) or send (CA) VL buffer: its packets and its room in
/// blocks, in 24 bytes, so that a grant, a fill or a transmission's end
/// reads one cache line for both (on a large fabric each was a miss). The
/// crossbar output's state and whether the port's VL arbiter ever sends the
/// VL are here too: a grant tests all three. (Those past a port's first
/// slot are aligned to half a cache line in [`RestOut`], so that none
/// straddles two.)
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OutBuffer {
    /// The packets waiting, in order.
    pub queue: PacketQueue,
    /// Blocks held, including a packet on the wire.
    pub used: u32,
    /// Capacity.
    pub cap: u32,
    /// A crossbar transfer into this (port, VL) is under way: the crossbar
    /// output is busy (with a multiplexed crossbar, only the port's first
    /// VL's flag is used, for the whole port).
    pub crossing: bool,
    /// The port's VL arbiter ever sends this VL (VL15 always; a data VL
    /// when its table gives it weight): a packet buffered on a VL that is
    /// never sent would starve there.
    pub served: bool,
    /// Input queues of the switch wait for this output port to free
    /// (`Switches::wait_bits`; only the port's first slot's flag is used,
    /// for the whole port). Waking the port's waiters reads their bitset,
    /// on a large fabric a miss, only when it is set; a transfer's or a
    /// transmission's end reads this line anyway.
    pub waited: bool,
}

impl OutBuffer {
    /// Whether `blocks` more fit.
    #[inline]
    pub fn fits(&self, blocks: u32) -> bool {
        self.used + blocks <= self.cap
    }
}

/// Dynamic state of a transmitter that every packet it sends reads and
/// writes: 24 bytes, so that its credits fit beside it in one cache line
/// (`credits.rs` keeps the two together; on a large fabric each line a
/// packet touches is an L2 cache miss).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TxState {
    /// The link is serializing a packet; cleared by its `LinkFree` event (not
    /// by the clock, so that a transmission never starts before the previous
    /// one's end has been handled).
    pub busy: bool,
    /// End of the current or last transmission.
    pub busy_until: Time,
    /// Slot and blocks of the packet on the wire, released from the output
    /// buffer when its last byte has left.
    pub sending_slot: u8,
    /// Blocks held in the output buffer by the packet on the wire (0: none, or
    /// the packet came straight from an input buffer).
    pub sending_blocks: u16,
    /// Non-empty output (send) queues, bit per slot.
    pub outq_mask: u16,
    /// Its `LinkFree` event was left out (a host with nothing more to send):
    /// it is free from `busy_until` on, once `Simulation::resolve_lazy_free`
    /// says so.
    pub lazy_free: bool,
    /// Its busy time not yet in [`crate::metrics::Metrics::busy_ps`].
    pub tally: BusyTally,
}

/// An output buffer past its port's first slot, in half a cache line of its own.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
pub(crate) struct RestOut(pub OutBuffer);

/// The rest of a transmitter's state, apart from [`TxState`]: what only
/// several data VLs (the VL arbiter), a head waiting for its data or a
/// switch without output buffers need.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(crate) struct TxCold {
    /// Time of a pending `OutputReady`, or 0.
    pub ready_wake_at: Time,
    /// Without output buffers: the switch input port feeding the packet on
    /// the wire (its crossbar input frees with the link), or `NONE`.
    pub feeding_input: u32,
    /// Its VL slot.
    pub feeding_slot: u8,
    /// VL arbitration state.
    pub arb: VlArbState,
}

impl Default for TxCold {
    fn default() -> Self {
        TxCold { ready_wake_at: 0, feeding_input: crate::sim::NONE, feeding_slot: 0, arb: VlArbState::default() }
    }
}

/// What a port's events touch most, in two cache lines: the transmitter
/// and its credits (every packet sent reads and writes both), then its
/// description, the output buffer of its first VL slot, the input queue of
/// its first queue (VL0's, for a fabric's data: the only data VL by
/// default) and a switch's crossbar input of its first slot. A grant reads
/// the output's buffer, transmitter and description, and the input's queue
/// and crossbar input; a transmission the output's line and the
/// description's peer; an arrival the input queue and crossbar input.
/// Apart, these were six arrays, each a cache miss on a large fabric and a
/// pointer to reload on every use. Aligned to 128 bytes: the L2 cache of
/// Intel's cores fetches such a pair of lines together. The other slots'
/// buffers, queues and crossbar inputs are in [`Ports`]' `out_rest`,
/// `inq_rest` and `xin_rest`.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(128))]
pub(crate) struct PortLine {
    pub tx: TxState,
    pub c: PortCredits,
    pub model: PortModel,
    pub out0: OutBuffer,
    pub inq0: PacketQueue,
    pub xin0: CrossbarInput,
}

impl PortLine {
    /// The line of a port described by `model`, whose first output buffer
    /// is `out0` and first crossbar input `xin0`, idle and empty (its
    /// credits are given by [`Credits::new`]).
    pub fn new(model: PortModel, out0: OutBuffer, xin0: CrossbarInput) -> Self {
        PortLine { tx: TxState::default(), c: PortCredits::default(), out0, model, inq0: PacketQueue::default(), xin0 }
    }
}

/// The state of every port.
#[derive(Debug, Clone)]
pub(crate) struct Ports {
    /// Node index, by global port.
    pub node: Vec<u32>,
    /// The distinct cable timings, indexed by [`PortModel::timing`].
    pub timings: IdVec<LinkTiming>,
    /// The rest of the transmitters' state, by global port (the state
    /// every packet touches is beside its credits: [`Ports::tx`]).
    pub tx_cold: IdVec<TxCold>,
    /// Credits each transmitter holds for its receiver's VL buffers.
    pub credits: Credits,
    /// Input queues past each port's first (in its line), by
    /// [`crate::layout::Layout::pq`] less the number of ports: that layout
    /// numbers every port's first queue before the others.
    pub inq_rest: IdVec<PacketQueue>,
    /// Capacity of every input queue in blocks, by `Layout::pq`.
    pub in_cap: Vec<u32>,
    /// Output (switch) or send (CA) VL buffers past each port's first (in
    /// its line), by [`crate::layout::Layout::pv`] less the number of ports.
    pub out_rest: IdVec<RestOut>,
    /// A switch's crossbar inputs past each port's first (in its line), by
    /// `Layout::pv` less the number of ports (with a crossbar port per VL;
    /// a multiplexed crossbar has only the first).
    pub xin_rest: IdVec<CrossbarInput>,
    /// SL2VL tables.
    pub sl2vl: Sl2VlMap,
    /// Distinct VLArbitration tables.
    pub arb_tables: IdVec<VlArbTable>,
    /// The table of each port, by global port.
    pub port_arb: IdVec<u16>,
    /// The VL arbitration policy.
    pub arbiter: VlArbiter,
    /// Flow-control packets waiting for their transmitters, where they are
    /// charged link time.
    pub fcp: FlowControlPackets,
}

/// Item `i` of a per-(port, slot) or per-(port, queue) array whose first
/// `lines.len()` items are in the ports' lines (`first` of each) and the
/// others in `rest` (`item` of each): the layout of [`Ports`]' output
/// buffers and input queues.
#[inline(always)]
fn line_or_rest<'a, T, R>(lines: &'a [PortLine], rest: &'a [R], i: usize, first: impl Fn(&'a PortLine) -> &'a T, item: impl Fn(&'a R) -> &'a T) -> &'a T {
    match i.checked_sub(lines.len()) {
        None => first(&lines[i]),
        Some(k) => item(&rest[k]),
    }
}

impl Ports {
    /// The number of ports.
    #[inline]
    pub fn len(&self) -> usize {
        self.credits.lines().len()
    }

    /// The description of port `gp`.
    #[inline(always)]
    pub fn model(&self, gp: u32) -> &PortModel {
        &self.credits.line(gp).model
    }

    /// Every port's description, by global port.
    pub fn models(&self) -> impl Iterator<Item = &PortModel> + '_ {
        self.credits.lines().iter().map(|l| &l.model)
    }

    /// The transmitter of port `gp`.
    #[inline(always)]
    pub fn tx(&self, gp: u32) -> &TxState {
        &self.credits.line(gp).tx
    }

    /// Likewise, to change.
    #[inline(always)]
    pub fn tx_mut(&mut self, gp: u32) -> &mut TxState {
        &mut self.credits.line_mut(gp).tx
    }

    /// Timing of the cable at port `gp`.
    #[inline]
    pub fn timing(&self, gp: u32) -> &LinkTiming {
        &self.timings[self.model(gp).timing as usize]
    }

    /// The output buffer of VL slot `slot` of port `gp`.
    #[inline(always)]
    pub fn out(&self, gp: u32, slot: u8) -> &OutBuffer {
        match slot {
            0 => &self.credits.line(gp).out0,
            _ => &self.out_rest[self.rest_index(gp, slot)].0,
        }
    }

    /// Likewise, to change.
    #[inline(always)]
    pub fn out_mut(&mut self, gp: u32, slot: u8) -> &mut OutBuffer {
        match slot {
            0 => &mut self.credits.line_mut(gp).out0,
            _ => {
                let k = self.rest_index(gp, slot);
                &mut self.out_rest[k].0
            }
        }
    }

    /// Index in `out_rest` or `inq_rest` of slot or queue `k` (not 0) of
    /// port `gp`: the arrays' `Layout::pv` or `Layout::pq` less the number
    /// of ports.
    #[inline(always)]
    fn rest_index(&self, gp: u32, k: u8) -> usize {
        (k as usize - 1) * self.len() + gp as usize
    }

    /// The output buffer of per-(port, slot) index `pv`
    /// ([`crate::layout::Layout::pv`]).
    pub fn out_at(&self, pv: usize) -> &OutBuffer {
        Self::out_in(&self.credits, &self.out_rest, pv)
    }

    /// `out_at` from the two places output buffers are kept, for a caller
    /// that holds another part of the ports mutably.
    #[inline]
    pub fn out_in<'a>(credits: &'a Credits, out_rest: &'a [RestOut], pv: usize) -> &'a OutBuffer {
        line_or_rest(credits.lines(), out_rest, pv, |l| &l.out0, |r| &r.0)
    }

    /// Number of output buffers: ports × slots.
    pub fn out_len(&self) -> usize {
        self.len() + self.out_rest.len()
    }

    /// Every output buffer, by `Layout::pv`.
    pub fn outs(&self) -> impl Iterator<Item = &OutBuffer> + '_ {
        self.credits.lines().iter().map(|l| &l.out0).chain(self.out_rest.iter().map(|r| &r.0))
    }

    /// Input queue `q` of port `gp`.
    #[inline(always)]
    pub fn inq(&self, gp: u32, q: u8) -> &PacketQueue {
        match q {
            0 => &self.credits.line(gp).inq0,
            _ => &self.inq_rest[self.rest_index(gp, q)],
        }
    }

    /// Likewise, to change.
    #[inline(always)]
    pub fn inq_mut(&mut self, gp: u32, q: u8) -> &mut PacketQueue {
        match q {
            0 => &mut self.credits.line_mut(gp).inq0,
            _ => {
                let k = self.rest_index(gp, q);
                &mut self.inq_rest[k]
            }
        }
    }

    /// The input queue of per-input-queue index `pq`
    /// ([`crate::layout::Layout::pq`]).
    pub fn inq_at(&self, pq: usize) -> &PacketQueue {
        Self::inq_in(&self.credits, &self.inq_rest, pq)
    }

    /// `inq_at` from the two places input queues are kept, for a caller
    /// that holds another part of the ports mutably.
    #[inline]
    pub fn inq_in<'a>(credits: &'a Credits, inq_rest: &'a [PacketQueue], pq: usize) -> &'a PacketQueue {
        line_or_rest(credits.lines(), inq_rest, pq, |l| &l.inq0, |q| q)
    }

    /// Number of input queues: ports × queues per port.
    pub fn inq_len(&self) -> usize {
        self.len() + self.inq_rest.len()
    }

    /// Every input queue, by `Layout::pq`.
    pub fn inqs(&self) -> impl Iterator<Item = &PacketQueue> + '_ {
        self.credits.lines().iter().map(|l| &l.inq0).chain(&self.inq_rest)
    }

    /// The crossbar input of port `gp`'s crossbar slot `xslot` (the VL slot
    /// masked by `Params::xbar_slot_mask`).
    #[inline(always)]
    pub fn xin(&self, gp: u32, xslot: u8) -> CrossbarInput {
        match xslot {
            0 => self.credits.line(gp).xin0,
            _ => self.xin_rest[self.rest_index(gp, xslot)],
        }
    }

    /// Likewise, to change.
    #[inline(always)]
    pub fn xin_mut(&mut self, gp: u32, xslot: u8) -> &mut CrossbarInput {
        match xslot {
            0 => &mut self.credits.line_mut(gp).xin0,
            _ => {
                let k = self.rest_index(gp, xslot);
                &mut self.xin_rest[k]
            }
        }
    }

    /// The VLArbitration table of port `gp` (for checks and reports; the hot
    /// path borrows the transmitter mutably beside it).
    pub fn arb_table(&self, gp: u32) -> &VlArbTable {
        &self.arb_tables[self.port_arb[gp as usize] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::{OutBuffer, PortLine, PortModel, RestOut, TxCold, TxState};
    use crate::sim::NONE;

    #[test]
    fn one_field_is_a_switch_ports_switch_or_a_ca_ports_host() {
        let sw = PortModel::new(3, 5, NONE, 40, NONE, 0);
        assert!(sw.is_switch);
        assert_eq!((sw.switch(), sw.host(), sw.peer, sw.peer_switch, sw.port), (5, NONE, 40, NONE, 3));
        assert_eq!(sw.switch_or_none(), 5);
        let ca = PortModel::new(1, NONE, 7, 12, 2, 0);
        assert!(!ca.is_switch);
        assert_eq!((ca.host(), ca.peer, ca.peer_switch), (7, 12, 2));
        assert_eq!(ca.switch_or_none(), NONE);
        let not_a_host = PortModel::new(2, NONE, NONE, NONE, NONE, 0);
        assert_eq!(not_a_host.host(), NONE);
    }

    /// Every cabled port knows its peer's switch, as the peer's own model
    /// says (what a packet's arrival relies on instead of reading it).
    #[test]
    fn a_ports_peer_switch_is_the_switch_of_its_peer() {
        use ibnetsim_fabric::gen::FatTreeParams;
        use ibnetsim_sm::routing::build_engine;
        use ibnetsim_sm::{LidMap, RoutingOptions};
        let f = FatTreeParams::new(4, 2).build().unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let t = build_engine("ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).unwrap().tables;
        let sim = crate::Simulation::new(&f, &lids, &t, &crate::SimConfig::default()).unwrap();
        let (mut to_switch, mut to_ca) = (0, 0);
        for m in sim.ports.models().filter(|m| m.peer != NONE) {
            let peer = sim.ports.model(m.peer);
            if peer.is_switch {
                assert_eq!(m.peer_switch, peer.switch());
                to_switch += 1;
            } else {
                assert_eq!(m.peer_switch, NONE);
                to_ca += 1;
            }
        }
        // A 4-ary 2-tree: 16 hosts, 8 switches, 16 switch-to-switch cables.
        assert_eq!((to_switch, to_ca), (16 + 2 * 16, 16));
    }

    #[test]
    fn four_port_models_share_a_cache_line_and_a_transmitter_takes_24_bytes() {
        assert_eq!((std::mem::size_of::<PortModel>(), std::mem::align_of::<PortModel>()), (16, 16));
        assert_eq!(std::mem::size_of::<TxState>(), 24, "its credits fit beside it in a cache line");
        assert_eq!((std::mem::size_of::<TxCold>(), std::mem::align_of::<TxCold>()), (32, 32));
    }

    #[test]
    fn a_ports_line_is_two_cache_lines_and_its_transmitter_and_credits_fill_the_first() {
        assert_eq!((std::mem::size_of::<PortLine>(), std::mem::align_of::<PortLine>()), (128, 128));
        assert_eq!(std::mem::offset_of!(PortLine, model), 64);
        assert_eq!(std::mem::offset_of!(PortLine, xin0), 116, "the crossbar input shares the input queue's cache line");
    }

    #[test]
    fn an_output_buffer_keeps_its_queue_and_room_in_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<OutBuffer>(), 24);
        assert_eq!((std::mem::size_of::<RestOut>(), std::mem::align_of::<RestOut>()), (32, 32));
    }
}
