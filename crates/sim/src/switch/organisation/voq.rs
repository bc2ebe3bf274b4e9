//! Virtual output queues: inside each input (port, VL) buffer, one queue per
//! output port. They share the buffer's space, so its credits (a packet's
//! credits return when it leaves, whichever queue it was in); what changes is
//! who may cross. The buffer is walked in arrival order and every routed
//! packet is offered the crossbar unless an earlier packet of the buffer
//! waits for one of its output ports: per output, packets keep their order,
//! and a packet waiting for a busy output no longer holds back packets for
//! other outputs (no head-of-line blocking).
//!
//! A packet with several routing options waits behind an earlier packet that
//! wants any one of them (it could otherwise overtake it on that output). A
//! multicast packet is neither passed nor passes: the walk stops at it, and a
//! multicast head is served as a FIFO head. A mechanism that acts on a
//! waiting head (the switch lifetime) acts on every packet the walk reaches,
//! since each may be the next to cross. Every packet gets its own
//! `Routed` event (see [`Simulation::push_input`]), as it may cross before
//! it reaches the head.

use ibnetsim_sm::PortSet;

use crate::packet::{PacketId, NIL};
use crate::selection::Candidates;
use crate::sim::Simulation;
use crate::switch::crossbar::BufferedView;
use crate::switch::multicast::is_multicast;
use crate::switch::SwitchModel;

impl Simulation {
    /// Offers the packets of input queue `idx` of switch `swi` to the
    /// crossbar (output buffers), as many as its crossbar input may send;
    /// true if one was granted.
    pub(in crate::switch) fn serve_voq(&mut self, swi: u32, sm: &SwitchModel, idx: usize, cands: &mut Candidates) -> bool {
        let (gp, q) = self.layout.split_local(sm.port_base, idx);
        let i = self.layout.pq(gp, q);
        let head = self.ports.inq(gp, q).head;
        if head != NIL && is_multicast(self.arena[head].dlid) {
            return self.serve_fifo::<false>(swi, sm, idx, cands);
        }
        let xslot = self.xslot(self.layout.slot_of_q(q));
        let in_port = self.switches.lines[swi as usize].model.port_of(gp);
        // Output ports an earlier packet of this buffer waits for.
        let mut waiting = PortSet::new();
        let mut granted = false;
        let (mut prev, mut id): (PacketId, PacketId) = (NIL, head);
        while id != NIL {
            let p = self.arena[id];
            // One link fills the buffer, so packets are routed in arrival
            // order: the rest are not routed yet either (their `Routed`
            // events will come).
            if p.ready_at > self.now || is_multicast(p.dlid) {
                break;
            }
            let next = p.next;
            if let Some(reason) = self.mech.at_input_head(&p, self.now) {
                self.ports.inq_mut(gp, q).move_to_front(&mut self.arena, prev, id);
                self.discard_head(swi, gp, q, id, reason);
                id = next;
                continue;
            }
            if self.ports.xin(gp, xslot).free() == 0 {
                // The crossbar input is full (its `XbarDone` will come): a
                // mechanism may act on the waiting packets first.
                self.arm_head_deadline(swi, id);
                (prev, id) = (id, next);
                continue;
            }
            cands.clear();
            if let Err(reason) = self.route(swi, in_port, i, id, &p, cands) {
                self.ports.inq_mut(gp, q).move_to_front(&mut self.arena, prev, id);
                self.discard_head(swi, gp, q, id, reason);
                id = next;
                continue;
            }
            if self.mech.selection.decides_at_routing() {
                self.pin_choice(swi, id, cands);
            }
            let behind = cands.as_slice().iter().any(|c| waiting.contains(c.port));
            let sel = if behind {
                None
            } else {
                let view = BufferedView::new(&self.ports, self.layout, self.p.xbar_slot_mask, sm.port_base, p.blocks, p.flags);
                self.mech.selection.select(cands, &view)
            };
            match sel {
                Some(k) => {
                    let c = cands.as_slice()[k];
                    // The grant takes the buffer's head: make the packet the head.
                    self.ports.inq_mut(gp, q).move_to_front(&mut self.arena, prev, id);
                    self.grant_buffered(swi, gp, q, id, c);
                    granted = true;
                }
                None => {
                    self.arm_head_deadline(swi, id);
                    for c in cands.as_slice() {
                        self.park(swi, idx, c.port);
                        waiting.insert(c.port);
                    }
                    prev = id;
                }
            }
            id = next;
        }
        granted
    }
}
