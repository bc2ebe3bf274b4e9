//! Uniform destinations: each packet goes to one of the other hosts with equal
//! probability (papers 000, 002, 003 best-effort traffic).

use crate::traffic::Source;

/// Uniform over all hosts but the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uniform {
    hosts: u32,
}

/// Registry name.
pub const NAME: &str = "uniform";

impl Uniform {
    /// The pattern over `hosts` hosts (at least two).
    pub fn new(hosts: u32) -> Result<Self, String> {
        if hosts < 2 {
            return Err(format!("uniform traffic needs at least 2 hosts, the fabric has {hosts}"));
        }
        Ok(Uniform { hosts })
    }

    /// A destination other than `src.host`.
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        other_than_self(src, self.hosts)
    }
}

/// One of the `hosts` hosts other than `src.host`, uniformly.
#[inline]
pub fn other_than_self(src: &mut Source, hosts: u32) -> u32 {
    let d = src.pick(hosts - 1);
    if d >= src.host {
        d + 1
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{Process, ProcessKind};

    #[test]
    fn never_self_and_covers_all_others() {
        let u = Uniform::new(5).unwrap();
        let mut s = Source::new(1, 2, 0, Process::new(ProcessKind::Poisson, 1.0, 1.0).unwrap());
        let mut seen = [0u32; 5];
        for _ in 0..4000 {
            seen[u.dest(&mut s) as usize] += 1;
        }
        assert_eq!(seen[2], 0);
        for (h, &n) in seen.iter().enumerate() {
            if h != 2 {
                // Binomial(4000, 1/4): mean 1000, sd ≈ 27.
                assert!((850..1150).contains(&n), "host {h}: {n}");
            }
        }
        assert!(Uniform::new(1).is_err());
    }
}
