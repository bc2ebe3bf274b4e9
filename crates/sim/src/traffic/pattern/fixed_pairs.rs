//! Fixed pairs: each listed source always sends to its one destination; hosts
//! not listed as a source do not send in this class.

use super::DestMap;
use crate::error::SimError;

/// Registry name.
pub const NAME: &str = "fixed-pairs";

/// Resolves the named pairs; each source at most once, never to itself.
pub fn map(
    pairs: &[(String, String)],
    hosts: u32,
    resolve: &dyn Fn(&str) -> Result<u32, String>,
    key: &str,
) -> Result<DestMap, SimError> {
    let mut dest = vec![DestMap::SILENT; hosts as usize];
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
        if dest[si as usize] != DestMap::SILENT {
            return Err(SimError::config(&k, format!("host '{s}' already has a destination in an earlier pair")));
        }
        dest[si as usize] = di;
    }
    Ok(DestMap::from_vec(dest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(s: &str) -> Result<u32, String> {
        s.strip_prefix('h').and_then(|n| n.parse().ok()).ok_or_else(|| format!("unknown host '{s}'"))
    }

    #[test]
    fn pairs_resolve_and_errors_name_the_pair() {
        let p = map(&[("h0".into(), "h2".into())], 3, &resolve, "c").unwrap();
        assert!(p.sends(0) && !p.sends(1));
        assert_eq!(p.get(0), Some(2));
        let e = map(&[("h0".into(), "h0".into())], 3, &resolve, "c").unwrap_err().to_string();
        assert!(e.contains("'c.pairs[0]'"), "{e}");
        let e = map(&[("h0".into(), "h1".into()), ("h0".into(), "h2".into())], 3, &resolve, "c").unwrap_err().to_string();
        assert!(e.contains("'c.pairs[1]'"), "{e}");
        let e = map(&[("x".into(), "h1".into())], 3, &resolve, "c").unwrap_err().to_string();
        assert!(e.contains("unknown host 'x'"), "{e}");
    }
}
