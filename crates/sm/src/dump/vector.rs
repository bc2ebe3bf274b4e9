//! ib_flit_sim's forwarding tables: an OMNeT++ "vector file" (`.fdbs`) of
//! rows, keyed to switches by a `.fdbs.ini` (github.com/garyson/ib_flit_sim,
//! examples/*; the format is described in shared/data/README.md, section 2).
//!
//! ```text
//! 0: 255 0 1 0 1 2 3 2 3
//! 0: 4 5 4 5
//! ```
//! ```text
//! [General]
//! **.SW_L2_0_0_U1.pktfwd.fdbIndex = 0
//! ```
//!
//! A `.fdbs` line is `<row>: <value> <value> ...`, values separated by blanks or
//! commas; lines with the same row number are joined in order (the simulator
//! reads at most 1024 characters a line, so long rows are split). Value `k` of a
//! row is the 0-based gate of destination LID `k`, i.e. port `value + 1`; 255
//! marks an unused entry. The key's lines `**.<switch>.pktfwd.fdbIndex = <row>`
//! name each row's switch by its OMNeT++ module name: the topology name with
//! `/` and `-` replaced by `_` (`SW-2-0/U1` is `SW_2_0_U1`). Host `H-n` owns
//! LID `n`.
//!
//! The 1.5 MB table of the 1944-host example is parsed with a byte scanner, not
//! a tokenizer that allocates per value: it holds half a million entries.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::opensm_lfts::shorten;
use super::{lines, location, DumpFormat, DumpSwitch, LftDump, Route, SwitchKey};
use crate::error::SmError;
use crate::lid::MAX_UNICAST_LID;

/// One row of a `.fdbs` file: a switch's table, LID 0 first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorRow {
    /// Row number.
    pub row: u32,
    /// First line of the row.
    pub line: usize,
    /// Entry `k` is LID `k`; ports are 1-based (value + 1), `None` for 255.
    pub routes: Vec<Route>,
}

/// One line of a `.fdbs.ini` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEntry {
    /// Switch module name, e.g. `SW_2_0_U1`.
    pub name: String,
    /// Row of the `.fdbs` file.
    pub row: u32,
    /// Line of the key file.
    pub line: usize,
}

/// Parses a `.fdbs` vector file into rows, in order of first appearance.
pub fn parse_table(text: &str, file: Option<&Path>) -> Result<Vec<VectorRow>, SmError> {
    let mut rows: Vec<VectorRow> = Vec::new();
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    for (no, raw) in lines(text) {
        let err = |msg: String| SmError::parse(location(file, no), msg);
        let p = raw.trim_start();
        if p.is_empty() || p.starts_with('#') {
            continue;
        }
        let Some((head, values)) = p.split_once(':') else {
            return Err(err(format!("expected '<row>: <port> <port> ...', found '{}'", shorten(p))));
        };
        let row: u32 = head
            .trim()
            .parse()
            .map_err(|_| err(format!("row number '{}' is not a non-negative integer", shorten(head.trim()))))?;
        let slot = *index.entry(row).or_insert_with(|| {
            rows.push(VectorRow { row, line: no, routes: Vec::new() });
            rows.len() - 1
        });
        let routes = &mut rows[slot].routes;
        let bytes = values.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b' ' || b == b'\t' || b == b',' || b == b'\r' {
                i += 1;
                continue;
            }
            let start = i;
            let mut v: u32 = 0;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                v = v.saturating_mul(10).saturating_add((bytes[i] - b'0') as u32);
                i += 1;
            }
            if i == start || (i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b',' | b'\r')) {
                let end = values[i..].find([' ', '\t', ',']).map_or(values.len(), |e| i + e);
                return Err(err(format!(
                    "row {row}: '{}' is not a port (expected a 0-based gate index 0..=254, or 255 for none)",
                    shorten(&values[start..end.max(start + 1).min(values.len())])
                )));
            }
            if v > 255 {
                return Err(err(format!(
                    "row {row}: value {v} for LID {} is out of range (0-based gates 0..=254, 255 = unused)",
                    routes.len()
                )));
            }
            let lid = routes.len();
            if lid > MAX_UNICAST_LID as usize {
                return Err(err(format!("row {row} has more entries than there are unicast LIDs (0..=0xbfff)")));
            }
            let port = if v == 255 { None } else { Some(v as u8 + 1) };
            routes.push(Route { lid: lid as u16, port, line: no as u32 });
        }
    }
    Ok(rows)
}

/// Parses a `.fdbs.ini` key.
pub fn parse_key(text: &str, file: Option<&Path>) -> Result<Vec<KeyEntry>, SmError> {
    const SUFFIX: &str = ".pktfwd.fdbIndex";
    let mut out = Vec::new();
    for (no, raw) in lines(text) {
        let err = |msg: String| SmError::parse(location(file, no), msg);
        // OMNeT++ ini comments start with '#'.
        let p = raw.split('#').next().unwrap_or("").trim();
        if p.is_empty() || (p.starts_with('[') && p.ends_with(']')) {
            continue;
        }
        let expected = || format!("expected '**.<switch>{SUFFIX} = <row>', found '{}'", shorten(p));
        let (key, value) = p.split_once('=').ok_or_else(|| err(expected()))?;
        let module = key.trim().strip_suffix(SUFFIX).ok_or_else(|| err(expected()))?;
        let name = module.rsplit('.').next().unwrap_or("");
        if name.is_empty() || name.contains(['*', '?', '[', '{']) {
            return Err(err(format!("'{}' does not name one switch module", shorten(key.trim()))));
        }
        let row: u32 = value.trim().parse().map_err(|_| {
            err(format!("row '{}' of switch '{name}' is not a non-negative integer", shorten(value.trim())))
        })?;
        out.push(KeyEntry { name: name.to_string(), row, line: no });
    }
    Ok(out)
}

/// Parses a `.fdbs` table and its `.fdbs.ini` key into a dump, switches in row
/// order. Every row must have exactly one switch and every key line a row.
pub fn parse(table: &str, table_file: Option<&Path>, key: &str, key_file: Option<&Path>) -> Result<LftDump, SmError> {
    let rows = parse_table(table, table_file)?;
    let keys = parse_key(key, key_file)?;
    let mut name_at: FxHashMap<&str, usize> = FxHashMap::default();
    let mut row_key: FxHashMap<u32, &KeyEntry> = FxHashMap::default();
    for k in &keys {
        if let Some(prev) = name_at.insert(&k.name, k.line) {
            return Err(SmError::parse(
                location(key_file, k.line),
                format!("switch '{}' already has a row at line {prev}", k.name),
            ));
        }
        if let Some(prev) = row_key.insert(k.row, k) {
            return Err(SmError::parse(
                location(key_file, k.line),
                format!("row {} is already the table of switch '{}' (line {})", k.row, prev.name, prev.line),
            ));
        }
    }
    let table_name = table_file.map_or("the table".to_string(), |p| p.display().to_string());
    let key_name = key_file.map_or("the key".to_string(), |p| p.display().to_string());
    let mut by_row: FxHashMap<u32, VectorRow> = FxHashMap::default();
    for r in rows {
        if !row_key.contains_key(&r.row) {
            return Err(SmError::parse(
                location(table_file, r.line),
                format!("row {} has no switch in {key_name}", r.row),
            ));
        }
        by_row.insert(r.row, r);
    }
    let mut keys: Vec<&KeyEntry> = keys.iter().collect();
    keys.sort_by_key(|k| k.row);
    let mut switches = Vec::with_capacity(keys.len());
    for k in keys {
        let row = by_row.remove(&k.row).ok_or_else(|| {
            SmError::parse(
                location(key_file, k.line),
                format!("switch '{}' is keyed to row {}, which {table_name} does not have", k.name, k.row),
            )
        })?;
        switches.push(DumpSwitch {
            key: SwitchKey::Name(k.name.clone()),
            lid: None,
            at: location(key_file, k.line),
            range: None,
                routes: row.routes,
        });
    }
    Ok(LftDump { format: DumpFormat::Vector, file: table_file.map(Path::to_path_buf), switches, owners: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_split_rows_and_maps_gates_to_ports() {
        let table = "0: 255 0 1\n1: 255,7 ,6\n0: 2 255\n\n1: 254\n";
        let rows = parse_table(table, None).unwrap();
        assert_eq!(rows.len(), 2);
        let r0: Vec<(u16, Option<u8>, u32)> = rows[0].routes.iter().map(|r| (r.lid, r.port, r.line)).collect();
        assert_eq!(r0, vec![(0, None, 1), (1, Some(1), 1), (2, Some(2), 1), (3, Some(3), 3), (4, None, 3)]);
        let r1: Vec<Option<u8>> = rows[1].routes.iter().map(|r| r.port).collect();
        assert_eq!(r1, vec![None, Some(8), Some(7), Some(255)]);
        assert_eq!((rows[1].row, rows[1].line), (1, 2));
    }

    #[test]
    fn key_orders_switches_by_row() {
        let key = "[General]\n**.SW_B_U1.pktfwd.fdbIndex = 1\n**.SW_A_U1.pktfwd.fdbIndex = 0 # leaf\n";
        let d = parse("1: 255 3\n0: 255 0\n", None, key, None).unwrap();
        let names: Vec<&SwitchKey> = d.switches.iter().map(|s| &s.key).collect();
        assert_eq!(names, vec![&SwitchKey::Name("SW_A_U1".into()), &SwitchKey::Name("SW_B_U1".into())]);
        assert_eq!(d.switches[0].routes[1].port, Some(1));
        assert_eq!(d.switches[1].routes[1].port, Some(4));
        assert_eq!(d.switches[1].at.line, Some(2));
    }

    fn table_err(text: &str) -> String {
        parse_table(text, Some(Path::new("t.fdbs"))).unwrap_err().to_string()
    }

    fn key_err(table: &str, key: &str) -> String {
        parse(table, Some(Path::new("t.fdbs")), key, Some(Path::new("t.fdbs.ini"))).unwrap_err().to_string()
    }

    #[test]
    fn table_errors_name_file_and_line() {
        assert_eq!(table_err("0: 1 2\n255 0 1\n"), "t.fdbs:2: expected '<row>: <port> <port> ...', found '255 0 1'");
        assert_eq!(table_err("x: 1\n"), "t.fdbs:1: row number 'x' is not a non-negative integer");
        assert_eq!(
            table_err("0: 1 2\n0: 3 1a 4\n"),
            "t.fdbs:2: row 0: '1a' is not a port (expected a 0-based gate index 0..=254, or 255 for none)"
        );
        assert_eq!(
            table_err("0: 1 -1\n"),
            "t.fdbs:1: row 0: '-1' is not a port (expected a 0-based gate index 0..=254, or 255 for none)"
        );
        assert_eq!(
            table_err("3: 255 256\n"),
            "t.fdbs:1: row 3: value 256 for LID 1 is out of range (0-based gates 0..=254, 255 = unused)"
        );
    }

    #[test]
    fn key_errors_name_file_and_line() {
        assert_eq!(
            key_err("0: 255\n", "**.SW_A_U1.pktfwd.fdbIndex = 0\n**.SW_A_U1.pktfwd.fdbIndex = 1\n"),
            "t.fdbs.ini:2: switch 'SW_A_U1' already has a row at line 1"
        );
        assert_eq!(
            key_err("0: 255\n", "**.SW_A_U1.pktfwd.fdbIndex = 0\n**.SW_B_U1.pktfwd.fdbIndex = 0\n"),
            "t.fdbs.ini:2: row 0 is already the table of switch 'SW_A_U1' (line 1)"
        );
        assert_eq!(
            key_err("0: 255\n", "**.SW_A_U1.pktfwd.fdbIndex = 0\n**.SW_B_U1.pktfwd.fdbIndex = 4\n"),
            "t.fdbs.ini:2: switch 'SW_B_U1' is keyed to row 4, which t.fdbs does not have"
        );
        assert_eq!(
            key_err("0: 255\n1: 255\n", "**.SW_A_U1.pktfwd.fdbIndex = 0\n"),
            "t.fdbs:2: row 1 has no switch in t.fdbs.ini"
        );
        assert_eq!(
            key_err("0: 255\n", "**.SW_A_U1.pktfwd.fdbSize = 0\n"),
            "t.fdbs.ini:1: expected '**.<switch>.pktfwd.fdbIndex = <row>', found '**.SW_A_U1.pktfwd.fdbSize = 0'"
        );
        assert_eq!(
            key_err("0: 255\n", "**.SW_A_U1.pktfwd.fdbIndex = zero\n"),
            "t.fdbs.ini:1: row 'zero' of switch 'SW_A_U1' is not a non-negative integer"
        );
        assert_eq!(
            key_err("0: 255\n", "**.pktfwd.fdbIndex = 0\n"),
            "t.fdbs.ini:1: '**.pktfwd.fdbIndex' does not name one switch module"
        );
    }
}
