//! OpenSM's `opensm-lfts.dump`: every switch's linear forwarding table, as
//! `dump_ucast_lfts` in opensm/osm_dump.c writes it and as the `file` routing
//! engine (`do_ucast_file_load` in opensm/osm_ucast_file.c) reads it back.
//!
//! ```text
//! Unicast lids [0-4] of switch Lid 4 guid 0x0002c90300000100 ('s'):
//! 0x0001 001 # Channel Adapter portguid 0x0002c90300000201: 'h0'
//! 0x0004 000 # Switch portguid 0x0002c90300000100: 's'
//! 4 lids dumped
//! ```
//!
//! Writing follows `dump_ucast_lfts` byte for byte: switches in OpenSM's
//! `sw_guid_tbl` order, the header's range is `[0-<max LID>]` in decimal, one
//! line `0x%04x %03u # ...` per LID whose port exists (LID 0 and unrouted LIDs
//! are left out, as `port >= num_ports` skips them), and the trailer repeats the
//! max LID (`%u lids dumped`), not a count.
//!
//! Reading accepts what OpenSM's loader accepts: a switch is the GUID after
//! ` guid 0x` in a `Unicast lids` line; an entry is a line starting `0x<hex LID>`
//! and a decimal port, each followed by a blank; the rest of the line is a
//! comment, from which the owner's GUID after ` portguid 0x` is taken. That
//! also covers `ibroute` output (`0x0001 000 : (Switch portguid 0x...: 'sw')`,
//! `(path #2 out of 4: portguid 0x...)`). Port 255 is OpenSM's "no path".
//! Stricter than OpenSM, because a simulator must not guess: an entry before
//! any switch, a switch given twice, a LID outside the unicast range and any
//! line that is none of the above (other than blank lines, `#` comments,
//! `ibroute`'s column headings and the `lids dumped` trailer) are errors.

use std::fmt::Write as _;
use std::path::Path;

use ibnetsim_fabric::Fabric;

use super::{
    lines, location, opensm_switch_order, print_desc, DumpFormat, DumpSwitch, LftDump, LidOwner, Route, SwitchKey,
};
use crate::error::SmError;
use crate::lft::{ForwardingTables, NO_PATH};
use crate::lid::{Lid, LidMap, MAX_UNICAST_LID};

/// Writes the tables as OpenSM's `opensm-lfts.dump`.
pub fn write(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> String {
    let top = tables.top_lid();
    let mut out = String::new();
    for sw in opensm_switch_order(fabric) {
        let node = fabric.node(sw);
        let Some(lft) = tables.lft(sw) else { continue };
        // `fmt::Write` for `String` cannot fail.
        let _ = writeln!(
            out,
            "Unicast lids [0-{top}] of switch Lid {} guid 0x{:016x} ('{}'):",
            lids.switch_lid(sw).unwrap_or(0),
            node.guid,
            print_desc(&node.description)
        );
        // OpenSM's num_ports counts port 0.
        let max_port = node.num_ports as u32 + 1;
        for (lid, &port) in lft.entries().iter().enumerate() {
            if port as u32 >= max_port {
                continue;
            }
            let _ = write!(out, "0x{lid:04x} {port:03} # ");
            match lids.owner(lid as Lid) {
                Some(pl) => {
                    let owner = fabric.node(pl.end.node);
                    let kind = if owner.kind.is_switch() { "Switch" } else { "Channel Adapter" };
                    let _ = writeln!(
                        out,
                        "{kind} portguid 0x{:016x}: '{}'",
                        owner.port_guid(pl.end.port),
                        print_desc(&owner.description)
                    );
                }
                None => out.push_str("unknown node and type\n"),
            }
        }
        let _ = writeln!(out, "{top} lids dumped");
    }
    out
}

/// Parses an `opensm-lfts.dump` (or `ibroute` output).
pub fn parse(text: &str, file: Option<&Path>) -> Result<LftDump, SmError> {
    let mut dump = LftDump {
        format: DumpFormat::OpenSmLfts,
        file: file.map(Path::to_path_buf),
        switches: Vec::new(),
        owners: Vec::new(),
    };
    let mut first_line: rustc_hash::FxHashMap<u64, usize> = rustc_hash::FxHashMap::default();
    for (no, raw) in lines(text) {
        let err = |msg: String| SmError::parse(location(file, no), msg);
        let p = raw.trim_start();
        if p.is_empty() || p.starts_with('#') {
            continue;
        }
        if p.starts_with("Multicast mlids") {
            return Err(err(
                "this is a multicast forwarding dump; the file engine needs unicast tables (opensm-lfts.dump)".into(),
            ));
        }
        if p.starts_with("Unicast lids") {
            let sw = parse_header(p).map_err(err)?;
            if let SwitchKey::Guid(g) = sw.0 {
                if let Some(prev) = first_line.insert(g, no) {
                    return Err(err(format!("switch GUID {g:#018x} already has a table at line {prev}")));
                }
            }
            dump.switches.push(DumpSwitch {
                key: sw.0,
                lid: sw.1,
                at: location(file, no),
                range: sw.2,
                routes: Vec::new(),
            });
        } else if let Some(rest) = p.strip_prefix("0x") {
            let (route, owner) = parse_entry(rest, no as u32).map_err(err)?;
            let Some(cur) = dump.switches.last_mut() else {
                return Err(err("a forwarding entry before any 'Unicast lids ... guid 0x...' switch header".into()));
            };
            cur.routes.push(route);
            if let Some(o) = owner {
                dump.owners.push(o);
            }
        } else if !is_ignorable(p) {
            return Err(err(format!(
                "expected a 'Unicast lids ... guid 0x<GUID> ...' header or a '0x<LID> <port> ...' entry, found '{}'",
                shorten(p)
            )));
        }
    }
    Ok(dump)
}

/// What a `Unicast lids` header gives: the switch, its LID and the table's LID range.
type Header = (SwitchKey, Option<Lid>, Option<(Lid, Lid)>);

/// Switch GUID and, where given, LID and LID range of a `Unicast lids` header.
fn parse_header(p: &str) -> Result<Header, String> {
    let at = p.find(" guid 0x").ok_or_else(|| "cannot parse switch definition: no ' guid 0x<GUID>'".to_string())?;
    let (guid, after) = hex_prefix(&p[at + 8..]).ok_or("cannot parse switch GUID after ' guid 0x'")?;
    if !after.is_empty() && !after.starts_with(char::is_whitespace) {
        return Err(format!("cannot parse switch GUID: '{}'", shorten(&p[at + 8..])));
    }
    let guid = u64::try_from(guid).map_err(|_| "switch GUID does not fit in 64 bits".to_string())?;
    // `[first-last]`: the LID range of the table (decimal or 0x hex).
    let mut lid_range = None;
    if let Some(range) = p.strip_prefix("Unicast lids").map(str::trim_start).and_then(|r| r.strip_prefix('[')) {
        let inner = range.split(']').next().unwrap_or("");
        let (a, b) = inner.split_once('-').ok_or_else(|| format!("cannot parse LID range '[{}]': expected [first-last]", shorten(inner)))?;
        let lid_of = |t: &str| {
            parse_c_lid(t.trim()).ok_or_else(|| format!("LID range '[{inner}]': '{}' is not a LID (0..=0xbfff)", t.trim()))
        };
        let (first, last) = (lid_of(a)?, lid_of(b)?);
        if first > last {
            return Err(format!("LID range '[{inner}]' is empty: it starts after it ends"));
        }
        lid_range = Some((first, last));
    }
    // `of switch Lid <n>` is informative (0 when the switch has none yet);
    // `ibroute -D` headers have a DR path instead.
    let lid = match p.find(" Lid ").and_then(|i| p[i + 5..].split_whitespace().next()) {
        None => None,
        Some(t) => match parse_c_lid(t) {
            Some(0) => None,
            Some(l) => Some(l),
            None => return Err(format!("switch Lid '{t}' is not a unicast LID (1..=0xbfff, or 0 for none)")),
        },
    };
    Ok((SwitchKey::Guid(guid), lid, lid_range))
}

/// A LID written in decimal or `0x` hex, at most the top unicast LID.
fn parse_c_lid(t: &str) -> Option<Lid> {
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok()?,
        None => t.parse::<u32>().ok()?,
    };
    (v <= MAX_UNICAST_LID as u32).then_some(v as Lid)
}

/// A `<hex LID> <port> [comment]` entry (the `0x` already stripped).
fn parse_entry(rest: &str, line: u32) -> Result<(Route, Option<LidOwner>), String> {
    let bad_lid = || format!("cannot parse LID: '0x{}'", shorten(rest));
    let (lid, after) = hex_prefix(rest).ok_or_else(bad_lid)?;
    if !after.is_empty() && !after.starts_with(char::is_whitespace) {
        return Err(bad_lid());
    }
    if lid > MAX_UNICAST_LID as u128 {
        return Err(format!("LID {lid:#x} is not a unicast LID (0x0001-0xbfff)"));
    }
    let lid = lid as Lid;
    let after = after.trim_start();
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &after[digits..];
    if digits == 0 || (!tail.is_empty() && !tail.starts_with(char::is_whitespace)) {
        return Err(format!("cannot parse port of LID {lid:#06x}: '{}'", shorten(after)));
    }
    let port: u32 = after[..digits].parse().map_err(|_| format!("port '{}' is out of range", &after[..digits]))?;
    let port = match u8::try_from(port) {
        Ok(NO_PATH) => None,
        // LID 0 is reserved: a table may list it, but only as "no path".
        Ok(_) if lid == 0 => return Err("LID 0x0000 is reserved and cannot be routed (unicast LIDs are 0x0001-0xbfff)".into()),
        Ok(p) => Some(p),
        Err(_) => return Err(format!("port {port} of LID {lid:#06x} is out of range (0..=254, 255 = no path)")),
    };
    let owner = match tail.find(" portguid 0x") {
        None => None,
        Some(i) => {
            let g = &tail[i + 12..];
            let parsed = hex_prefix(g).filter(|(_, after)| {
                after.is_empty() || after.starts_with(|c: char| c.is_whitespace() || c == ':' || c == ')')
            });
            let (guid, _) = parsed.ok_or_else(|| format!("cannot parse port GUID: '{}'", shorten(g)))?;
            let guid = u64::try_from(guid).map_err(|_| "port GUID does not fit in 64 bits".to_string())?;
            Some(LidOwner { lid, port_guid: guid, line })
        }
    };
    Ok((Route { lid, port, line }, owner))
}

/// Lines OpenSM's loader skips that other tools legitimately write.
fn is_ignorable(p: &str) -> bool {
    // ibroute's column headings.
    if p.starts_with("Lid ") || p.starts_with("Port ") {
        return true;
    }
    // `%u lids dumped` (OpenSM) or `%d valid lids dumped` (ibroute).
    let digits = p.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && matches!(p[digits..].trim(), "lids dumped" | "valid lids dumped")
}

/// Leading hex digits as a number, and the rest; `None` without digits.
/// Values beyond `u64` are kept (as `u128`) so the caller can say what is wrong.
pub(crate) fn hex_prefix(s: &str) -> Option<(u128, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_hexdigit).count();
    if n == 0 || n > 32 {
        return None;
    }
    u128::from_str_radix(&s[..n], 16).ok().map(|v| (v, &s[n..]))
}

/// A piece of a line short enough for an error message.
pub(crate) fn shorten(s: &str) -> String {
    let s = s.trim_end();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lid::PortLid;
    use ibnetsim_fabric::{LinkEnd, LinkSpec, NodeKind};

    /// Two switches `sw1` (GUID …0100) and `sw0` (GUID …0001), a host on each;
    /// sw1 port 3 to sw0 port 2. `sw0` is given the numerically smaller GUID
    /// but sorts after `sw1` in OpenSM's order (byte-swapped GUID).
    fn two_switch_fabric() -> (Fabric, LidMap, ForwardingTables) {
        let mut f = Fabric::new();
        let sw1 = f.add_node(NodeKind::Switch, "sw1", 4, Some(0x0008_f105_0020_0100)).unwrap();
        let sw0 = f.add_node(NodeKind::Switch, "sw0", 4, Some(0x0008_f105_0020_0001)).unwrap();
        let h1 = f.add_node(NodeKind::Hca, "h1", 2, Some(0x0002_c903_0000_1000)).unwrap();
        let h0 = f.add_node(NodeKind::Hca, "h0", 1, Some(0x0002_c903_0000_2000)).unwrap();
        f.set_description(sw1, "MF0;sw1:IS5030/U1");
        f.set_description(h1, "node1 HCA-1");
        f.set_description(h0, "node0\tHCA-1");
        f.connect(sw1, 1, h1, 2, LinkSpec::default()).unwrap();
        f.connect(sw0, 1, h0, 1, LinkSpec::default()).unwrap();
        f.connect(sw1, 3, sw0, 2, LinkSpec::default()).unwrap();
        let e = |node, port, base| PortLid { end: LinkEnd { node, port }, base, lmc: 0 };
        let lids = LidMap::from_entries(&f, 0, vec![e(h1, 2, 1), e(h0, 1, 2), e(sw1, 0, 3), e(sw0, 0, 5)]).unwrap();
        let mut t = ForwardingTables::new(&f, lids.top_lid());
        for (lid, p1, p0) in [(1, 1, 2), (2, 3, 1), (3, 0, 2), (5, 3, 0)] {
            t.set(sw1, lid, p1);
            t.set(sw0, lid, p0);
        }
        // LID 4 is owned by nobody but routed on sw1 (a stale entry OpenSM would dump).
        t.set(sw1, 4, 3);
        (f, lids, t)
    }

    const EXPECTED: &str = "\
Unicast lids [0-5] of switch Lid 3 guid 0x0008f10500200100 ('MF0;sw1:IS5030/U1'):
0x0001 001 # Channel Adapter portguid 0x0002c90300001002: 'node1 HCA-1'
0x0002 003 # Channel Adapter portguid 0x0002c90300002001: 'node0 HCA-1'
0x0003 000 # Switch portguid 0x0008f10500200100: 'MF0;sw1:IS5030/U1'
0x0004 003 # unknown node and type
0x0005 003 # Switch portguid 0x0008f10500200001: 'sw0'
5 lids dumped
Unicast lids [0-5] of switch Lid 5 guid 0x0008f10500200001 ('sw0'):
0x0001 002 # Channel Adapter portguid 0x0002c90300001002: 'node1 HCA-1'
0x0002 001 # Channel Adapter portguid 0x0002c90300002001: 'node0 HCA-1'
0x0003 002 # Switch portguid 0x0008f10500200100: 'MF0;sw1:IS5030/U1'
0x0005 000 # Switch portguid 0x0008f10500200001: 'sw0'
5 lids dumped
";

    #[test]
    fn writes_opensm_bytes() {
        let (f, lids, t) = two_switch_fabric();
        assert_eq!(write(&f, &lids, &t), EXPECTED);
    }

    #[test]
    fn parses_what_it_writes() {
        let d = parse(EXPECTED, None).unwrap();
        assert_eq!(d.format, DumpFormat::OpenSmLfts);
        assert_eq!(d.switches.len(), 2);
        assert_eq!(d.switches[0].key, SwitchKey::Guid(0x0008_f105_0020_0100));
        assert_eq!(d.switches[0].lid, Some(3));
        let r: Vec<(Lid, Option<u8>, u32)> = d.switches[1].routes.iter().map(|r| (r.lid, r.port, r.line)).collect();
        assert_eq!(r, vec![(1, Some(2), 9), (2, Some(1), 10), (3, Some(2), 11), (5, Some(0), 12)]);
        assert_eq!(d.owners.len(), 8, "the unknown-owner line names no GUID");
        assert_eq!(d.owners[0], LidOwner { lid: 1, port_guid: 0x0002_c903_0000_1002, line: 2 });
    }

    #[test]
    fn accepts_ibroute_output() {
        let text = "\
Unicast lids [0x0-0x5] of switch Lid 1 guid 0x0000000000200000 (Switch1):
  Lid  Out   Destination
       Port     Info
0x0001 000 : (Switch portguid 0x0000000000200000: 'Switch1')
0x0005 003 : (Channel Adapter portguid 0x0000000000100004: 'Hca2')
0x0006 004 : (path #2 out of 2: portguid 0x0000000000100004)
3 valid lids dumped
";
        let d = parse(text, None).unwrap();
        assert_eq!(d.switches.len(), 1);
        assert_eq!(d.switches[0].lid, Some(1));
        let r: Vec<(Lid, Option<u8>)> = d.switches[0].routes.iter().map(|r| (r.lid, r.port)).collect();
        assert_eq!(r, vec![(1, Some(0)), (5, Some(3)), (6, Some(4))]);
        let o: Vec<(Lid, u64)> = d.owners.iter().map(|o| (o.lid, o.port_guid)).collect();
        assert_eq!(o, vec![(1, 0x20_0000), (5, 0x10_0004), (6, 0x10_0004)]);
    }

    #[test]
    fn port_255_means_no_path_and_comment_is_optional() {
        let d = parse("Unicast lids [0-2] of switch Lid 1 guid 0x1 ('x'):\n0x0002 255\n0x0001 000\n", None).unwrap();
        let r: Vec<(Lid, Option<u8>)> = d.switches[0].routes.iter().map(|r| (r.lid, r.port)).collect();
        assert_eq!(r, vec![(2, None), (1, Some(0))]);
        assert!(d.owners.is_empty());
    }

    fn err(text: &str) -> String {
        parse(text, Some(Path::new("lfts.dump"))).unwrap_err().to_string()
    }

    #[test]
    fn headers_with_impossible_lids_are_refused() {
        let e = |header: &str| parse(&format!("{header}\n0x0001 001\n"), Some(Path::new("d"))).unwrap_err().to_string();
        assert_eq!(
            e("Unicast lids [70000-5] of switch Lid 1 guid 0x1 ('x'):"),
            "d:1: LID range '[70000-5]': '70000' is not a LID (0..=0xbfff)"
        );
        assert_eq!(e("Unicast lids [5-1] of switch Lid 1 guid 0x1 ('x'):"), "d:1: LID range '[5-1]' is empty: it starts after it ends");
        assert_eq!(
            e("Unicast lids [0-5] of switch Lid 99999999999 guid 0x1 ('x'):"),
            "d:1: switch Lid '99999999999' is not a unicast LID (1..=0xbfff, or 0 for none)"
        );
        // What OpenSM and our writer print: decimal or hex ranges, Lid 0 for none.
        for ok in ["Unicast lids [0-5] of switch Lid 0 guid 0x1 ('x'):", "Unicast lids [0x0-0x5] of switch Lid 0x3 guid 0x1 (x):"] {
            let d = parse(&format!("{ok}\n0x0001 001\n"), None).unwrap();
            assert_eq!(d.switches[0].routes.len(), 1, "{ok}");
        }
        let d = parse("Unicast lids [0-5] of switch Lid 0x3 guid 0x1 (x):\n", None).unwrap();
        assert_eq!(d.switches[0].lid, Some(3));
        // A table may list LID 0 as no path (port 255).
        assert!(parse("Unicast lids [0-5] of switch Lid 1 guid 0x1 (x):\n0x0000 255\n", None).is_ok());
    }

    #[test]
    fn errors_name_file_and_line() {
        let h = "Unicast lids [0-2] of switch Lid 1 guid 0x1 ('x'):\n";
        assert_eq!(
            err("0x0001 001 # x\n"),
            "lfts.dump:1: a forwarding entry before any 'Unicast lids ... guid 0x...' switch header"
        );
        assert_eq!(err(&format!("{h}0x00g1 001\n")), "lfts.dump:2: cannot parse LID: '0x00g1 001'");
        assert_eq!(err(&format!("{h}0x0001 0a1\n")), "lfts.dump:2: cannot parse port of LID 0x0001: '0a1'");
        assert_eq!(err(&format!("{h}0x0001\n")), "lfts.dump:2: cannot parse port of LID 0x0001: ''");
        assert_eq!(
            err(&format!("{h}0x0001 256 # x\n")),
            "lfts.dump:2: port 256 of LID 0x0001 is out of range (0..=254, 255 = no path)"
        );
        assert_eq!(err(&format!("{h}0xc000 001\n")), "lfts.dump:2: LID 0xc000 is not a unicast LID (0x0001-0xbfff)");
        assert_eq!(
            err(&format!("{h}0x0001 001 # Switch portguid 0xzz: 'a'\n")),
            "lfts.dump:2: cannot parse port GUID: 'zz: 'a''"
        );
        assert_eq!(
            err("Unicast lids [0-2] of switch Lid 1\n"),
            "lfts.dump:1: cannot parse switch definition: no ' guid 0x<GUID>'"
        );
        assert_eq!(
            err("Unicast lids [0-2] guid 0x12q4 ('x'):\n"),
            "lfts.dump:1: cannot parse switch GUID: '12q4 ('x'):'"
        );
        assert_eq!(
            err(&format!("{h}\n{h}")),
            "lfts.dump:3: switch GUID 0x0000000000000001 already has a table at line 1"
        );
        assert_eq!(
            err(&format!("{h}0x0001 001\nroute 2 via 3\n")),
            "lfts.dump:3: expected a 'Unicast lids ... guid 0x<GUID> ...' header or a '0x<LID> <port> ...' entry, found 'route 2 via 3'"
        );
        assert!(err("Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x1:\n")
            .starts_with("lfts.dump:1: this is a multicast"));
    }
}
