//! Packet-by-packet round robin over the data VLs: the next ready slot after
//! the one served last. A simple, table-free baseline (what a switch without
//! QoS configuration effectively does).

use super::VlArbState;

/// Round-robin VL arbiter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundRobinVlArb;

impl RoundRobinVlArb {
    /// Registry name.
    pub const NAME: &'static str = "round-robin";

    /// Picks the first ready slot at or after `rr_next` and advances past it.
    #[inline]
    pub fn pick(&self, st: &mut VlArbState, ready: u16, data_slots: u8) -> Option<u8> {
        let n = data_slots.max(1);
        for i in 0..n {
            let s = (st.rr_next + i) % n;
            if ready & (1 << s) != 0 {
                st.rr_next = (s + 1) % n;
                return Some(s);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_over_ready_slots() {
        let mut st = VlArbState::default();
        let seq: Vec<u8> = (0..5).map(|_| RoundRobinVlArb.pick(&mut st, 0b1011, 4).unwrap()).collect();
        assert_eq!(seq, vec![0, 1, 3, 0, 1]);
        assert_eq!(RoundRobinVlArb.pick(&mut st, 0, 4), None);
    }
}
