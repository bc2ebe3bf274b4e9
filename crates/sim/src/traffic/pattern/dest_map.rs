//! A fixed destination per source, the runtime form of every deterministic
//! pattern (fixed pairs, the bit permutations, tornado, random permutation):
//! they differ only in how the map is built, so they share one lookup.

use crate::traffic::Source;

/// `dest[host]`, or [`DestMap::SILENT`] for a host that does not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestMap {
    dest: Vec<u32>,
}

impl DestMap {
    /// Marks a host that does not send.
    pub const SILENT: u32 = u32::MAX;

    /// The map `host → f(host)`; a host mapped onto itself stays silent,
    /// since a packet to its own port would never enter the fabric.
    pub fn from_fn(hosts: u32, f: impl Fn(u32) -> u32) -> Self {
        let dest = (0..hosts)
            .map(|h| {
                let d = f(h);
                if d == h {
                    Self::SILENT
                } else {
                    d
                }
            })
            .collect();
        DestMap { dest }
    }

    /// A map whose entries are already checked (`SILENT` or another host).
    pub(crate) fn from_vec(dest: Vec<u32>) -> Self {
        DestMap { dest }
    }

    /// Whether `host` sends.
    #[inline]
    pub fn sends(&self, host: u32) -> bool {
        self.dest.get(host as usize).is_some_and(|&d| d != Self::SILENT)
    }

    /// The destination of `src.host` (which must send).
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        self.dest[src.host as usize]
    }

    /// The destination of `host`, if it sends.
    pub fn get(&self, host: u32) -> Option<u32> {
        self.dest.get(host as usize).copied().filter(|&d| d != Self::SILENT)
    }
}
