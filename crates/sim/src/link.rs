//! Link timing: serialization at the data rate after encoding, then propagation.
//!
//! A link sends `wire_bytes` = payload + LRH (8) + BTH (12) + ICRC (4) + VCRC (2)
//! plus any extra transport headers (SPEC "Units and definitions"; paper 000
//! Table 1 counts the same 26 B). The first byte that leaves at `t` reaches the
//! far end at `t + propagation`, the last at `t + propagation + ser(wire_bytes)`.
//! A receiver can start routing once the LRH and BTH ([`CUT_THROUGH_HEADER_BYTES`])
//! are in. Serialization times are exactly those of
//! [`LinkSpec::serialization_ps`], computed here with one multiply and one divide.

use ibnetsim_fabric::LinkSpec;

use crate::engine::Time;

/// Local route header bytes.
pub const LRH_BYTES: u32 = 8;
/// Base transport header bytes.
pub const BTH_BYTES: u32 = 12;
/// Invariant CRC bytes.
pub const ICRC_BYTES: u32 = 4;
/// Variant CRC bytes.
pub const VCRC_BYTES: u32 = 2;
/// Header and CRC bytes every data packet carries: 26.
pub const BASE_OVERHEAD_BYTES: u32 = LRH_BYTES + BTH_BYTES + ICRC_BYTES + VCRC_BYTES;
/// Bytes that must have arrived before a switch can look up the DLID and start
/// routing (virtual cut-through): LRH + BTH.
pub const CUT_THROUGH_HEADER_BYTES: u32 = LRH_BYTES + BTH_BYTES;

/// Largest payload IBA allows on VL15 (management datagrams are 256 B).
pub const VL15_MAX_PAYLOAD: u32 = 256;

/// Bytes a packet with `payload` bytes and `header_bytes` of headers and
/// CRCs (26 in IBA, see [`crate::SimConfig::header_bytes`]) occupies on the wire.
#[inline]
pub fn wire_bytes(payload: u32, header_bytes: u32) -> u32 {
    payload + header_bytes
}

/// Precomputed timing of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkTiming {
    /// `8 · den · 10⁹` of the encoding ratio `num/den`.
    ps_numer: u64,
    /// `kbaud · lanes · num`.
    ps_denom: u64,
    /// Cable propagation delay.
    pub propagation_ps: Time,
    /// `ps_numer / ps_denom` when that is a whole number of picoseconds per
    /// byte (every 8b/10b rate), else 0: a multiply instead of a division.
    ps_per_byte: u64,
}

impl LinkTiming {
    /// Timing of a link with `spec`.
    pub fn new(spec: &LinkSpec) -> Self {
        let (num, den) = spec.speed.encoding().ratio();
        let ps_numer = 8 * den * 1_000_000_000;
        let ps_denom = spec.speed.kbaud() * spec.width.lanes() as u64 * num;
        let ps_per_byte = if ps_numer % ps_denom == 0 { ps_numer / ps_denom } else { 0 };
        LinkTiming { ps_numer, ps_denom, propagation_ps: spec.propagation_ps(), ps_per_byte }
    }

    /// Time to serialize `bytes`, rounded up to whole picoseconds.
    #[inline]
    pub fn ser_ps(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            return bytes as u64 * self.ps_per_byte;
        }
        (bytes as u64 * self.ps_numer).div_ceil(self.ps_denom)
    }

    /// Data rate in bytes per picosecond.
    pub fn bytes_per_ps(&self) -> f64 {
        self.ps_denom as f64 / self.ps_numer as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{LinkSpeed, LinkWidth};
    use proptest::prelude::*;

    #[test]
    fn sdr_1x_header_and_packet() {
        let t = LinkTiming::new(&LinkSpec::default());
        assert_eq!(t.ser_ps(CUT_THROUGH_HEADER_BYTES), 80_000);
        assert_eq!(t.ser_ps(wire_bytes(256, BASE_OVERHEAD_BYTES)), 282 * 4_000);
        assert_eq!(t.propagation_ps, 5_000);
        assert!((t.bytes_per_ps() - 0.25e-3).abs() < 1e-15);
    }

    proptest! {
        #[test]
        fn matches_linkspec_exactly(bytes in 0u32..70_000, w in 0usize..5, s in 0usize..8) {
            let widths = [LinkWidth::X1, LinkWidth::X2, LinkWidth::X4, LinkWidth::X8, LinkWidth::X12];
            let spec = LinkSpec::new(widths[w], LinkSpeed::ALL[s]);
            prop_assert_eq!(LinkTiming::new(&spec).ser_ps(bytes), spec.serialization_ps(bytes as u64));
        }
    }
}
