//! The routing stage: forwarding-table lookup into routing options.
//!
//! The DLID's LFT entry is always the first option. When the selection policy
//! wants all paths, the entries of every LID of the destination port
//! (`base .. base + 2^LMC`) follow, deduplicated by port — paper 002 §4.1
//! reads them all at once from an interleaved table. Each option's VL is the
//! switch's SL2VL entry for (input port, output port, SL); VL15 stays VL15.
//! An entry of 255 (no path), 0 (the switch itself), an unconnected port or
//! the input port itself (IBA switches do not send unicast back where it came
//! from) is not an option.
//!
//! A routing-time selection policy (`lfu`) chooses here, once per packet and
//! switch ([`Simulation::pin_choice`]), when the head is first routed.

use std::cell::Cell;

use ibnetsim_fabric::PortNum;
use ibnetsim_sm::{RouteLabel, NO_PATH};

use crate::engine::Time;
use crate::hca::HostModel;
use crate::link::LinkTiming;
use crate::metrics::DropReason;
use crate::packet::{Packet, PacketId, FLAG_VL15};
use crate::selection::{Candidate, Candidates};
use crate::switch::multicast::is_multicast;
use crate::sim::{Simulation, NONE};

impl Simulation {
    /// When the header of a packet whose first byte reaches a switch input at
    /// `first_byte` (over a link of `timing`) has been routed: the LRH and BTH
    /// must be in (cut-through), then the routing and arbitration delays.
    #[inline]
    pub(crate) fn routed_at(&self, first_byte: Time, timing: &LinkTiming) -> Time {
        first_byte + timing.ser_ps(self.p.cut_through_bytes) + self.p.switch_delay_ps
    }

    /// Brings the LFT entry of `dlid` at switch `swi` into the cache: the
    /// packet arriving now is routed with it a routing delay later, and on a
    /// large fabric the tables span megabytes (the 1,728-host fat tree spent a
    /// tenth of its time waiting for this lookup).
    #[inline]
    pub(crate) fn prefetch_route(&self, swi: u32, dlid: u16) {
        crate::prefetch::prefetch(&self.switches.lft, swi as usize * self.switches.lft_stride + dlid as usize);
    }

    /// Fills `out` with the options of `p`, the head `head` of input queue
    /// `queue` (a [`crate::layout::Layout::pq`] index) of switch `swi`, arrived
    /// on `in_port`; `Err` gives the drop reason when there is none.
    // Inlined into arbitration: a unicast packet under a single-path policy
    // (every benchmark) needs one table entry and its VL, and a call cost as
    // much again; the other cases go out of line.
    #[inline(always)]
    pub(crate) fn route(&self, swi: u32, in_port: PortNum, queue: usize, head: PacketId, p: &Packet, out: &mut Candidates) -> Result<(), DropReason> {
        if is_multicast(p.dlid) {
            return self.route_multicast(swi, in_port, queue, head, p, out);
        }
        let vl15 = p.flags & FLAG_VL15 != 0;
        if (self.p.fully_adaptive && !vl15) || self.mech.selection.wants_all_paths() {
            return self.route_multipath(swi, in_port, p, out);
        }
        let port = self.lft_entry(swi, p.dlid as usize);
        if port == NO_PATH {
            return Err(DropReason::NoRoute);
        }
        if port == in_port {
            return Err(DropReason::InputPortIsOutput);
        }
        let slot = if vl15 { self.layout.vl15_slot } else { self.ports.sl2vl.vl(self.switches.lines[swi as usize].model.node, in_port, port, p.sl) };
        out.push(Candidate { port, slot, partition: 0, escape: false });
        Ok(())
    }

    /// Port of switch `swi`'s forwarding table entry for `lid` (`NO_PATH`
    /// past the table's end). An entry naming no port the switch can send
    /// on is `NO_PATH` in its table already (`Topology::take_sendable_lft`).
    #[inline(always)]
    fn lft_entry(&self, swi: u32, lid: usize) -> u8 {
        if lid < self.switches.lft_stride {
            self.switches.lft.get(swi as usize * self.switches.lft_stride + lid).copied().unwrap_or(NO_PATH)
        } else {
            NO_PATH
        }
    }

    /// `route` for a unicast packet under a policy that sees every path of
    /// its destination: `fully-adaptive` (escape paths) or one that wants
    /// all paths (adaptive selection).
    #[inline(never)]
    fn route_multipath(&self, swi: u32, in_port: PortNum, p: &Packet, out: &mut Candidates) -> Result<(), DropReason> {
        let sm = &self.switches.lines[swi as usize].model;
        let vl15 = p.flags & FLAG_VL15 != 0;
        let back_to_input = Cell::new(false);
        // The VL slot of a usable LFT entry `port`, or `None`.
        let usable = |port: u8| -> Option<u8> {
            if port == NO_PATH {
                return None;
            }
            if port == in_port {
                back_to_input.set(true);
                return None;
            }
            Some(if vl15 { self.layout.vl15_slot } else { self.ports.sl2vl.vl(sm.node, in_port, port, p.sl) })
        };
        let dlid = p.dlid as usize;
        let entry = |lid: usize| self.lft_entry(swi, lid);
        let escape_paths = self.p.fully_adaptive && !vl15;
        // The destination port's LIDs: a DLID no CA port owns has its own entry only.
        match self.hcas.lid_host.get(dlid).copied().filter(|&h| h != NONE).map(|h| &self.hcas.model[h as usize]) {
            Some(hm) if escape_paths => self.escape_path_options(hm, dlid, &usable, &entry, out),
            Some(hm) => {
                let mut add = |port: u8| {
                    if let Some(slot) = usable(port) {
                        out.push_unique_port(Candidate { port, slot, partition: 0, escape: false });
                    }
                };
                add(entry(dlid));
                for l in hm.base_lid as usize..hm.base_lid as usize + hm.lid_count as usize {
                    add(entry(l));
                }
            }
            None => {
                if let Some(slot) = usable(entry(dlid)) {
                    out.push(Candidate { port: entry(dlid), slot, partition: 0, escape: false });
                }
            }
        }
        if out.is_empty() {
            return Err(if back_to_input.get() { DropReason::InputPortIsOutput } else { DropReason::NoRoute });
        }
        Ok(())
    }

    /// The options of a unicast packet under `fully-adaptive` selection, for
    /// destination port `hm` (see [`crate::selection::FullyAdaptive`]): by
    /// the label of the DLID's offset, the escape entry alone (towards both
    /// parts of the next buffer), or the adaptive entries (at most
    /// `max_options − 1`, lowest offsets first) and then the escape ones.
    /// Kept out of line: the common routing path stays small.
    #[inline(never)]
    fn escape_path_options(&self, hm: &HostModel, dlid: usize, usable: &dyn Fn(u8) -> Option<u8>, entry: &dyn Fn(usize) -> u8, out: &mut Candidates) {
        let labels = &self.switches.labels;
        let lids = hm.base_lid as usize..hm.base_lid as usize + hm.lid_count as usize;
        let escape = |port: u8, out: &mut Candidates| {
            if let Some(slot) = usable(port) {
                // Into the next adaptive part if it has room, else its escape part.
                out.push(Candidate { port, slot, partition: 0, escape: true });
                out.push(Candidate { port, slot, partition: 1, escape: true });
            }
        };
        match labels.get((dlid - lids.start) as u8) {
            RouteLabel::Primary | RouteLabel::Escape => escape(entry(dlid), out),
            RouteLabel::Adaptive => {
                let mut adaptive_left = self.mech.selection.max_adaptive_options();
                for l in lids.clone() {
                    if adaptive_left > 0 && labels.get((l - lids.start) as u8) == RouteLabel::Adaptive {
                        adaptive_left -= 1;
                        if let Some(slot) = usable(entry(l)) {
                            out.push_unique_port(Candidate { port: entry(l), slot, partition: 0, escape: false });
                        }
                    }
                }
                for l in lids.clone() {
                    if labels.get((l - lids.start) as u8) == RouteLabel::Escape {
                        escape(entry(l), out);
                    }
                }
            }
        }
    }

    /// The options of a multicast head: the ports of the switch's MFT entry it
    /// still owes a copy (never the arrival port), at most
    /// [`crate::selection::MAX_CANDIDATES`] at a time — the next ones come
    /// once those have their copies.
    fn route_multicast(&self, swi: u32, in_port: PortNum, queue: usize, head: PacketId, p: &Packet, out: &mut Candidates) -> Result<(), DropReason> {
        let sm = &self.switches.lines[swi as usize].model;
        let left = self.switches.mcast.ports_left(swi, queue, head, p.dlid, in_port);
        for port in left.iter() {
            if port == 0 || port as u32 > sm.num_ports || self.ports.model(sm.gp(port)).peer == NONE {
                continue;
            }
            let slot = if p.flags & FLAG_VL15 != 0 { self.layout.vl15_slot } else { self.ports.sl2vl.vl(sm.node, in_port, port, p.sl) };
            if !out.push_unique_port(Candidate { port, slot, partition: 0, escape: false }) {
                break;
            }
        }
        if out.is_empty() {
            return Err(DropReason::NoRoute);
        }
        Ok(())
    }

    /// Routing-time selection: on the first routing of packet `id` at switch
    /// `swi` the policy chooses among `cands` and the choice is pinned in the
    /// packet; on later attempts `cands` is narrowed to the pinned option, so
    /// the packet waits for it rather than re-choosing.
    #[inline]
    pub(crate) fn pin_choice(&mut self, swi: u32, id: PacketId, cands: &mut Candidates) {
        let p = self.arena[id];
        if p.pinned != 0 {
            debug_assert!(cands.as_slice().iter().any(|c| c.port == p.pinned), "the options of a packet at a switch do not change");
            Self::pinned_only(&p, cands);
            return;
        }
        let sm = self.switches.lines[swi as usize].model;
        let (layout, per_vl) = (self.layout, self.mech.selection.counts_per_vl());
        let k = self.mech.selection.choose_at_routing(cands, |c| layout.pv(sm.gp(c.port), if per_vl { c.slot } else { 0 }));
        self.arena[id].pinned = cands.as_slice()[k].port;
        cands.keep_only(k);
    }

    /// Narrows `cands` to the option `p` is pinned to, if any (for checks that
    /// must see what arbitration sees).
    pub(crate) fn pinned_only(p: &Packet, cands: &mut Candidates) {
        if p.pinned != 0 {
            if let Some(k) = cands.as_slice().iter().position(|c| c.port == p.pinned) {
                cands.keep_only(k);
            }
        }
    }
}
