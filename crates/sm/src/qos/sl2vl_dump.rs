//! OpenSM's `opensm-sl2vl.dump`, read back as [`Sl2VlTables`]: the SLtoVL
//! tables OpenSM programmed, so that `check`'s credit-loop analysis uses the
//! VLs of the real run rather than ones recomputed from `opensm.conf`.
//!
//! The format is `dump_sl2vl_tbl` in opensm/osm_dump.c. One block per port
//! OpenSM knows (a switch has one, its port 0; a CA one per port):
//!
//! ```text
//! Switch 0x0002c90300000100, base LID 3, "sw-a"
//! #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//! #--------------------------------------------------------
//! 0   1   : 0  1  0  1  0  1  0  1  0  1  0  1  0  1  0  15
//! 1   1   : ...
//! #--------------------------------------------------------
//! ```
//!
//! The heading is `"%s 0x%016" PRIx64 ", base LID %d, \"%s\""` of the node type
//! (`Switch`, `Channel Adapter` or `Router`), the port GUID, the base LID and
//! the description; each table row is `"%-3d %-3d :"` of the input and output
//! port, then `" %-2d"` per SL. A switch lists, for every output port with a
//! cable, every input port `0..=ports`; a CA port one row `0 0`.
//!
//! The VLs ports operate are not in the dump, so every port is taken to
//! operate as many data VLs as the highest VL the dump uses (VL 15 means drop).
//! Every table the check can use must be listed: a node with no block, or a
//! cabled (input, output) pair with no row, is an error naming the file, as
//! are a port GUID the fabric does not have, a row listed twice, and a row
//! that is not 16 VLs. Rows of uncabled input ports are read and not used.

use std::path::Path;

use ibnetsim_fabric::{Fabric, LinkEnd, Location, NodeId, PortNum};
use rustc_hash::FxHashMap;

use crate::dump::opensm_lfts::shorten;
use crate::dump::PortGuids;
use crate::error::SmError;
use crate::qos::{Sl2VlMap, Sl2VlTables, VL_DROP};

/// Reads `opensm-sl2vl.dump` for `fabric` (see the module documentation).
pub fn read_sl2vl_dump(path: &Path, fabric: &Fabric) -> Result<Sl2VlTables, SmError> {
    let text = crate::error::read_text(path, "an OpenSM SL2VL dump")?;
    parse_sl2vl_dump(&text, Some(path), fabric)
}

/// A table row: node, input port, output port, the table, and its line.
type Row = (NodeId, PortNum, PortNum, Sl2VlMap, usize);

/// Parses the text of an `opensm-sl2vl.dump`; `file` names it in errors.
pub fn parse_sl2vl_dump(text: &str, file: Option<&Path>, fabric: &Fabric) -> Result<Sl2VlTables, SmError> {
    let at = |line: usize| Location::new(file.map(Path::to_path_buf), line);
    let guids = PortGuids::new(fabric);
    // The port whose block we are in (a switch's port 0 or a CA port).
    let mut block: Option<LinkEnd> = None;
    let mut seen_blocks: FxHashMap<LinkEnd, usize> = FxHashMap::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut row_line: FxHashMap<(NodeId, PortNum, PortNum), usize> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = ["Switch ", "Channel Adapter ", "Router "].iter().find_map(|k| t.strip_prefix(k)) {
            let guid = rest
                .split(',')
                .next()
                .and_then(|g| g.trim().strip_prefix("0x"))
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .filter(|_| rest.contains(", base LID "))
                .ok_or_else(|| bad(at(no), t, "a heading is '<node type> 0x<port GUID>, base LID <n>, \"<description>\"'"))?;
            let end = guids.port(guid).map_err(|m| {
                SmError::parse(at(no), format!("{m}: give the SL2VL dump of the same OpenSM run as the topology"))
            })?;
            if let Some(first) = seen_blocks.insert(end, no) {
                return Err(SmError::parse(at(no), format!("port GUID {guid:#018x} has a second block; the first is at line {first}")));
            }
            block = Some(end);
            continue;
        }
        let Some(end) = block else {
            return Err(bad(at(no), t, "table rows come after a '<node type> 0x<port GUID>, base LID <n>, ...' heading"));
        };
        let (ports, vls) = t.split_once(':').ok_or_else(|| bad(at(no), t, ROW))?;
        let ports: Vec<u32> = ports.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| bad(at(no), t, ROW))?;
        let vls: Vec<u8> = vls.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| bad(at(no), t, ROW))?;
        let ([inp, out], Ok(map)) = (ports.as_slice(), <Sl2VlMap>::try_from(vls.as_slice())) else {
            return Err(bad(at(no), t, ROW));
        };
        if let Some(vl) = map.iter().find(|&&v| v > VL_DROP) {
            return Err(SmError::parse(at(no), format!("VL {vl} does not exist: VLs are 0..=14, and 15 drops the SL")));
        }
        let node = fabric.node(end.node);
        let (inp, out) = if node.kind.is_switch() {
            for p in [*inp, *out] {
                if p > node.num_ports as u32 {
                    return Err(SmError::parse(at(no), format!("switch '{}' has no port {p} (it has {})", node.name, node.num_ports)));
                }
            }
            (*inp as PortNum, *out as PortNum)
        } else {
            if (*inp, *out) != (0, 0) {
                return Err(bad(at(no), t, "a channel adapter port has a single row, '0   0   : ...'"));
            }
            (0, end.port)
        };
        if let Some(first) = row_line.insert((end.node, inp, out), no) {
            return Err(SmError::parse(at(no), format!("input {inp}, output {out} is listed twice, first at line {first}")));
        }
        rows.push((end.node, inp, out, map, no));
    }
    let whole = Location { file: file.map(Path::to_path_buf), line: None };
    let missing = |what: String| {
        SmError::parse(
            whole.clone(),
            format!("{what}: OpenSM dumps every cabled port, so give the SL2VL dump of the same run as the topology"),
        )
    };
    for id in fabric.ids() {
        let n = fabric.node(id);
        let cabled: Vec<PortNum> = n.connected_ports().map(|(p, _)| p).collect();
        if n.kind.is_switch() {
            for &o in &cabled {
                for i in std::iter::once(0).chain(cabled.iter().copied()).filter(|&i| i != o) {
                    if !row_line.contains_key(&(id, i, o)) {
                        return Err(missing(format!("switch '{}' has no row for input {i}, output {o}", n.name)));
                    }
                }
            }
        } else {
            for &p in &cabled {
                if !row_line.contains_key(&(id, 0, p)) {
                    return Err(missing(format!("'{}' port {p} has no table", n.name)));
                }
            }
        }
    }
    let top_vl = rows.iter().flat_map(|r| r.3).filter(|&v| v != VL_DROP).max().unwrap_or(0);
    let mut tables = Sl2VlTables::uniform(fabric, top_vl + 1)?;
    for (node, inp, out, map, no) in rows {
        let set = if fabric.node(node).kind.is_switch() {
            tables.set_pair(node, inp, out, &map)
        } else {
            tables.set_ca_port(node, out, &map)
        };
        set.map_err(|e| SmError::parse(at(no), e.to_string()))?;
    }
    Ok(tables)
}

const ROW: &str = "a table row is '<in port> <out port> : ' and 16 VLs, one per SL";

fn bad(at: Location, line: &str, expected: &str) -> SmError {
    SmError::parse(at, format!("cannot read '{}': {expected} (OpenSM's dump_sl2vl_tbl format)", shorten(line)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    /// Switch `s` (GUID 0x10, 2 ports) with HCA `a` (node GUID 0x100) on port 1
    /// and HCA `b` (0x200) on port 2.
    fn pair() -> Fabric {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 2, Some(0x10)).unwrap();
        let a = f.add_node(NodeKind::Hca, "a", 1, Some(0x100)).unwrap();
        let b = f.add_node(NodeKind::Hca, "b", 1, Some(0x200)).unwrap();
        f.connect(s, 1, a, 1, LinkSpec::default()).unwrap();
        f.connect(s, 2, b, 1, LinkSpec::default()).unwrap();
        f
    }

    const HEAD: &str = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n\
                        #--------------------------------------------------------\n";
    const ZEROS: &str = " 0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0 ";

    /// The whole dump of `pair()` as dump_sl2vl_tbl prints it ("%-3d %-3d :"
    /// then " %-2d" per SL), with `row` in place of switch row (2, 1).
    fn sample(row: &str) -> String {
        let mut t = format!("Switch 0x0000000000000010, base LID 3, \"s\"\n{HEAD}");
        for out in 1..=2 {
            for inp in 0..=2 {
                if (inp, out) == (2, 1) {
                    t += &format!("{row}\n");
                } else {
                    t += &format!("{inp:<3} {out:<3} :{ZEROS}\n");
                }
            }
        }
        t += "#--------------------------------------------------------\n\n";
        for (g, lid) in [(0x101, 1), (0x201, 2)] {
            t += &format!("Channel Adapter 0x{g:016x}, base LID {lid}, \"h\"\n{HEAD}0   0   :{ZEROS}\n");
            t += "#--------------------------------------------------------\n\n";
        }
        t
    }

    #[test]
    fn rows_set_their_pair() {
        let f = pair();
        let t = parse_sl2vl_dump(&sample("2   1   : 1  0  2  0  0  0  0  0  0  0  0  0  0  0  0  15"), None, &f).unwrap();
        let s = NodeId(0);
        assert_eq!(t.table(s, 2, 1), &[1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15]);
        assert_eq!(t.vl(s, 0, 1, 0), 0);
        assert_eq!(t.vl(s, 1, 2, 0), 0);
        // The highest VL listed is 2, so every port operates VLs 0..=2.
        assert_eq!(t.data_vls(), 3);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let f = pair();
        let err = |row: &str| parse_sl2vl_dump(&sample(row), Some(Path::new("d")), &f).unwrap_err().to_string();
        // Line 6 is row (2, 1): heading, column heading, separator, then rows (0,1), (1,1).
        assert_eq!(
            err("2   1   : 0  0"),
            "d:6: cannot read '2   1   : 0  0': a table row is '<in port> <out port> : ' and 16 VLs, one per SL \
             (OpenSM's dump_sl2vl_tbl format)"
        );
        assert_eq!(err(&format!("2   1   :{}", " 16".repeat(16))), "d:6: VL 16 does not exist: VLs are 0..=14, and 15 drops the SL");
        assert_eq!(err(&format!("3   1   :{ZEROS}")), "d:6: switch 's' has no port 3 (it has 2)");
        assert_eq!(err(&format!("1   1   :{ZEROS}")), "d:6: input 1, output 1 is listed twice, first at line 5");
        let e = parse_sl2vl_dump(&sample(&format!("2   1   :{ZEROS}")).replace("0x0000000000000201", "0x0000000000000999"), Some(Path::new("d")), &f)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "d:18: port GUID 0x0000000000000999 is not in the fabric: give the SL2VL dump of the same OpenSM run as the topology");
        let e = parse_sl2vl_dump(&format!("0   1   :{ZEROS}\n"), Some(Path::new("d")), &f).unwrap_err().to_string();
        assert!(e.starts_with("d:1: cannot read '0   1   :"), "{e}");
        assert!(e.ends_with("table rows come after a '<node type> 0x<port GUID>, base LID <n>, ...' heading (OpenSM's dump_sl2vl_tbl format)"), "{e}");
    }
}
