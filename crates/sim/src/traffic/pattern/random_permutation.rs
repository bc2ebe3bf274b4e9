//! Random permutation: every host sends to one partner and receives from one,
//! the partners drawn once per run from the seed (a derangement, uniform among
//! permutations without fixed points). It is the adversarial case for
//! oblivious routing that BookSim's `randperm` models.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::DestMap;

/// Registry name.
pub const NAME: &str = "random-permutation";

/// Stream of the seed reserved for drawing the permutation, apart from every
/// source's `(class << 32) | host` stream.
const STREAM: u64 = u64::MAX;

/// The permutation over `hosts` hosts drawn from `seed`.
pub fn map(hosts: u32, seed: u64) -> Result<DestMap, String> {
    if hosts < 2 {
        return Err(format!("a permutation without fixed points needs at least 2 hosts, the fabric has {hosts}"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM);
    let mut perm: Vec<u32> = (0..hosts).collect();
    // Rejection keeps the draw uniform over derangements; about e ≈ 2.7
    // shuffles are needed on average, whatever the number of hosts.
    loop {
        perm.shuffle(&mut rng);
        if perm.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return Ok(DestMap::from_vec(perm));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_derangement_fixed_by_the_seed() {
        for n in [2u32, 3, 17, 256] {
            let m = map(n, 11).unwrap();
            let mut hit = vec![false; n as usize];
            for s in 0..n {
                let d = m.get(s).unwrap();
                assert_ne!(d, s);
                assert!(!hit[d as usize]);
                hit[d as usize] = true;
            }
        }
        assert_eq!(map(64, 5).unwrap(), map(64, 5).unwrap());
        assert_ne!(map(64, 5).unwrap(), map(64, 6).unwrap());
        assert_eq!(map(2, 1).unwrap().get(0), Some(1));
        assert!(map(1, 1).is_err());
    }
}
