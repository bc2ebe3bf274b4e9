//! The index layout of every per-(port, VL) array: one place for the
//! arithmetic that turns a global port and a VL slot into an array index.
//!
//! A *global port* (`gp`) numbers every `(node, port)` of the fabric, node by
//! node. A *slot* is a VL at a port: the data VLs `0..data_vls`, then VL15.
//! Per-(port, slot) arrays (buffers, credits, busy time) are indexed by
//! [`Layout::pv`]; per-switch bitsets number a switch's own (port, slot)
//! pairs from 0 ([`Layout::local`]).

/// Sizes that fix the index layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Data VLs per port.
    pub data_vls: u8,
    /// Slots per port: data VLs + VL15.
    pub nvl: usize,
    /// Slot of VL15.
    pub vl15_slot: u8,
}

impl Layout {
    /// The layout for `data_vls` data VLs (1..=15).
    pub fn new(data_vls: u8) -> Self {
        Layout { data_vls, nvl: data_vls as usize + 1, vl15_slot: data_vls }
    }

    /// Index of `(gp, slot)` in per-port-slot arrays.
    #[inline]
    pub fn pv(&self, gp: u32, slot: u8) -> usize {
        gp as usize * self.nvl + slot as usize
    }

    /// Index of slot 0 of port `gp`.
    #[inline]
    pub fn port_base(&self, gp: u32) -> usize {
        gp as usize * self.nvl
    }

    /// The port and slot of a per-port-slot index.
    #[inline]
    pub fn split(&self, pv: usize) -> (u32, u8) {
        ((pv / self.nvl) as u32, (pv % self.nvl) as u8)
    }

    /// Index of `(port, slot)` among the (port, slot) pairs of one switch,
    /// whose port 1 is global port `first_gp`.
    #[inline]
    pub fn local(&self, first_gp: u32, gp: u32, slot: u8) -> usize {
        (gp - first_gp) as usize * self.nvl + slot as usize
    }

    /// Per-port-slot entries for `ports` ports.
    #[inline]
    pub fn len(&self, ports: usize) -> usize {
        ports * self.nvl
    }

    /// The VL number of a slot.
    #[inline]
    pub fn vl_of_slot(&self, slot: u8) -> u8 {
        if slot == self.vl15_slot {
            15
        } else {
            slot
        }
    }

    /// Whether `slot` is VL15.
    #[inline]
    pub fn is_vl15(&self, slot: u8) -> bool {
        slot == self.vl15_slot
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn indices_round_trip() {
        let l = Layout::new(4);
        assert_eq!((l.nvl, l.vl15_slot), (5, 4));
        assert_eq!(l.pv(3, 2), 17);
        assert_eq!(l.split(17), (3, 2));
        assert_eq!(l.local(10, 12, 4), 14);
        assert_eq!((l.vl_of_slot(4), l.vl_of_slot(3)), (15, 3));
    }
}
