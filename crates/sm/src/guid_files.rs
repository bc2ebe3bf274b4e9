//! OpenSM's GUID list files: the up*/down* root GUID file.
//!
//! # Root GUID files
//! OpenSM's `root_guid_file` option (`-a`) names a file that `updn` and
//! `ftree` read with complib's `parse_node_map` (complib/cl_nodenamemap.c);
//! `updn` also writes the roots it used to `opensm-updn-roots.dump`
//! (`dump_roots` in opensm/osm_ucast_updn.c, `"0x%" PRIx64 "\n"` a root), which
//! is therefore a root GUID file too. `parse_node_map`'s syntax, kept here:
//! leading blanks are skipped; a blank line or one starting with `#` is
//! skipped; otherwise the line starts with a number as C's `strtoull(p, &e, 0)`
//! reads it (`0x` hex, a leading `0` octal, else decimal), which must be
//! followed by a blank, a `#` or the end of the line; the rest of the line is
//! ignored by `updn` (`rank_root_node`).
//!
//! Stricter than OpenSM, because a simulator must not guess: OpenSM skips a
//! GUID no switch has (a verbose-level log line) and, for a file with no root
//! at all, falls back to its automatic roots. Here a GUID that is not a
//! switch's node GUID, a number that does not fit in 64 bits and a file
//! without a GUID are errors naming the file and line.

use std::path::Path;

use ibnetsim_fabric::{Fabric, Location, NodeId};

use crate::dump::opensm_lfts::shorten;
use crate::error::SmError;

/// A GUID of a list file and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGuid {
    /// The GUID.
    pub guid: u64,
    /// File and line.
    pub at: Location,
}

/// Parses a root GUID file (see the module documentation).
pub fn parse_root_guids(text: &str, file: Option<&Path>) -> Result<Vec<ListedGuid>, SmError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = Location::new(file.map(Path::to_path_buf), i + 1);
        let p = raw.trim_start();
        if p.is_empty() || p.starts_with('#') {
            continue;
        }
        let guid = match strtoull(p) {
            Ok((g, rest)) if rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '#') => g,
            Ok(_) | Err(Strtoull::NoDigits) => {
                return Err(SmError::parse(
                    at,
                    format!(
                        "cannot read a GUID in '{}': a root GUID file has one GUID a line (0x… hex, as \
                         opensm-updn-roots.dump writes them), then blanks or a # comment",
                        shorten(p)
                    ),
                ))
            }
            Err(Strtoull::TooLarge) => {
                return Err(SmError::parse(at, format!("'{}' does not fit in a 64-bit GUID", shorten(p))))
            }
        };
        out.push(ListedGuid { guid, at });
    }
    if out.is_empty() {
        return Err(SmError::parse(
            Location { file: file.map(Path::to_path_buf), line: None },
            "no GUID in the root GUID file (OpenSM would fall back to finding roots itself); \
             list the root switches' GUIDs, one a line, or leave out --root to find them automatically",
        ));
    }
    Ok(out)
}

/// Reads a root GUID file.
pub fn read_root_guids(path: &Path) -> Result<Vec<ListedGuid>, SmError> {
    let text = crate::error::read_text(path, "a root GUID file (one switch GUID a line)")?;
    parse_root_guids(&text, Some(path))
}

/// The switches a root GUID file lists, in file order, each once. A GUID
/// must be a switch's node GUID (OpenSM looks roots up in its switch table,
/// keyed by node GUID).
pub fn root_switches(fabric: &Fabric, listed: &[ListedGuid]) -> Result<Vec<NodeId>, SmError> {
    let mut out = Vec::with_capacity(listed.len());
    for l in listed {
        let g = l.guid;
        // node_by_guid finds a switch by its node GUID only, a CA by any port GUID.
        let node = match fabric.node_by_guid(g) {
            Some(n) if fabric.node(n).kind.is_switch() => n,
            Some(n) => {
                return Err(SmError::parse(
                    l.at.clone(),
                    format!(
                        "GUID {g:#018x} is a port of channel adapter '{}'; up*/down* roots are switches, given by node GUID",
                        fabric.node(n).name
                    ),
                ))
            }
            None => {
                return Err(SmError::parse(
                    l.at.clone(),
                    format!("GUID {g:#018x} is not a switch of this fabric (is the file for another fabric?)"),
                ))
            }
        };
        if !out.contains(&node) {
            out.push(node);
        }
    }
    Ok(out)
}

enum Strtoull {
    NoDigits,
    TooLarge,
}

/// C's `strtoull(s, &end, 0)` for an unsigned number: the value and the rest.
fn strtoull(s: &str) -> Result<(u64, &str), Strtoull> {
    let (radix, digits) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        // `0x` without a hex digit is the number 0 followed by `x`.
        Some(h) if h.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, h),
        _ if s.starts_with('0') => (8, s),
        _ => (10, s),
    };
    let n = digits.bytes().take_while(|b| (*b as char).is_digit(radix)).count();
    if n == 0 {
        return Err(Strtoull::NoDigits);
    }
    let v = u64::from_str_radix(&digits[..n], radix).map_err(|_| Strtoull::TooLarge)?;
    Ok((v, &digits[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    fn guids(text: &str) -> Vec<(u64, usize)> {
        parse_root_guids(text, Some(Path::new("roots"))).unwrap().iter().map(|l| (l.guid, l.at.line.unwrap())).collect()
    }

    fn err(text: &str) -> String {
        parse_root_guids(text, Some(Path::new("roots"))).unwrap_err().to_string()
    }

    #[test]
    fn reads_what_opensm_writes_and_accepts() {
        // dump_roots: "0x%" PRIx64 "\n", no zero padding.
        assert_eq!(guids("0x2c90300000100\n0x2c90300000200\n"), vec![(0x0002_c903_0000_0100, 1), (0x0002_c903_0000_0200, 2)]);
        // parse_node_map: blanks, comments, text after the GUID, octal and decimal.
        assert_eq!(
            guids("# spines\n\n  0x0002C90300000100 spine-1\n0x10# c\n010\t\n17\n"),
            vec![(0x2_c903_0000_0100, 3), (0x10, 4), (8, 5), (17, 6)]
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let how = "a root GUID file has one GUID a line (0x… hex, as opensm-updn-roots.dump writes them), then blanks or a # comment";
        assert_eq!(err("0x1\nspine-1\n"), format!("roots:2: cannot read a GUID in 'spine-1': {how}"));
        // Hex without its 0x reads as octal up to the first 8, 9 or letter, as strtoull does.
        assert_eq!(err("0002c90300000100\n"), format!("roots:1: cannot read a GUID in '0002c90300000100': {how}"));
        assert_eq!(err("0x\n"), format!("roots:1: cannot read a GUID in '0x': {how}"));
        assert_eq!(err("0x1,0x2\n"), format!("roots:1: cannot read a GUID in '0x1,0x2': {how}"));
        assert_eq!(err("0x10000000000000000\n"), "roots:1: '0x10000000000000000' does not fit in a 64-bit GUID");
        assert!(err("# none\n\n").starts_with("roots: no GUID in the root GUID file"), "{}", err("# none\n"));
    }

    #[test]
    fn guids_must_be_switch_node_guids() {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, Some(0x100)).unwrap();
        let t = f.add_node(NodeKind::Switch, "t", 4, Some(0x200)).unwrap();
        let h = f.add_node(NodeKind::Hca, "h", 2, Some(0x1000)).unwrap();
        f.connect(s, 1, t, 1, LinkSpec::default()).unwrap();
        f.connect(s, 2, h, 1, LinkSpec::default()).unwrap();
        let listed = parse_root_guids("0x200\n0x100\n0x200\n", None).unwrap();
        assert_eq!(root_switches(&f, &listed).unwrap(), vec![t, s], "file order, each once");
        let e = |text: &str| {
            let l = parse_root_guids(text, Some(Path::new("r"))).unwrap();
            root_switches(&f, &l).unwrap_err().to_string()
        };
        assert_eq!(
            e("0x100\n0x1001\n"),
            "r:2: GUID 0x0000000000001001 is a port of channel adapter 'h'; up*/down* roots are switches, given by node GUID"
        );
        assert_eq!(e("0x300\n"), "r:1: GUID 0x0000000000000300 is not a switch of this fabric (is the file for another fabric?)");
    }
}
