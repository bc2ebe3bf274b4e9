//! Fixed pairs: each listed source always sends to its one destination; hosts
//! not listed as a source do not send in this class.

use crate::error::SimError;
use crate::traffic::Source;

/// Source → destination map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedPairs {
    dest: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl FixedPairs {
    /// Registry name.
    pub const NAME: &'static str = "fixed-pairs";

    /// Resolves the named pairs; each source at most once, never to itself.
    pub fn new(
        pairs: &[(String, String)],
        hosts: u32,
        resolve: &dyn Fn(&str) -> Result<u32, String>,
        key: &str,
    ) -> Result<Self, SimError> {
        let mut dest = vec![NONE; hosts as usize];
        if pairs.is_empty() {
            return Err(SimError::config(format!("{key}.pairs"), "at least one (source, destination) pair is needed"));
        }
        for (i, (s, d)) in pairs.iter().enumerate() {
            let k = format!("{key}.pairs[{i}]");
            let si = resolve(s).map_err(|m| SimError::config(&k, m))?;
            let di = resolve(d).map_err(|m| SimError::config(&k, m))?;
            if si == di {
                return Err(SimError::config(&k, format!("source and destination are the same host '{s}'")));
            }
            if dest[si as usize] != NONE {
                return Err(SimError::config(&k, format!("host '{s}' already has a destination in an earlier pair")));
            }
            dest[si as usize] = di;
        }
        Ok(FixedPairs { dest })
    }

    /// Whether `host` is a listed source.
    #[inline]
    pub fn sends(&self, host: u32) -> bool {
        self.dest.get(host as usize).is_some_and(|&d| d != NONE)
    }

    /// The destination of `src.host`.
    #[inline]
    pub fn dest(&self, src: &mut Source) -> u32 {
        self.dest[src.host as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(s: &str) -> Result<u32, String> {
        s.strip_prefix('h').and_then(|n| n.parse().ok()).ok_or_else(|| format!("unknown host '{s}'"))
    }

    #[test]
    fn pairs_resolve_and_errors_name_the_pair() {
        let p = FixedPairs::new(&[("h0".into(), "h2".into())], 3, &resolve, "c").unwrap();
        assert!(p.sends(0) && !p.sends(1));
        let e = FixedPairs::new(&[("h0".into(), "h0".into())], 3, &resolve, "c").unwrap_err().to_string();
        assert!(e.contains("'c.pairs[0]'"), "{e}");
        let e = FixedPairs::new(&[("h0".into(), "h1".into()), ("h0".into(), "h2".into())], 3, &resolve, "c")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'c.pairs[1]'"), "{e}");
        let e = FixedPairs::new(&[("x".into(), "h1".into())], 3, &resolve, "c").unwrap_err().to_string();
        assert!(e.contains("unknown host 'x'"), "{e}");
    }
}
