//! OpenSM's LID database, the `guid2lid` file, read back as a [`LidMap`].
//!
//! OpenSM keeps the LIDs it gave in `guid2lid` (in its cache directory,
//! `/var/cache/opensm` by default) so that ports keep their LIDs across
//! restarts. The LID manager sets one entry per port (`osm_db_guid2lid_set` in
//! opensm/osm_lid_mgr.c), `osm_db_pack.c` formats it as the key
//! `"0x%016" PRIx64` (the port GUID) and the value `"0x%04x 0x%04x"` (the
//! port's first and last LID), and `osm_db_store` (opensm/osm_db_files.c)
//! writes `"%s %s\n\n"`: every entry a line, then a blank line.
//!
//! A switch's port 0 gets a single LID unless `lmc_esp0` is set
//! (`lid_mgr_get_port_lid`); a CA port gets `2^LMC` LIDs starting at a
//! multiple of `2^LMC`. ibnetsim models switch port 0 with one LID, so a
//! switch range longer than one LID is refused rather than cut short.
//!
//! Why read it: dumps that do not say who owns a LID (`opensm.fdbs`, written
//! by `dump_ucast_routes`, and ib_flit_sim `.fdbs` tables) only line up with
//! the fabric when its ports carry OpenSM's numbering, which this file is.
//!
//! Stricter than OpenSM, because a checker must not guess: OpenSM drops a
//! duplicate GUID with a log line and keeps entries of ports that are gone;
//! here a GUID listed twice, a GUID the fabric has no cabled port for, LIDs
//! given twice, a range that is not an aligned power-of-two block, and a
//! cabled port with no line are errors naming the file (and the line).
//! Blank lines and `#` comment lines are skipped (OpenSM writes neither
//! comments nor anything else).

use std::path::Path;

use ibnetsim_fabric::{Fabric, LinkEnd, Location};
use rustc_hash::FxHashMap;

use crate::dump::opensm_lfts::shorten;
use crate::dump::PortGuids;
use crate::error::SmError;
use crate::lid::{Lid, LidMap, PortLid, MAX_UNICAST_LID};

/// Reads a `guid2lid` file for `fabric` (see the module documentation).
pub fn read_guid2lid(path: &Path, fabric: &Fabric) -> Result<LidMap, SmError> {
    let text = crate::error::read_text(path, "OpenSM's guid2lid file")?;
    parse_guid2lid(&text, Some(path), fabric)
}

/// Parses the text of a `guid2lid` file into the LIDs of `fabric`'s ports.
/// `file` names the file in errors. The CA ports' LMC is the largest a CA
/// port's range gives (OpenSM uses one LMC for all of them).
pub fn parse_guid2lid(text: &str, file: Option<&Path>, fabric: &Fabric) -> Result<LidMap, SmError> {
    let at = |line: usize| Location::new(file.map(Path::to_path_buf), line);
    let guids = PortGuids::new(fabric);
    let mut entries: Vec<PortLid> = Vec::new();
    // Line of each port's entry, and of each LID's owner, for the errors.
    let mut line_of_port: FxHashMap<LinkEnd, usize> = FxHashMap::default();
    let mut line_of_lid: FxHashMap<Lid, (usize, u64)> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let hex = |w: &str| w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")).and_then(|h| u64::from_str_radix(h, 16).ok());
        let (guid, min, max) = match words.as_slice() {
            [g, a, b] => match (hex(g), hex(a), hex(b)) {
                (Some(g), Some(a), Some(b)) => (g, a, b),
                _ => return Err(bad_line(at(no), t)),
            },
            _ => return Err(bad_line(at(no), t)),
        };
        let end = guids.port(guid).map_err(|m| {
            SmError::parse(
                at(no),
                format!("{m}: give the guid2lid of the same OpenSM run as the topology, or remove the line of a port that is gone"),
            )
        })?;
        let node = fabric.node(end.node);
        let what = if end.port == 0 { format!("switch '{}'", node.name) } else { format!("'{}' port {}", node.name, end.port) };
        if end.port != 0 && fabric.link_at(end.node, end.port).is_none() {
            return Err(SmError::parse(
                at(no),
                format!("port GUID {guid:#018x} is {what}, which is not cabled in the topology: remove the line, or give the topology of the same run"),
            ));
        }
        if let Some(first) = line_of_port.insert(end, no) {
            return Err(SmError::parse(at(no), format!("port GUID {guid:#018x} ({what}) is listed twice, first at line {first}: keep one line")));
        }
        let count = max.wrapping_sub(min).wrapping_add(1);
        if min == 0 || max > MAX_UNICAST_LID as u64 || min > max {
            return Err(SmError::parse(
                at(no),
                format!("LIDs {min:#06x}-{max:#06x} of {what} are not a range of unicast LIDs (0x0001-0xbfff, first <= last)"),
            ));
        }
        if !count.is_power_of_two() || count > 128 || min % count != 0 {
            return Err(SmError::parse(
                at(no),
                format!(
                    "LIDs {min:#06x}-{max:#06x} of {what} are not a block of 2^LMC LIDs starting at a multiple of 2^LMC \
                     (LMC 0..=7), as OpenSM assigns them: correct the range"
                ),
            ));
        }
        if end.port == 0 && count != 1 {
            return Err(SmError::parse(
                at(no),
                format!(
                    "{what} has LIDs {min:#06x}-{max:#06x}; ibnetsim gives a switch's port 0 a single LID \
                     (OpenSM without lmc_esp0): give its base LID alone ({min:#06x} {min:#06x})"
                ),
            ));
        }
        for lid in min..=max {
            if let Some((first, other)) = line_of_lid.insert(lid as Lid, (no, guid)) {
                return Err(SmError::parse(
                    at(no),
                    format!("LID {lid:#06x} of {what} is also given to port GUID {other:#018x} at line {first}: each LID has one owner"),
                ));
            }
        }
        entries.push(PortLid { end, base: min as Lid, lmc: count.trailing_zeros() as u8 });
    }
    let whole_file = Location { file: file.map(Path::to_path_buf), line: None };
    let needed = fabric.ca_ports().into_iter().chain(fabric.switches().map(|node| LinkEnd { node, port: 0 }));
    for end in needed {
        if !line_of_port.contains_key(&end) {
            let node = fabric.node(end.node);
            let what = if end.port == 0 { format!("switch '{}'", node.name) } else { format!("'{}' port {}", node.name, end.port) };
            return Err(SmError::parse(
                whole_file,
                format!(
                    "{what} (port GUID {:#018x}) has no line: OpenSM writes one for every port it gives LIDs to, \
                     so give the guid2lid of the same run as the topology",
                    node.port_guid(end.port)
                ),
            ));
        }
    }
    let lmc = entries.iter().filter(|p| p.end.port != 0).map(|p| p.lmc).max().unwrap_or(0);
    LidMap::from_entries(fabric, lmc, entries)
}

fn bad_line(at: Location, line: &str) -> SmError {
    SmError::parse(
        at,
        format!(
            "cannot read '{}': a guid2lid line is '0x<port GUID> 0x<first LID> 0x<last LID>', \
             as OpenSM's osm_db_store writes it",
            shorten(line)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{LinkSpec, NodeId, NodeKind};

    /// Switch `s` (GUID 0x10) with HCA `a` (node GUID 0x100, port 1 cabled to
    /// s/1) and HCA `b` (0x200, port 1 cabled to s/3; its port 2 is not cabled).
    fn star() -> Fabric {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, Some(0x10)).unwrap();
        let a = f.add_node(NodeKind::Hca, "a", 1, Some(0x100)).unwrap();
        let b = f.add_node(NodeKind::Hca, "b", 2, Some(0x200)).unwrap();
        f.connect(s, 1, a, 1, LinkSpec::default()).unwrap();
        f.connect(s, 3, b, 1, LinkSpec::default()).unwrap();
        f
    }

    // Lines as osm_db_store writes them: "%s %s\n\n" of "0x%016" PRIx64 and
    // "0x%04x 0x%04x" (opensm/osm_db_files.c, osm_db_pack.c), here at LMC 2.
    const LMC2: &str = "0x0000000000000010 0x0001 0x0001\n\n\
                        0x0000000000000101 0x0004 0x0007\n\n\
                        0x0000000000000201 0x0008 0x000b\n\n";

    fn err(text: &str) -> String {
        parse_guid2lid(text, Some(Path::new("guid2lid")), &star()).unwrap_err().to_string()
    }

    #[test]
    fn lids_and_lmc_come_from_the_ranges() {
        let f = star();
        let m = parse_guid2lid(LMC2, None, &f).unwrap();
        assert_eq!(m.lmc(), 2);
        assert_eq!(m.switch_lid(NodeId(0)), Some(1));
        let a = m.of_port(NodeId(1), 1).unwrap();
        assert_eq!((a.base, a.lmc), (4, 2));
        let b = m.of_port(NodeId(2), 1).unwrap();
        assert_eq!((b.base, b.lmc), (8, 2));
        assert_eq!(m.top_lid(), 0xb);
        assert_eq!(m.owner(6).unwrap().end, LinkEnd { node: NodeId(1), port: 1 });
        assert!(m.owner(2).is_none());
    }

    #[test]
    fn every_defect_names_file_and_line() {
        let sw = "0x0000000000000010 0x0001 0x0001\n";
        let a = "0x0000000000000101 0x0004 0x0007\n";
        let b = "0x0000000000000201 0x0008 0x000b\n";
        let cases: Vec<(String, &str)> = vec![
            (format!("{sw}{a}0x0000000000000901 0x000c 0x000c\n{b}"), "guid2lid:3: port GUID 0x0000000000000901 is not in the fabric: give the guid2lid of the same OpenSM run as the topology, or remove the line of a port that is gone"),
            (format!("{sw}{a}0x0000000000000202 0x000c 0x000c\n{b}"), "guid2lid:3: port GUID 0x0000000000000202 is 'b' port 2, which is not cabled in the topology: remove the line, or give the topology of the same run"),
            (format!("{sw}{a}0x0000000000000201 0x0008 0x000a\n"), "guid2lid:3: LIDs 0x0008-0x000a of 'b' port 1 are not a block of 2^LMC LIDs starting at a multiple of 2^LMC (LMC 0..=7), as OpenSM assigns them: correct the range"),
            (format!("{sw}{a}0x0000000000000201 0x0006 0x0009\n"), "guid2lid:3: LIDs 0x0006-0x0009 of 'b' port 1 are not a block of 2^LMC LIDs starting at a multiple of 2^LMC (LMC 0..=7), as OpenSM assigns them: correct the range"),
            (format!("{sw}{a}0x0000000000000201 0x0008 0x0004\n"), "guid2lid:3: LIDs 0x0008-0x0004 of 'b' port 1 are not a range of unicast LIDs (0x0001-0xbfff, first <= last)"),
            (format!("{sw}{a}0x0000000000000201 0x0000 0x0000\n"), "guid2lid:3: LIDs 0x0000-0x0000 of 'b' port 1 are not a range of unicast LIDs (0x0001-0xbfff, first <= last)"),
            (format!("{sw}{a}0x0000000000000201 0x0004 0x0004\n"), "guid2lid:3: LID 0x0004 of 'b' port 1 is also given to port GUID 0x0000000000000101 at line 2: each LID has one owner"),
            (format!("{sw}{a}\n{a}{b}"), "guid2lid:4: port GUID 0x0000000000000101 ('a' port 1) is listed twice, first at line 2: keep one line"),
            ("0x0000000000000010 0x0004 0x0007\n".to_string(), "guid2lid:1: switch 's' has LIDs 0x0004-0x0007; ibnetsim gives a switch's port 0 a single LID (OpenSM without lmc_esp0): give its base LID alone (0x0004 0x0004)"),
            (format!("{sw}0x0000000000000101 4 7\n"), "guid2lid:2: cannot read '0x0000000000000101 4 7': a guid2lid line is '0x<port GUID> 0x<first LID> 0x<last LID>', as OpenSM's osm_db_store writes it"),
            (format!("{sw}0x0000000000000101 0x0004\n"), "guid2lid:2: cannot read '0x0000000000000101 0x0004': a guid2lid line is '0x<port GUID> 0x<first LID> 0x<last LID>', as OpenSM's osm_db_store writes it"),
            (format!("{sw}{a}"), "guid2lid: 'b' port 1 (port GUID 0x0000000000000201) has no line: OpenSM writes one for every port it gives LIDs to, so give the guid2lid of the same run as the topology"),
        ];
        for (text, want) in cases {
            assert_eq!(err(&text), want, "{text}");
        }
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let text = format!("# saved by hand\n\n{LMC2}");
        let m = parse_guid2lid(&text, None, &star()).unwrap();
        assert_eq!(m.of_port(NodeId(2), 1).unwrap().base, 8);
    }
}
