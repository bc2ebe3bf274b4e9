//! Hot spot (Pfister & Norton's model, used by papers 002 and 003 for
//! non-uniform load): a fraction of every source's packets goes to a few hot
//! hosts, the rest uniformly to all other hosts.

use crate::traffic::Source;

/// Registry name.
pub const NAME: &str = "hot-spot";

/// Hot hosts and the share of packets they attract.
#[derive(Debug, Clone, PartialEq)]
pub struct HotSpot {
    hosts: u32,
    hot: Vec<u32>,
    /// Probability scaled to `u32::MAX + 1`, compared with one draw per packet.
    threshold: u64,
}

impl HotSpot {
    /// `fraction` of the packets go to one of `hot` (uniformly among them, never
    /// to the sender itself), the rest uniformly to every other host. An error
    /// names the field at fault (`""` for the pattern as a whole).
    pub fn new(hosts: u32, hot: Vec<u32>, fraction: f64) -> Result<Self, (&'static str, String)> {
        if hosts < 2 {
            return Err(("", format!("hot-spot traffic needs at least 2 hosts, the fabric has {hosts}")));
        }
        if hot.is_empty() {
            return Err(("hosts", "name at least one hot host".into()));
        }
        if !(0.0..=1.0).contains(&fraction) {
            return Err(("fraction", format!("must be in 0..=1, got {fraction}")));
        }
        let threshold = (fraction * (1u64 << 32) as f64).round() as u64;
        Ok(HotSpot { hosts, hot, threshold })
    }

    /// A destination other than `src.host`.
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        let roll = src.rng_u32() as u64;
        if roll < self.threshold {
            let own = self.hot.iter().position(|&h| h == src.host);
            match (own, self.hot.len()) {
                (None, n) => return self.hot[src.pick(n as u32) as usize],
                (Some(_), 1) => {}
                (Some(i), n) => {
                    let j = src.pick(n as u32 - 1) as usize;
                    return self.hot[if j >= i { j + 1 } else { j }];
                }
            }
        }
        super::uniform::other_than_self(src, self.hosts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{Process, ProcessKind};

    #[test]
    fn share_to_the_hot_host_is_fraction_plus_its_uniform_part() {
        // 9 hosts, hot host 0, fraction 0.3: a non-hot source reaches host 0
        // with 0.3 + 0.7/8 = 0.3875 and each other host with 0.7/8 = 0.0875.
        let hs = HotSpot::new(9, vec![0], 0.3).unwrap();
        let mut s = Source::new(3, 4, 0, Process::new(ProcessKind::Poisson, 1.0, 1.0).unwrap());
        let n = 80_000;
        let mut seen = [0u32; 9];
        for _ in 0..n {
            seen[hs.dest(&mut s) as usize] += 1;
        }
        assert_eq!(seen[4], 0);
        let p0 = seen[0] as f64 / n as f64;
        // sd of the share ≈ sqrt(0.3875·0.6125/80000) ≈ 0.0017.
        assert!((p0 - 0.3875).abs() < 0.009, "{p0}");
        let p1 = seen[1] as f64 / n as f64;
        assert!((p1 - 0.0875).abs() < 0.006, "{p1}");
    }

    #[test]
    fn a_hot_sender_goes_to_the_other_hot_hosts_or_uniform() {
        let hs = HotSpot::new(4, vec![1], 1.0).unwrap();
        let mut s = Source::new(3, 1, 0, Process::new(ProcessKind::Poisson, 1.0, 1.0).unwrap());
        for _ in 0..100 {
            assert_ne!(hs.dest(&mut s), 1);
        }
        let hs = HotSpot::new(4, vec![1, 2], 1.0).unwrap();
        for _ in 0..100 {
            assert_eq!(hs.dest(&mut s), 2);
        }
        assert!(HotSpot::new(4, vec![], 0.5).is_err());
        assert_eq!(HotSpot::new(4, vec![0], 1.5).unwrap_err().0, "fraction");
    }
}
