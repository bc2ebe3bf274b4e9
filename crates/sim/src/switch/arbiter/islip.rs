//! iSLIP crossbar arbitration (McKeown, "The iSLIP scheduling algorithm for
//! input-queued switches", IEEE/ACM ToN 1999; BookSim's `islip` allocator).
//!
//! The pending input queues first say which crossbar output each wants (their
//! head's choice among its routing options); then rounds of
//! request–grant–accept match crossbar inputs to outputs:
//!
//! * **grant**: each unmatched output grants the requesting unmatched input
//!   that comes first at or after its grant pointer;
//! * **accept**: each input accepts, among the grants it received, the output
//!   first at or after its accept pointer (as many as it may still start
//!   transfers: `switch.max_transfers_per_input`);
//! * the pointers move one past the partner, and only for matches of the
//!   first round (that keeps outputs from serving one input twice in a row
//!   and desynchronises them).
//!
//! Rounds repeat until one adds no match, so the result is a maximal match:
//! no request is left whose input and output are both still free.
//! The matched heads then cross as under any arbiter; the others wait as
//! waiters of the outputs they asked for. Needs output buffers and FIFO input
//! buffers (a head is one request).

use crate::config::CrossbarKind;
use crate::selection::Candidates;
use crate::sim::{Simulation, NONE};
use crate::switch::crossbar::{first_acceptable, BufferedView};
use crate::switch::multicast::is_multicast;
use crate::switch::SwitchModel;

/// The pointers of every switch and the scratch of one arbitration.
#[derive(Debug, Clone, Default)]
pub struct IslipState {
    /// Per switch: the grant pointer of each crossbar output and the accept
    /// pointer of each crossbar input (local indices: port − 1, or
    /// (port − 1) · slots + slot with a per-VL crossbar).
    ptrs: Vec<(Vec<u32>, Vec<u32>)>,
    matcher: Matcher,
    requests: Vec<Request>,
    /// Per request: its input queue (local bit) and its option.
    meta: Vec<(u32, crate::selection::Candidate)>,
    room: Vec<u32>,
    matched: Vec<bool>,
}

impl IslipState {
    /// Pointers at 0 for switches with the given numbers of crossbar ports.
    pub fn new(crossbar_ports: impl Iterator<Item = usize>) -> Self {
        IslipState { ptrs: crossbar_ports.map(|n| (vec![0; n], vec![0; n])).collect(), ..Default::default() }
    }
}

impl Simulation {
    /// One iSLIP arbitration of switch `swi` over its pending input queues
    /// (only VL15 queues if `vl15_only`).
    pub(in crate::switch) fn islip_pass(&mut self, swi: u32, sm: &SwitchModel, vl15_only: bool, cands: &mut Candidates) {
        let mux = self.p.crossbar == CrossbarKind::Multiplexed;
        let nvl = self.layout.nvl as u32;
        let local = |gp: u32, slot: u8| if mux { gp - sm.port_base } else { (gp - sm.port_base) * nvl + slot as u32 };
        let mut st = std::mem::take(&mut self.switches.islip);
        st.requests.clear();
        st.meta.clear();
        let n_x = if mux { sm.num_ports } else { sm.num_ports * nvl } as usize;
        st.room.clear();
        st.room.resize(n_x, 0);
        // Requests: each pending head's choice among the options that can take it now.
        let nbits = sm.num_ports as usize * self.layout.qpp;
        let mut cur = 0;
        while let Some(idx) = self.next_pending(swi, cur, nbits) {
            cur = idx + 1;
            let (gp, q) = self.layout.split_local(sm.port_base, idx);
            if vl15_only && self.layout.slot_of_q(q) != self.layout.vl15_slot {
                continue;
            }
            let Some(id) = self.eligible_head(swi, gp, q, cands) else {
                self.clear_pending(swi, idx);
                continue;
            };
            let (blocks, dlid, flags) = (self.arena[id].blocks, self.arena[id].dlid, self.arena[id].flags);
            let sel = {
                let view = BufferedView::new(&self.ports, self.layout, self.p.xbar_slot_mask, sm.port_base, blocks, flags);
                if is_multicast(dlid) { first_acceptable(cands, &view) } else { self.mech.selection.select(cands, &view) }
            };
            // A head with no option free now is parked by the greedy pass below.
            let Some(k) = sel else { continue };
            let c = cands.as_slice()[k];
            let slot = self.layout.slot_of_q(q);
            let input = local(gp, slot);
            st.room[input as usize] = self.ports.xin(gp, self.xslot(slot)).free() as u32;
            st.requests.push(Request { input, output: local(sm.gp(c.port), c.slot) });
            st.meta.push((idx as u32, c));
        }
        let (grant_ptr, accept_ptr) = &mut st.ptrs[swi as usize];
        st.matcher.run(&st.requests, &st.room, grant_ptr, accept_ptr, &mut st.matched);
        for k in 0..st.requests.len() {
            if !st.matched[k] {
                continue;
            }
            let (idx, c) = st.meta[k];
            let (gp, q) = self.layout.split_local(sm.port_base, idx as usize);
            let id = self.ports.inq_at(self.layout.pq(gp, q)).head;
            // Left pending: the greedy pass below offers the next head
            // wherever the input may start more than one transfer.
            self.grant_buffered(swi, gp, q, id, c);
        }
        self.switches.islip = st;
        // The heads left (unmatched, or with no option free) take what is
        // still free one after another, and wait as waiters of their options
        // otherwise: with one option each that is what the maximal match left
        // them; an adaptive head may still find another option free.
        self.round_robin_pass::<false>(swi, sm, vl15_only, cands);
    }
}

/// One request: crossbar input `input` (an index below the matcher's input
/// count) wants crossbar output `output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Crossbar input.
    pub input: u32,
    /// Crossbar output.
    pub output: u32,
}

/// Scratch state of the matcher, kept between calls so that matching does not
/// allocate.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    /// Per output: the input it grants in the current round and the index of
    /// that request (`NONE`: none).
    granted: Vec<(u32, u32)>,
    /// Per output: matched already.
    out_matched: Vec<bool>,
    /// Per input: transfers it may still accept.
    room: Vec<u32>,
    /// Per input, in one accept pass: the grant it prefers (output, distance
    /// from its accept pointer).
    best: Vec<(u32, u32)>,
}

impl Matcher {
    /// Matches `requests` between `n_in` inputs and `n_out` outputs: input
    /// `i` may accept up to `room[i]` outputs. `grant_ptr` (per output) and
    /// `accept_ptr` (per input) are the iSLIP pointers, moved by the first
    /// round's matches. Sets `matched[k]` for each request that won.
    pub fn run(&mut self, requests: &[Request], room: &[u32], grant_ptr: &mut [u32], accept_ptr: &mut [u32], matched: &mut Vec<bool>) {
        let (n_in, n_out) = (room.len() as u32, grant_ptr.len() as u32);
        debug_assert_eq!(accept_ptr.len() as u32, n_in);
        self.out_matched.clear();
        self.out_matched.resize(n_out as usize, false);
        self.room.clear();
        self.room.extend_from_slice(room);
        matched.clear();
        matched.resize(requests.len(), false);
        let mut first_round = true;
        loop {
            // Grant: per free output, the requesting input with room closest
            // at or after its pointer (the first such request if it asked twice).
            self.granted.clear();
            self.granted.resize(n_out as usize, (NONE, NONE));
            for (k, r) in requests.iter().enumerate() {
                let (i, o) = (r.input, r.output);
                if self.out_matched[o as usize] || self.room[i as usize] == 0 {
                    continue;
                }
                let g = &mut self.granted[o as usize];
                let ptr = grant_ptr[o as usize];
                if g.0 == NONE || (i + n_in - ptr) % n_in < (g.0 + n_in - ptr) % n_in {
                    *g = (i, k as u32);
                }
            }
            // Accept: each input takes its grants in the order of its pointer
            // while it has room, one per pass (the pointer a first-round
            // match moves orders the next pass). Outputs grant one input
            // each, so inputs do not compete here.
            let mut added = false;
            loop {
                self.best.clear();
                self.best.resize(n_in as usize, (NONE, u32::MAX));
                for (o, &(i, _)) in self.granted.iter().enumerate() {
                    if i == NONE || self.out_matched[o] || self.room[i as usize] == 0 {
                        continue;
                    }
                    let d = (o as u32 + n_out - accept_ptr[i as usize]) % n_out;
                    if d < self.best[i as usize].1 {
                        self.best[i as usize] = (o as u32, d);
                    }
                }
                let mut any = false;
                for i in 0..n_in {
                    let o = self.best[i as usize].0;
                    if o == NONE {
                        continue;
                    }
                    self.out_matched[o as usize] = true;
                    self.room[i as usize] -= 1;
                    matched[self.granted[o as usize].1 as usize] = true;
                    any = true;
                    if first_round {
                        grant_ptr[o as usize] = (i + 1) % n_in;
                        accept_ptr[i as usize] = (o + 1) % n_out;
                    }
                }
                if !any {
                    break;
                }
                added = true;
            }
            if !added {
                return;
            }
            first_round = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reqs(pairs: &[(u32, u32)]) -> Vec<Request> {
        pairs.iter().map(|&(input, output)| Request { input, output }).collect()
    }

    fn matches(requests: &[Request], matched: &[bool]) -> Vec<(u32, u32)> {
        requests.iter().zip(matched).filter(|(_, &m)| m).map(|(r, _)| (r.input, r.output)).collect()
    }

    #[test]
    fn a_hand_made_request_matrix() {
        // Inputs 0..4, outputs 0..4; all pointers at 0.
        //   input 0 wants outputs 0, 1;  input 1 wants 0;  input 2 wants 0, 2;  input 3 wants 2, 3.
        // Round 1, grant: output 0 → input 0 (first at/after 0 of {0, 1, 2}),
        //   output 1 → 0, output 2 → 2 (of {2, 3}), output 3 → 3.
        // Accept: input 0 has grants from 0 and 1, takes 0 (pointer 0);
        //   input 2 takes 2; input 3 takes 3. Output 1's grant to 0 is void.
        // Round 2: output 1 is free, but its only requester (0) is matched: done.
        // Input 1 stays unmatched: its one output is taken, so the match is maximal.
        let r = reqs(&[(0, 0), (0, 1), (1, 0), (2, 0), (2, 2), (3, 2), (3, 3)]);
        let (mut g, mut a) = (vec![0; 4], vec![0; 4]);
        let mut m = Vec::new();
        Matcher::default().run(&r, &[1; 4], &mut g, &mut a, &mut m);
        assert_eq!(matches(&r, &m), vec![(0, 0), (2, 2), (3, 3)]);
        // First-round matches move the pointers one past the partner.
        assert_eq!((g, a), (vec![1, 0, 3, 0], vec![1, 0, 3, 0]));
    }

    #[test]
    fn the_pointers_take_turns_on_a_contended_output() {
        // Inputs 0, 1, 2 all want output 0 every time: it serves them in turn.
        let r = reqs(&[(0, 0), (1, 0), (2, 0)]);
        let (mut g, mut a) = (vec![0; 1], vec![0; 3]);
        let mut m = Vec::new();
        let mut order = Vec::new();
        let mut matcher = Matcher::default();
        for _ in 0..6 {
            matcher.run(&r, &[1; 3], &mut g, &mut a, &mut m);
            order.push(matches(&r, &m)[0].0);
        }
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn a_later_round_fills_what_the_first_left() {
        // Outputs 0 and 1 both grant input 0 first (pointers at 0); it accepts 0.
        // Round 2: output 1 grants input 1, which accepts; pointers stay as round 1 left them.
        let r = reqs(&[(0, 0), (0, 1), (1, 1)]);
        let (mut g, mut a) = (vec![0; 2], vec![0; 2]);
        let mut m = Vec::new();
        Matcher::default().run(&r, &[1; 2], &mut g, &mut a, &mut m);
        assert_eq!(matches(&r, &m), vec![(0, 0), (1, 1)]);
        assert_eq!((g, a), (vec![1, 0], vec![1, 0]));
    }

    #[test]
    fn an_input_asking_an_output_twice_is_granted_its_first_request() {
        // Two VL queues of one port (a multiplexed crossbar input) want the
        // same output: the grant goes to the first request, as documented.
        let r = reqs(&[(1, 0), (0, 0), (1, 0)]);
        let (mut g, mut a) = (vec![1; 1], vec![0; 2]);
        let mut m = Vec::new();
        Matcher::default().run(&r, &[1; 2], &mut g, &mut a, &mut m);
        assert_eq!(m, vec![true, false, false]);
        assert_eq!((g, a), (vec![0], vec![0, 0]));
    }

    #[test]
    fn an_input_accepts_the_grant_first_at_or_after_its_accept_pointer() {
        // One input, outputs 0..5, accept pointer 3; outputs 1, 2 and 4 grant
        // it (it is their only requester). In the order 3, 4, 0, 1, 2 output 4
        // comes first: it is accepted, and the pointers move one past the
        // partners (output 4's grant pointer to input 0 again, since there is
        // one input; the accept pointer wraps to output 0).
        let r = reqs(&[(0, 1), (0, 2), (0, 4)]);
        let (mut g, mut a) = (vec![0; 5], vec![3; 1]);
        let mut m = Vec::new();
        Matcher::default().run(&r, &[1], &mut g, &mut a, &mut m);
        assert_eq!(matches(&r, &m), vec![(0, 4)]);
        assert_eq!(a, vec![0]);
    }

    #[test]
    fn an_input_with_room_for_two_takes_two_outputs() {
        let r = reqs(&[(0, 0), (0, 1), (1, 1)]);
        let (mut g, mut a) = (vec![0; 2], vec![0; 2]);
        let mut m = Vec::new();
        Matcher::default().run(&r, &[2, 1], &mut g, &mut a, &mut m);
        assert_eq!(matches(&r, &m), vec![(0, 0), (0, 1)]);
    }

    proptest! {
        #[test]
        fn every_result_is_a_maximal_match(
            n_in in 1u32..7, n_out in 1u32..7,
            pairs in proptest::collection::btree_set((0u32..7, 0u32..7), 0..30),
            gp in proptest::collection::vec(0u32..7, 7), ap in proptest::collection::vec(0u32..7, 7),
            room in proptest::collection::vec(1u32..3, 7),
        ) {
            let r: Vec<Request> = pairs.iter().filter(|&&(i, o)| i < n_in && o < n_out).map(|&(input, output)| Request { input, output }).collect();
            let mut g: Vec<u32> = gp[..n_out as usize].iter().map(|p| p % n_in).collect();
            let mut a: Vec<u32> = ap[..n_in as usize].iter().map(|p| p % n_out).collect();
            let room = &room[..n_in as usize];
            let mut m = Vec::new();
            Matcher::default().run(&r, room, &mut g, &mut a, &mut m);
            let won = matches(&r, &m);
            let mut used_in = vec![0u32; n_in as usize];
            let mut used_out = vec![false; n_out as usize];
            for &(i, o) in &won {
                prop_assert!(!used_out[o as usize], "output {} matched twice", o);
                used_out[o as usize] = true;
                used_in[i as usize] += 1;
            }
            for i in 0..n_in as usize {
                prop_assert!(used_in[i] <= room[i]);
            }
            for x in &r {
                prop_assert!(used_out[x.output as usize] || used_in[x.input as usize] == room[x.input as usize],
                    "request {:?} could still be matched", x);
            }
        }
    }
}
