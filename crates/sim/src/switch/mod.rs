//! The IBA switch: input buffers per (port, VL), routing overlapped with
//! reception (cut-through), a crossbar with round-robin arbitration by
//! default, optional output buffers per (port, VL), and IBA output VL arbitration.
//!
//! * [`input`] — input queues, one per (port, VL slot), linked in arrival order.
//! * [`organisation`] — which packets of an input queue may cross: its head
//!   (`fifo`, head-of-line blocking as in a real IBA VL buffer) or the first
//!   packet for each output (`voq`), and how many at once.
//! * [`arbiter`] — the order in which input queues get the crossbar: round
//!   robin or oldest first.
//! * [`route`] — the forwarding-table lookup that yields routing options.
//! * [`crossbar`] — arbitration among input heads, selection among options,
//!   and the transfer, multiplexed (one crossbar port per physical port, papers
//!   000/001) or per VL (papers 002/003), with a configurable speedup.
//! * [`multicast`] — MFT entries and the replication of a multicast packet.
//! * [`output`] — output buffers and their link, with VL arbitration.
//!
//! # Timing and the zero-load latency
//!
//! Let a packet of `W` wire bytes start on the link into switch `s` at `t_in`
//! (link `i`: serialization `ser_i`, propagation `prop_i`), and leave on link
//! `o`. With `H` = 20 B (LRH + BTH), routing delay `R` and arbitration delay `A`:
//!
//! ```text
//! routed   t_x   = t_in + prop_i + ser_i(H) + R + A      (crossbar request)
//! crossbar x_end = max(t_x + ceil(ser_o(W) / speedup),   (crossbar at speedup × rate of o)
//!                      t_in + prop_i + ser_i(W))          (cannot pass the arriving tail)
//! out      t_out = max(t_x, x_end − ser_o(W))            (cut-through without underrun)
//! ```
//!
//! Without output buffers the crossbar feeds the link directly and
//! `t_out = max(t_x, t_in + prop_i + ser_i(W) − ser_o(W))`. The source HCA
//! starts at generation time; the sink has consumed the packet at
//! `t_out(last) + prop + ser(W)` of the last link. So for a path of `k`
//! switches with equal links and speedup ≥ 1, in both modes,
//!
//! ```text
//! zero-load latency = k · (prop + ser(H) + R + A) + prop + ser(W)
//! ```
//!
//! which `tests/it/zero_load.rs` checks to the picosecond for 1, 2 and 3
//! switches, with and without output buffers, and for mixed link rates.

pub mod arbiter;
pub mod crossbar;
pub mod input;
pub mod multicast;
pub mod organisation;
pub mod output;
pub mod route;

use crate::engine::Time;
use crate::table::IdVec;

/// Static description of one switch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SwitchModel {
    /// Node index.
    pub node: u32,
    /// Global index of port 1.
    pub port_base: u32,
    /// Number of ports.
    pub num_ports: u32,
    /// Its bits over input (port, slot) queues past the first word (which
    /// is in its [`SwitchLine`]) start at this word of `Switches::more_bits`.
    pub bits_base: u32,
    /// Words of one such bitset, the first included.
    pub bits_words: u32,
    /// First word of its per-output-port waiter bitsets in `wait_bits`.
    pub wait_base: u32,
}

impl SwitchModel {
    /// Global index of this switch's port `port` (numbered from 1).
    #[inline]
    pub fn gp(&self, port: u8) -> u32 {
        crate::layout::Layout::node_port(self.port_base, port)
    }

    /// The number on this switch of its global port `gp` (the inverse of
    /// [`SwitchModel::gp`]), without reading the port's description.
    #[inline]
    pub fn port_of(&self, gp: u32) -> u8 {
        debug_assert!(gp >= self.port_base && gp < self.port_base + self.num_ports, "port {gp} is not on this switch");
        (gp - self.port_base + 1) as u8
    }
}

/// Dynamic state of one switch.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SwitchState {
    /// Round-robin pointer over input (port, slot) queues.
    pub rr: u32,
    /// Round-robin pointer over output ports (bufferless mode).
    pub out_rr: u32,
    /// Time of the pending `SwitchWake`, or 0.
    pub wake_at: Time,
    /// Non-empty VL15 input queues.
    pub vl15_inputs: u32,
}

/// A switch's description, its dynamic state and the first word of its
/// input-queue bits in one cache line: an arbitration reads all three, as
/// does a packet's arrival, and on a large fabric each was a miss of its
/// own. (The first word covers 32 ports with one data VL.)
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub(crate) struct SwitchLine {
    /// Static description.
    pub model: SwitchModel,
    /// Dynamic state.
    pub state: SwitchState,
    /// Word 0 of its input-queue bits.
    pub bits: QueueBits,
}

/// One word of a switch's bits over its input queues: the non-empty ones,
/// and those whose head must be (re)considered by crossbar arbitration.
/// Side by side, because marking a port pending reads one and writes the
/// other.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QueueBits {
    /// Non-empty input queues.
    pub nonempty: u64,
    /// Pending input queues.
    pub pending: u64,
}

/// What the switches own beyond their ports: forwarding tables, crossbar
/// state and the arbitration bookkeeping (see [`input`]).
#[derive(Debug, Clone)]
pub(crate) struct Switches {
    /// Each switch's description and state, by dense switch index.
    pub lines: IdVec<SwitchLine>,
    /// `lft[switch * lft_stride + lid]`, 255 = no path.
    pub lft: IdVec<u8>,
    /// LIDs per LFT row.
    pub lft_stride: usize,
    /// The role of each path-bits offset's LFT entry (escape, adaptive or
    /// ordinary; see [`ibnetsim_sm::labels`]).
    pub labels: ibnetsim_sm::PathLabels,
    /// Per switch, the words of bits over its input queues past the first
    /// (see [`QueueBits`], [`SwitchModel::bits_base`]).
    pub more_bits: IdVec<QueueBits>,
    /// Per output port, the input queues whose head waits for it.
    pub wait_bits: IdVec<u64>,
    /// Per input queue, the head whose routing options are remembered and the
    /// first of them (see [`RoutedHead`]); read only for a head whose
    /// `Packet::remembered` is set.
    pub routed: IdVec<RoutedHead>,
    /// The whole list, per input queue, where a remembered head has more than
    /// one option; empty unless the selection policy can give more than one
    /// (adaptive and fully adaptive selection).
    pub routed_more: IdVec<crate::selection::Candidates>,
    /// Multicast forwarding sets and replication state.
    pub mcast: multicast::Multicast,
    /// Scratch for bufferless arbitration: request per (output port, slot).
    pub scratch_req: Vec<u32>,
    /// The option each request is for.
    pub scratch_opt: Vec<crate::selection::Candidate>,
    /// Scratch for oldest-first arbitration: (age, round-robin rank, input
    /// queue) of the pending inputs, one entry per input queue at most.
    pub scratch_order: Vec<(Time, u32, u32)>,
    /// iSLIP's pointers and scratch (empty under the other arbiters).
    pub islip: arbiter::islip::IslipState,
}

impl Switches {
    /// Word `w` of switch `swi`'s input-queue bits.
    #[inline(always)]
    pub(crate) fn bits(&self, swi: u32, w: usize) -> QueueBits {
        let line = &self.lines[swi as usize];
        if w == 0 {
            line.bits
        } else {
            self.more_bits[line.model.bits_base as usize + w - 1]
        }
    }

    /// Likewise, to change.
    #[inline(always)]
    pub(crate) fn bits_mut(&mut self, swi: u32, w: usize) -> &mut QueueBits {
        let line = &mut self.lines[swi as usize];
        if w == 0 {
            &mut line.bits
        } else {
            &mut self.more_bits[line.model.bits_base as usize + w - 1]
        }
    }

    /// Whether no input queue of switch `swi` is pending.
    // The first word inline at every caller; the others out of line.
    #[inline(always)]
    pub(crate) fn nothing_pending(&self, swi: u32) -> bool {
        let line = &self.lines[swi as usize];
        line.bits.pending == 0 && (line.model.bits_words <= 1 || self.nothing_more_pending(&line.model))
    }

    #[inline(never)]
    fn nothing_more_pending(&self, sm: &SwitchModel) -> bool {
        let more = sm.bits_base as usize..(sm.bits_base + sm.bits_words - 1) as usize;
        self.more_bits.as_slice()[more].iter().all(|w| w.pending == 0)
    }
}

/// A crossbar input: when its last transfer ends and how many more it may
/// start (up to `switch.max_transfers_per_input`), kept in its port's line
/// ([`crate::port::PortLine`]) beside the input queue that every grant,
/// transfer end and arrival reads: as two arrays they were two more cache
/// lines per switch hop on a large fabric. Packed, 9 bytes, to fit there
/// (its fields are only ever read and written by value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed)]
pub(crate) struct CrossbarInput {
    until: Time,
    free: u8,
}

impl CrossbarInput {
    /// An idle input that may start `transfers` at once.
    pub fn new(transfers: u8) -> Self {
        CrossbarInput { until: 0, free: transfers }
    }

    /// Transfers it may still start now ("busy" is a test against 0).
    #[inline(always)]
    pub fn free(self) -> u8 {
        self.free
    }

    /// End of the last transfer started (0 before the first): with output
    /// buffers, a head that arrives while it is under way and is routed by
    /// then is offered at its end (see `Simulation::push_input`).
    #[inline(always)]
    pub fn until(self) -> Time {
        self.until
    }

    /// Starts a transfer that ends at `until`, with the event that ends it.
    #[inline(always)]
    pub fn start(&mut self, until: Time) {
        debug_assert!(self.free > 0, "a transfer started on a full crossbar input");
        self.free -= 1;
        self.until = until;
    }

    /// A transfer has ended.
    #[inline(always)]
    pub fn end(&mut self) {
        self.free += 1;
    }
}

/// The routing options remembered for the head of one input queue that had
/// to wait (`remember_route`), so that it is not routed again at every
/// attempt. Deterministic routing gives one option, which is kept here
/// inline: 12 bytes per queue where the whole 65-byte list, one per queue,
/// made the array larger than the L2 cache on a 1 728-host fat tree.
#[derive(Debug, Clone, Copy)]
pub struct RoutedHead {
    /// The head the options are for (`NIL`: none yet; a head that has left
    /// may stay: `Packet::remembered` says whether the memo is the head's).
    pub head: crate::packet::PacketId,
    /// How many options it has (more than one: the list is in `routed_more`).
    pub len: u8,
    /// The first (usually the only) option.
    pub first: crate::selection::Candidate,
}

impl RoutedHead {
    /// No remembered head.
    pub const NONE: RoutedHead = RoutedHead { head: crate::packet::NIL, len: 0, first: crate::selection::Candidate { port: 0, slot: 0, partition: 0, escape: false } };
}

#[cfg(test)]
mod tests {
    use super::{CrossbarInput, RoutedHead, SwitchLine, SwitchModel};

    #[test]
    fn a_global_ports_number_on_its_switch_inverts_gp() {
        let sm = SwitchModel { node: 3, port_base: 40, num_ports: 24, bits_base: 0, bits_words: 1, wait_base: 0 };
        for port in 1..=24u8 {
            assert_eq!(sm.port_of(sm.gp(port)), port);
        }
        assert_eq!((sm.gp(1), sm.port_of(63)), (40, 24));
    }

    #[test]
    fn a_switchs_description_state_and_first_queue_bits_share_one_cache_line() {
        assert_eq!((std::mem::size_of::<SwitchLine>(), std::mem::align_of::<SwitchLine>()), (64, 64));
    }

    #[test]
    fn a_crossbar_input_counts_its_free_transfers_and_keeps_the_last_end() {
        assert_eq!(std::mem::size_of::<CrossbarInput>(), 9);
        let mut x = CrossbarInput::new(3);
        assert_eq!((x.free(), x.until()), (3, 0));
        x.start(100);
        x.start(40);
        assert_eq!((x.free(), x.until()), (1, 40), "the last start's end");
        x.end();
        x.end();
        assert_eq!((x.free(), x.until()), (3, 40));
    }

    #[test]
    fn a_remembered_route_takes_twelve_bytes() {
        // 16 input queues' remembered routes share three cache lines.
        assert_eq!(std::mem::size_of::<RoutedHead>(), 12);
    }
}
