//! The bit permutations of Dally & Towles (Principles and Practices of
//! Interconnection Networks, §3.2), as BookSim defines them: a host index of
//! `b` bits is permuted bitwise. They need a power-of-two number of hosts.
//!
//! Hosts are numbered in fabric order (cabled CA ports, node by node), the
//! order `ibnetsim.simulate` reports them in.

use super::DestMap;

/// Address bits of `hosts`, which must be a power of two ≥ 2.
pub fn address_bits(hosts: u32, pattern: &str) -> Result<u32, String> {
    if hosts < 2 || !hosts.is_power_of_two() {
        return Err(format!(
            "pattern '{pattern}' permutes the bits of host indices, so it needs a power-of-two number of hosts; the fabric has {hosts}"
        ));
    }
    Ok(hosts.trailing_zeros())
}

/// `d_i = s_{b-1-i}`.
pub fn bit_reversal(s: u32, b: u32) -> u32 {
    s.reverse_bits() >> (32 - b)
}

/// `d_i = ¬s_i`.
pub fn bit_complement(s: u32, b: u32) -> u32 {
    !s & ((1 << b) - 1)
}

/// `d_i = s_{(i + b/2) mod b}`: the upper and lower halves of the index swap,
/// the matrix transpose when hosts are laid out as a square. `b` must be even.
pub fn transpose(s: u32, b: u32) -> u32 {
    let h = b / 2;
    let lo = s & ((1 << h) - 1);
    (lo << h) | (s >> h)
}

/// `d_i = s_{(i - 1) mod b}`: a left rotation by one bit.
pub fn perfect_shuffle(s: u32, b: u32) -> u32 {
    ((s << 1) | (s >> (b - 1))) & ((1 << b) - 1)
}

/// Which permutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitPermutation {
    /// See [`bit_reversal`].
    Reversal,
    /// See [`bit_complement`].
    Complement,
    /// See [`transpose`].
    Transpose,
    /// See [`perfect_shuffle`].
    Shuffle,
}

impl BitPermutation {
    /// Registry name.
    pub fn name(self) -> &'static str {
        match self {
            BitPermutation::Reversal => "bit-reversal",
            BitPermutation::Complement => "bit-complement",
            BitPermutation::Transpose => "transpose",
            BitPermutation::Shuffle => "perfect-shuffle",
        }
    }

    /// The map over `hosts` hosts; hosts the permutation fixes stay silent.
    pub fn map(self, hosts: u32) -> Result<DestMap, String> {
        let b = address_bits(hosts, self.name())?;
        let f: fn(u32, u32) -> u32 = match self {
            BitPermutation::Reversal => bit_reversal,
            BitPermutation::Complement => bit_complement,
            BitPermutation::Transpose => {
                if b % 2 != 0 {
                    return Err(format!(
                        "pattern 'transpose' lays the hosts out as a square, so it needs 4^k hosts; the fabric has {hosts}"
                    ));
                }
                transpose
            }
            BitPermutation::Shuffle => perfect_shuffle,
        };
        Ok(DestMap::from_fn(hosts, |s| f(s, b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_examples_on_16_hosts() {
        // s = 0b0001 (1) and 0b0110 (6), b = 4, worked by hand.
        assert_eq!(bit_reversal(0b0001, 4), 0b1000);
        assert_eq!(bit_reversal(0b0110, 4), 0b0110);
        assert_eq!(bit_complement(0b0001, 4), 0b1110);
        assert_eq!(transpose(0b0001, 4), 0b0100);
        assert_eq!(transpose(0b1110, 4), 0b1011);
        assert_eq!(perfect_shuffle(0b1001, 4), 0b0011);
        assert_eq!(perfect_shuffle(0b0110, 4), 0b1100);
    }

    #[test]
    fn every_bit_pattern_is_a_permutation_and_fixed_points_are_silent() {
        for p in [BitPermutation::Reversal, BitPermutation::Complement, BitPermutation::Transpose, BitPermutation::Shuffle] {
            for b in [2u32, 4, 6] {
                let n = 1 << b;
                let m = p.map(n).unwrap();
                let mut hit = vec![false; n as usize];
                for s in 0..n {
                    match m.get(s) {
                        Some(d) => {
                            assert_ne!(d, s);
                            assert!(!hit[d as usize], "{} b={b}: {d} hit twice", p.name());
                            hit[d as usize] = true;
                        }
                        None => assert!(!hit[s as usize]),
                    }
                }
            }
        }
        // Bit reversal of 4-bit indices fixes the 4 palindromes 0000, 0110, 1001, 1111.
        let m = BitPermutation::Reversal.map(16).unwrap();
        assert_eq!((0..16).filter(|&s| !m.sends(s)).collect::<Vec<_>>(), vec![0, 6, 9, 15]);
        // Complement fixes nothing.
        assert!((0..16).all(|s| BitPermutation::Complement.map(16).unwrap().sends(s)));
    }

    #[test]
    fn host_counts_are_checked() {
        assert!(BitPermutation::Reversal.map(12).unwrap_err().contains("power-of-two"));
        assert!(BitPermutation::Transpose.map(8).unwrap_err().contains("4^k"));
        assert!(BitPermutation::Transpose.map(64).is_ok());
        assert!(BitPermutation::Shuffle.map(1).is_err());
    }
}
