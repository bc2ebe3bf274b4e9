//! The host channel adapter: per-SL send queues, the port's send VL buffers,
//! VL arbitration at the port, and a sink.
//!
//! Paper 000 §2.3 (Fig. 2): packets wait in one FCFS queue per SL; the HCA
//! serves the SL queues in priority order and moves each packet into the send
//! buffer of its VL (SL2VL of the CA port) when that buffer has room for it —
//! the DMA is not timed. The SL queues are unbounded: their length (reported as
//! the injection queue) shows an offered load the port cannot carry.
//! Management packets (VL15, QP0) have a queue of their own, served before
//! every SL queue. The send
//! VL buffers are then arbitrated onto the link like a switch's output buffers
//! (`switch/output.rs`). The sink consumes at link rate and returns credits as
//! it consumes (`channel.rs` explains why that is when the last byte arrives).
//! Trace messages larger than the MTU are segmented here (`on_trace`).

use crate::credits::blocks_for;
use crate::engine::{Event, Time};
use crate::link::wire_bytes;
use crate::metrics::DropReason;
use crate::packet::{Packet, PacketId, PacketKind, PacketQueue, FLAG_CONN, FLAG_FECN, FLAG_FLOW, FLAG_VL15, NIL};
use crate::sim::{Simulation, NONE};
use crate::table::IdVec;
use ibnetsim_sm::PathSl;

use crate::switch::multicast::is_multicast;
use crate::traffic::{Class, PathBits, Pattern, Source};

pub mod backlog;
pub mod transport;

use backlog::SourceQueues;
use transport::{Completion, FlowKey, Reply, Transport};

/// Index of the management (VL15) send queue of a host: QP0 traffic does not
/// wait behind the data SL queues and is served first.
pub(crate) const MGMT_QUEUE: usize = 16;

/// Static description of one host (a CA port with LIDs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostModel {
    /// Global port index.
    pub gp: u32,
    /// Node index.
    pub node: u32,
    /// Base LID.
    pub base_lid: u16,
    /// LIDs: `2^LMC`.
    pub lid_count: u16,
}

/// Dynamic state of one host.
// In this order, from a cache line's start: the counters, the left-out
// `LinkFree` event's sequence number and the first two SLs' send queues
// share one line, the only one a host whose traffic uses SL 0 or 1 touches
// (on a large fabric each line of the hosts' state is a cache miss per
// packet sent or delivered).
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
pub(crate) struct HostState {
    /// Packets in the send queues.
    pub queued: u64,
    /// Most packets ever in the send queues.
    pub peak: u64,
    /// Packets delivered to this host.
    pub delivered: u64,
    /// Queues that are non-empty, bit per index.
    pub sl_mask: u32,
    /// The sequence number of the `LinkFree` event its transmitter left out
    /// ([`crate::port::TxState::lazy_free`]).
    pub free_seq: u64,
    /// Unbounded send queue per SL (the injection queue), then the management
    /// (VL15) queue at index [`MGMT_QUEUE`].
    pub slq: [PacketQueue; 17],
}

/// The hosts (traffic endpoints): CA ports with LIDs, in LID order.
#[derive(Debug, Clone)]
pub(crate) struct Hcas {
    /// Static description, by host index.
    pub model: IdVec<HostModel>,
    /// Send queues, by host index.
    pub state: IdVec<HostState>,
    /// Host owning each LID, or `NONE`.
    pub lid_host: Vec<u32>,
    /// Flows, messages and replies.
    pub transport: Transport,
    /// The routing engine's per-path SLs (none: every packet keeps its
    /// class's SL).
    pub path_sl: PathSl,
    /// The open-loop sources' bounded send queues (`hca.source_queue_packets`).
    pub source_queues: SourceQueues,
}

/// One arrival of an open-loop source, as drawn from its stream.
struct Arrival {
    class: u8,
    sl: u8,
    dst: u32,
    dlid: u16,
    payload: u32,
    /// When it arrives, picoseconds.
    at: crate::engine::Time,
}

/// Draws `src`'s pending arrival and advances it to the next: the one place
/// that consumes a source's random stream, so that replaying a copy of the
/// source (bounded queues, `backlog.rs`) draws the same packets.
#[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
fn draw_arrival(src: &mut Source, classes: &[Class], hosts: &[HostModel]) -> Arrival {
    let class = &classes[src.class as usize];
    let dst = class.pattern.dest(src);
    let dlid = match &class.pattern {
        Pattern::Multicast { mlid, .. } => *mlid,
        _ => {
            let dm = hosts[dst as usize];
            match class.path_bits {
                PathBits::Base => dm.base_lid + src.chance(class.adaptive_fraction) as u16,
                PathBits::Random => dm.base_lid + src.pick(dm.lid_count as u32) as u16,
            }
        }
    };
    let payload = src.payload(&class.size);
    let at = src.due();
    src.advance();
    Arrival { class: src.class, sl: class.sl, dst, dlid, payload, at }
}

impl Simulation {
    /// Source `s`'s arrival is due now: a packet in its host's SL send
    /// queue, or, when its bounded queue is full, a count (`backlog.rs`).
    pub(crate) fn on_generate(&mut self, s: u32) {
        // From the compact array: the source's own lines may still be on
        // their way (`prefetch_generation`).
        let host = self.traffic.source_hosts[s as usize];
        let defer = self.hcas.source_queues.must_defer(s);
        if defer {
            let before = &self.traffic.sources[s as usize];
            self.hcas.source_queues.defer(s, before);
        }
        let src = &mut self.traffic.sources[s as usize];
        let a = draw_arrival(src, &self.traffic.classes, &self.hcas.model);
        let next = src.due();
        self.schedule(next, Event::Generate { source: s });
        if let Some(next) = self.queue.next_generation() {
            self.prefetch_generation(next, self.traffic.source_hosts[next as usize]);
        }
        if defer {
            let (sl, _) = self.packet_sl(a.class, a.sl, host, a.dlid);
            let wire = wire_bytes(a.payload, self.p.header_bytes);
            self.count_generated(host, a.class, sl, wire);
        } else {
            self.make_arrival(s, host, a, true);
        }
    }

    /// Asks for the lines the generation of source `s` at host `host` will
    /// read: the source's state and random stream, the host's state and its
    /// port's line. Sources take turns at random, so on a large fabric each
    /// is a miss; the next generation is known ([`crate::engine::FifoQueue::next_generation`])
    /// a dozen events or so ahead on the benchmarks.
    #[inline(always)]
    fn prefetch_generation(&self, s: u32, host: u32) {
        use crate::prefetch::{prefetch, prefetch_at};
        let sources = self.traffic.sources.as_slice();
        for offset in (0..std::mem::size_of::<crate::traffic::Source>()).step_by(64) {
            prefetch_at(sources, s as usize, offset);
        }
        prefetch(&self.hcas.state, host as usize);
        let gp = self.hcas.model[host as usize].gp as usize;
        let lines = self.ports.credits.lines();
        prefetch(lines, gp);
        prefetch_at(lines, gp, 64);
    }

    /// Makes arrival `a` of source `s` into a packet in its SL send queue;
    /// `count` it as generated unless it was when it arrived (deferred).
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn make_arrival(&mut self, s: u32, host: u32, a: Arrival, count: bool) {
        let id = self.new_packet(a.at, a.class, a.sl, host, a.dst, a.dlid, a.payload);
        self.open_single_packet_message(id);
        self.hcas.source_queues.on_enqueue(s);
        if count {
            self.enqueue_generated(id);
        } else {
            self.push_send_queue(id);
        }
    }

    /// Source `s`'s oldest deferred arrival becomes a packet, back-dated to
    /// its arrival time. Called while the host's send queues are being
    /// drained (`hca_fill`), which then serves it in turn.
    fn make_deferred(&mut self, s: u32) {
        let mut replay = self.hcas.source_queues.take_replay(s);
        let host = replay.host;
        let a = draw_arrival(&mut replay, &self.traffic.classes, &self.hcas.model);
        self.hcas.source_queues.made(s, replay);
        self.make_arrival(s, host, a, false);
    }

    /// With replies on, an open-loop data packet is a message of its own.
    #[inline]
    fn open_single_packet_message(&mut self, id: PacketId) {
        if !self.hcas.transport.replies() {
            return;
        }
        let p = self.arena[id];
        if p.flags & FLAG_VL15 != 0 || is_multicast(p.dlid) {
            // Management and multicast datagrams are unacknowledged.
            return;
        }
        let key = FlowKey { src: p.src, dst: p.dst, sl: p.sl, class: p.class };
        // A deferred arrival's message began when it arrived.
        let (flow, psn) = self.hcas.transport.open_message(key, 1, p.gen_time, NONE);
        let q = &mut self.arena[id];
        q.flow = flow;
        q.psn = psn;
        q.flags |= FLAG_FLOW;
    }

    /// Sends a message of `bytes` payload from `src` to `dst` now: the HCA
    /// splits it into MTU-sized packets (the last one shorter), all generated
    /// now, with consecutive PSNs of their flow. `source` is the closed-loop
    /// source to tell when it completes, or `NONE`.
    #[allow(clippy::too_many_arguments)]
    fn send_message(&mut self, src: u32, dst: u32, dlid: u16, sl: u8, class: u8, bytes: u32, source: u32) {
        let mtu = self.p.mtu_bytes;
        let packets = bytes.div_ceil(mtu);
        let (flow, first) = self.hcas.transport.open_message(FlowKey { src, dst, sl, class }, packets, self.now, source);
        let mut left = bytes;
        let mut psn = first;
        while left > 0 {
            let payload = left.min(mtu);
            left -= payload;
            let id = self.new_packet(self.now, class, sl, src, dst, dlid, payload);
            let p = &mut self.arena[id];
            p.flow = flow;
            p.psn = psn;
            p.flags |= FLAG_FLOW;
            psn = psn.wrapping_add(1);
            self.enqueue_generated(id);
        }
    }

    /// Closed-loop source `s` sends a message now (one window slot is free).
    pub(crate) fn on_message_next(&mut self, s: u32) {
        let (host, class, sl, dst, dlid, bytes) = {
            let cl = &mut self.traffic.closed_loop[s as usize];
            debug_assert!(cl.outstanding < cl.window, "a closed-loop source never exceeds its window");
            cl.outstanding += 1;
            cl.peak_outstanding = cl.peak_outstanding.max(cl.outstanding);
            cl.sent += 1;
            let class = &self.traffic.classes[cl.src.class as usize];
            let dst = class.pattern.dest(&mut cl.src);
            let dm = self.hcas.model[dst as usize];
            let dlid = match class.path_bits {
                PathBits::Base => dm.base_lid,
                PathBits::Random => dm.base_lid + cl.src.pick(dm.lid_count as u32) as u16,
            };
            (cl.src.host, cl.src.class, class.sl, dst, dlid, cl.message_bytes)
        };
        self.send_message(host, dst, dlid, sl, class, bytes, s);
    }

    /// Trace `t` sends its next message now: the HCA splits the payload into
    /// MTU-sized packets (the last one shorter), all generated now, and the
    /// trace's following message is scheduled.
    pub(crate) fn on_trace(&mut self, t: u32) {
        let (m, class, next) = {
            let tr = &mut self.traffic.traces[t as usize];
            let m = tr.messages[tr.next];
            tr.next += 1;
            (m, tr.class, tr.due())
        };
        if let Some(at) = next {
            self.schedule(at, Event::TraceNext { trace: t });
        }
        let dlid = self.hcas.model[m.dst as usize].base_lid;
        self.send_message(m.src, m.dst, dlid, m.sl, class, m.bytes, NONE);
    }

    /// Connection `c` generates its packet due now and schedules the next.
    pub(crate) fn on_connection(&mut self, c: u32) {
        let (conn, next) = {
            let k = &mut self.traffic.connections[c as usize];
            k.next += 1;
            (*k, k.due())
        };
        self.schedule(next, Event::ConnNext { conn: c });
        let dlid = self.hcas.model[conn.dst as usize].base_lid;
        let id = self.new_packet(self.now, self.traffic.conn_class, conn.sl, conn.src, conn.dst, dlid, conn.payload);
        {
            let p = &mut self.arena[id];
            p.flow = c;
            p.flags |= FLAG_CONN;
        }
        self.metrics.conns.on_generate(c, self.now >= self.metrics.warmup_ps);
        self.enqueue_generated(id);
    }

    /// A packet made by `inject` reaches its generation time.
    pub(crate) fn on_inject(&mut self, id: PacketId) {
        self.traffic.injections_pending -= 1;
        self.open_single_packet_message(id);
        self.enqueue_generated(id);
    }

    /// A packet of `class` on `sl` with `payload` bytes from `host` to `dst`,
    /// generated at `at`, in the arena but in no queue yet.
    #[allow(clippy::too_many_arguments)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    pub(crate) fn new_packet(&mut self, at: Time, class: u8, sl: u8, host: u32, dst: u32, dlid: u16, payload: u32) -> PacketId {
        let hm = self.hcas.model[host as usize];
        let (sl, vl15) = self.packet_sl(class, sl, host, dlid);
        let slot = if vl15 { self.layout.vl15_slot } else { self.ports.sl2vl.vl(hm.node, 0, self.ports.model(hm.gp).port, sl) };
        let flags = if vl15 { FLAG_VL15 } else { 0 };
        let wire = wire_bytes(payload, self.p.header_bytes);
        self.arena.alloc(Packet {
            gen_time: at,
            inject_time: Time::MAX,
            tail_at: at,
            ready_at: at,
            next: NIL,
            src: host,
            dst,
            flow: u32::MAX,
            psn: 0,
            dlid,
            wire_bytes: wire as u16,
            blocks: blocks_for(wire),
            sl,
            slot,
            class,
            flags,
            pinned: 0,
            remembered: false,
        })
    }

    /// The SL a packet of `class` (whose SL is `sl`) from `host` to `dlid`
    /// travels on, and whether it is a VL15 packet.
    fn packet_sl(&self, class: u8, sl: u8, host: u32, dlid: u16) -> (u8, bool) {
        let vl15 = self.traffic.classes[class as usize].vl15;
        // The routing engine's SL for this path, where it chose one (as an
        // application takes the SL of the PathRecord the SA answers); replies
        // keep `transport.reply_sl`.
        let reply = class == self.hcas.transport.reply_class;
        let sl = match self.hcas.path_sl.is_none() || vl15 || reply || is_multicast(dlid) {
            true => sl,
            false => self.hcas.path_sl.get(self.hcas.model[host as usize].base_lid, dlid).unwrap_or(sl),
        };
        (sl, vl15)
    }

    /// Counts a packet as generated now and as waiting in `host`'s send queues.
    fn count_generated(&mut self, host: u32, class: u8, sl: u8, wire: u32) {
        self.metrics.on_generate(self.now, class, sl, wire);
        let hs = &mut self.hcas.state[host as usize];
        hs.queued += 1;
        hs.peak = hs.peak.max(hs.queued);
    }

    /// Counts packet `id` as generated now and puts it in its host's SL queue.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    fn enqueue_generated(&mut self, id: PacketId) {
        let p = self.arena[id];
        self.count_generated(p.src, p.class, p.sl, p.wire_bytes as u32);
        // Behind other packets of its SL it cannot move before them, and the
        // other SLs have not changed: only a packet at the head may move now.
        if self.push_send_queue(id) && self.hca_fill(p.src) > 0 {
            self.try_transmit(self.hcas.model[p.src as usize].gp);
        }
    }

    /// Appends counted packet `id` to its host's SL (or management) send
    /// queue; returns whether that queue was empty.
    fn push_send_queue(&mut self, id: PacketId) -> bool {
        let p = self.arena[id];
        self.resolve_lazy_free(p.src);
        let q = if p.flags & FLAG_VL15 != 0 { MGMT_QUEUE } else { p.sl as usize };
        let hs = &mut self.hcas.state[p.src as usize];
        let was_empty = hs.slq[q].is_empty();
        hs.slq[q].push(&mut self.arena, id);
        hs.sl_mask |= 1 << q;
        was_empty
    }

    /// Moves packets from host `h`'s SL queues into its send VL buffers, SLs in
    /// priority order, each SL in FIFO order while its head fits; returns how
    /// many moved.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.ibnetsim")]
    pub(crate) fn hca_fill(&mut self, h: u32) -> u32 {
        if self.hcas.state[h as usize].sl_mask == 0 {
            return 0;
        }
        let mut moved = 0;
        let gp = self.hcas.model[h as usize].gp;
        let now = self.now;
        for k in 0..17 {
            let sl = if k == 0 { MGMT_QUEUE as u8 } else { self.p.sl_order[k - 1] };
            if self.hcas.state[h as usize].sl_mask & (1 << sl) == 0 {
                continue;
            }
            loop {
                let hs = &mut self.hcas.state[h as usize];
                let head = hs.slq[sl as usize].head;
                if head == NIL {
                    hs.sl_mask &= !(1 << sl);
                    break;
                }
                let (slot, blocks, class) = {
                    let p = &self.arena[head];
                    (p.slot, p.blocks as u32, p.class)
                };
                if !self.ports.out(gp, slot).fits(blocks) {
                    break;
                }
                hs.slq[sl as usize].pop(&mut self.arena);
                hs.queued -= 1;
                let start = self.mech.on_inject(h, now);
                {
                    let p = &mut self.arena[head];
                    p.ready_at = start;
                    p.tail_at = now;
                }
                let o = self.ports.out_mut(gp, slot);
                o.used += blocks;
                o.queue.push(&mut self.arena, head);
                self.ports.tx_mut(gp).outq_mask |= 1 << slot;
                self.in_network += 1;
                self.last_progress = now;
                moved += 1;
                if let Some(s) = self.hcas.source_queues.on_dequeue(class, h) {
                    // Its place in the bounded queue goes to its oldest deferred arrival.
                    self.make_deferred(s);
                }
            }
            if self.hcas.state[h as usize].sl_mask == 0 {
                break;
            }
        }
        moved
    }

    /// The sink of CA port `gp` has consumed `id`'s last byte.
    pub(crate) fn on_deliver(&mut self, gp: u32, q: u8, id: PacketId) {
        let now = self.now;
        let popped = self.ports.inq_mut(gp, q).pop(&mut self.arena);
        debug_assert_eq!(popped, Some(id), "sink consumes in arrival order");
        let p = self.arena[id];
        let host = self.ports.model(gp).host();
        if p.flags & FLAG_VL15 == 0 {
            self.advertise_credits(gp, q, p.blocks, crate::credits::next_update(now, self.p.hca_credit_period_ps));
        }
        self.last_progress = now;
        let for_me = if is_multicast(p.dlid) {
            self.switches.mcast.members(p.dlid).is_some_and(|m| m.contains(&host)) && p.src != host
        } else {
            self.hcas.lid_host[p.dlid as usize] == host
        };
        if !for_me {
            self.drop_packet(id, DropReason::Misrouted);
            return;
        }
        self.metrics.on_deliver(now, &p);
        self.hcas.state[host as usize].delivered += 1;
        self.in_network -= 1;
        self.arena.free(id);
        self.transport_on_deliver(&p, host);
    }

    /// The transport's part of a delivery (the delivery hook): the
    /// destination's flow state, a reply, a completed message.
    #[inline]
    fn transport_on_deliver(&mut self, p: &Packet, me: u32) {
        if p.flags & (FLAG_FLOW | FLAG_FECN) == 0 && p.kind() == PacketKind::Data {
            return;
        }
        match p.kind() {
            PacketKind::Data => {
                if p.flags & FLAG_FECN != 0 {
                    // The destination's half of congestion control: a BECN back
                    // (from this host: a multicast copy names no destination).
                    let of_flow = p.flags & FLAG_FLOW != 0;
                    self.send_reply(me, p.src, Reply { kind: PacketKind::Cn, flow: p.flow, psn: p.psn }, of_flow);
                }
                if p.flags & FLAG_FLOW == 0 {
                    return;
                }
                let out = self.hcas.transport.on_data_delivered(p);
                if let Some(a) = out.arrival {
                    self.metrics.on_message_arrival(self.now, a.class, a.gen_time, a.first_inject);
                }
                if let Some(r) = out.reply {
                    self.send_reply(me, p.src, r, true);
                }
                if let Some(c) = out.completion {
                    self.complete_message(c);
                }
            }
            PacketKind::Ack => {
                if let Some(c) = self.hcas.transport.on_ack_delivered(p) {
                    self.complete_message(c);
                }
            }
            PacketKind::Cn => self.hcas.transport.congestion_notifications += 1,
            PacketKind::Nack => {}
        }
    }

    /// A dropped packet of a flow loses its message (there is no
    /// retransmission); a closed-loop source then sends its next one.
    #[inline]
    pub(crate) fn transport_on_drop(&mut self, p: &Packet) {
        if p.flags & FLAG_FLOW == 0 || !matches!(p.kind(), PacketKind::Data | PacketKind::Ack) {
            return;
        }
        if let Some(c) = self.hcas.transport.on_lost(p) {
            self.end_message(c);
        }
    }

    /// Host `from` sends reply `r` to host `to` now, on the transport's reply
    /// SL; the reply belongs to the flow it answers, if that had one.
    fn send_reply(&mut self, from: u32, to: u32, r: Reply, of_flow: bool) {
        let t = &self.hcas.transport;
        let (class, sl, payload) = (t.reply_class, t.reply_sl, t.reply_payload);
        let dlid = self.hcas.model[to as usize].base_lid;
        let id = self.new_packet(self.now, class, sl, from, to, dlid, payload);
        let p = &mut self.arena[id];
        p.set_kind(r.kind);
        if of_flow {
            p.flow = r.flow;
            p.psn = r.psn;
            p.flags |= FLAG_FLOW;
        }
        self.enqueue_generated(id);
    }

    /// A message has completed: it is measured, and its closed-loop source
    /// sends the next one after its gap.
    fn complete_message(&mut self, c: Completion) {
        self.metrics.on_message_complete(self.now, c.class, c.gen_time);
        self.end_message(c);
    }

    /// A message is over (completed or lost): its closed-loop source sends
    /// the next one after its gap.
    fn end_message(&mut self, c: Completion) {
        let now = self.now;
        if c.source != NONE {
            let cl = &mut self.traffic.closed_loop[c.source as usize];
            cl.outstanding -= 1;
            let at = now + cl.gap.draw(cl.gap_ps, &mut cl.src.rng);
            self.schedule(at, Event::MessageNext { source: c.source });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HostState;
    use crate::packet::PacketQueue;

    #[test]
    fn a_hosts_counters_and_first_two_send_queues_share_its_first_cache_line() {
        let end_of_sl1 = std::mem::offset_of!(HostState, slq) + 2 * std::mem::size_of::<PacketQueue>();
        assert!(end_of_sl1 <= 64, "SL 1's queue ends at byte {end_of_sl1}");
        assert!(std::mem::offset_of!(HostState, free_seq) < 64);
        assert_eq!(std::mem::align_of::<HostState>(), 64);
    }
}
