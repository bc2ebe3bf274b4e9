//! The FIFO input buffer: only the head of a (port, VL) buffer is offered to
//! the crossbar; a head that cannot go waits as a waiter of its output ports
//! and holds back every packet behind it.

use crate::selection::{Candidates, Deterministic};
use crate::sim::Simulation;
use crate::switch::crossbar::{first_acceptable, BufferedView};
use crate::switch::multicast::is_multicast;
use crate::switch::SwitchModel;

impl Simulation {
    /// Offers the head of input queue `idx` of switch `swi` to the crossbar
    /// (output buffers), and while its crossbar input may send more, the new
    /// head; true if one was granted. `DETERMINISTIC`: the selection policy
    /// is, so it needs no dispatch.
    #[inline(always)]
    pub(in crate::switch) fn serve_fifo<const DETERMINISTIC: bool>(&mut self, swi: u32, sm: &SwitchModel, idx: usize, cands: &mut Candidates) -> bool {
        let mut granted = false;
        while self.serve_fifo_head::<DETERMINISTIC>(swi, sm, idx, cands) {
            granted = true;
            if self.p.max_transfers == 1 {
                // The input is busy now; its `XbarDone` re-arbitrates.
                break;
            }
        }
        granted
    }

    /// Offers the head of input queue `idx` to the crossbar; true if granted.
    #[inline(always)]
    fn serve_fifo_head<const DETERMINISTIC: bool>(&mut self, swi: u32, sm: &SwitchModel, idx: usize, cands: &mut Candidates) -> bool {
        let (gp, q) = self.layout.split_local(sm.port_base, idx);
        // Not routed yet (a `Routed` event will come), crossbar input
        // busy (an `XbarDone` will come), or empty: nothing to do now.
        let Some(id) = self.eligible_head(swi, gp, q, cands) else { return false };
        // Only the fields the choice needs: copying the packet costs on this path.
        let (blocks, dlid, flags) = (self.arena[id].blocks, self.arena[id].dlid, self.arena[id].flags);
        let sel = {
            let view = BufferedView::new(&self.ports, self.layout, self.p.xbar_slot_mask, sm.port_base, blocks, flags);
            if is_multicast(dlid) {
                first_acceptable(cands, &view)
            } else if DETERMINISTIC {
                Deterministic.select(cands, &view)
            } else {
                self.mech.selection.select(cands, &view)
            }
        };
        match sel {
            Some(k) => {
                let c = cands.as_slice()[k];
                self.grant_buffered(swi, gp, q, id, c);
                true
            }
            None => {
                self.remember_route(gp, q, id, cands);
                self.arm_head_deadline(swi, id);
                for c in cands.as_slice() {
                    self.park(swi, idx, c.port);
                }
                false
            }
        }
    }
}
