//! Reading and writing topology files: the formats real InfiniBand tools use to
//! describe a fabric, turned into a [`Fabric`] plus the LIDs the file states.
//!
//! * [`netfile`]: `ibnetdiscover` output and the ibsim "net" subset of it
//!   (linux-rdma/ibsim `ibsim/sim_net.c`, infiniband-diags `ibnetdiscover`).
//!   Read and written.
//! * [`ibdm`]: IBDM `.topo` cabling files over `.ibnl` system netlists
//!   (nmorey/ibutils `ibdm/doc/ibdm-topo-file.pod`, `ibdm-ibnl-file.pod`,
//!   `ibdm/ibdm/Fabric.cpp`, `SysDef.cpp`). Read only. The netlists are in
//!   [`ibnl`], which also embeds six common system types.
//! * [`subnet_lst`]: OpenSM's `subnet.lst` link dump, as IBDM parses it
//!   (`IBFabric::parseSubnetLine`). Read only.
//!
//! # Link width and speed when a file does not say
//!
//! None of these formats records cable length, so every link gets
//! [`LinkSpec::default`](crate::LinkSpec::default)'s 1 m at 5 ns/m. Width and speed follow each tool:
//!
//! * net files: a port with neither `w=` nor an ibnetdiscover `4xQDR` comment
//!   gets [`LinkSpec::default`](crate::LinkSpec::default) (1x SDR), the papers' baseline link; a width
//!   without a speed keeps the width at SDR.
//! * `.topo`: a tag on the cable line (`-4X->`, `-8X-5G->`) wins; otherwise the
//!   tags that the `.ibnl` netlists put on the two ports (lowest level first,
//!   the slower of the two ends if they differ); otherwise IBDM's own default,
//!   4x SDR (`IBFabric::parseTopology`). Links inside a system use the tag on
//!   their netlist line, then the same port tags, then 4x SDR.
//! * `subnet.lst`: width from `PHY=`, speed from the optional `SPD=`, else SDR
//!   as IBDM does.

pub mod cable_lengths;
pub mod ibdm;
pub mod ibnl;
pub mod netfile;
pub mod subnet_lst;

use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;

use crate::error::{FabricError, Location};
use crate::fabric::{Fabric, NodeId, PortNum};
use crate::rate::{LinkSpeed, LinkWidth};

pub use ibdm::parse_topo;
pub use netfile::{parse_netfile, write_netfile};
pub use subnet_lst::parse_subnet_lst;

/// A fabric read from a file, with the addresses the file gives.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Nodes and links.
    pub fabric: Fabric,
    /// `(node, port, base LID, LMC)` for every port whose LID the file states,
    /// in file order. A switch's LID is on its port 0. Files that give no LMC
    /// (subnet.lst) report LMC 0.
    pub lids: Vec<(NodeId, PortNum, u16, u8)>,
    /// Which format the file was in.
    pub format: TopologyFormat,
}

/// The topology file formats ibnetsim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopologyFormat {
    /// ibnetdiscover output or an ibsim net file.
    NetFile,
    /// An IBDM `.topo` cabling file (with `.ibnl` system definitions).
    Ibdm,
    /// OpenSM `subnet.lst`.
    SubnetLst,
}

/// Options for [`read_topology_with`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Extra directories of `.ibnl` files for `.topo` files. They are searched
    /// after the `.topo` file's own directory and its `ibnl/` subdirectory, and
    /// before the built-in library.
    pub ibnl_dirs: Vec<PathBuf>,
    /// Width of links whose file gives none (otherwise a net file's 1x, an
    /// IBDM file's 4x).
    pub link_width: Option<LinkWidth>,
    /// Speed of links whose file gives none (otherwise SDR).
    pub link_speed: Option<LinkSpeed>,
    /// Length of every cable, in metres (no topology format carries one;
    /// otherwise 1 m).
    pub cable_length_m: Option<f64>,
    /// A file of per-cable lengths that override the others: lines of
    /// `NODE PORT LENGTH_M` (the node by name or GUID, either end of the
    /// cable), `#` comments.
    pub cable_lengths: Option<PathBuf>,
}

/// Reads a topology file, telling its format from the name and content.
pub fn read_topology(path: &Path) -> Result<Topology, FabricError> {
    read_topology_with(path, &ReadOptions::default())
}

/// Reads a topology file with options (extra `.ibnl` directories).
///
/// `.topo` is IBDM, `.lst` is OpenSM `subnet.lst`; any other name is sniffed:
/// a first line starting with `{` is subnet.lst, `Switch`/`Ca`/`Hca`/
/// `vendid=`-style lines make a net file, and `X -> T N P` cable lines IBDM.
pub fn read_topology_with(path: &Path, opts: &ReadOptions) -> Result<Topology, FabricError> {
    let text = read_text(path)?;
    let format = detect_format(path, &text)?;
    let mut topology = match format {
        TopologyFormat::NetFile => netfile::parse_netfile_with(&text, Some(path), opts),
        TopologyFormat::Ibdm => parse_topo(&text, Some(path), opts),
        TopologyFormat::SubnetLst => parse_subnet_lst(&text, Some(path)),
    }?;
    if let Some(m) = opts.cable_length_m {
        let all: Vec<_> = (0..topology.fabric.num_links()).map(|i| crate::fabric::LinkId(i as u32)).collect();
        for id in all {
            topology.fabric.set_cable_length(id, m).map_err(|e| FabricError::param("cable_length_m", e))?;
        }
    }
    if let Some(file) = &opts.cable_lengths {
        cable_lengths::apply(&mut topology.fabric, file)?;
    }
    if topology.fabric.num_nodes() == 0 {
        return Err(FabricError::parse(
            Location { file: Some(path.to_path_buf()), line: None },
            "no nodes: the file is empty, holds only comments, or (subnet.lst) only links that are down",
        ));
    }
    Ok(topology)
}

/// Largest topology text read: the biggest real fabric dumps are tens of
/// megabytes, so anything larger is not one (e.g. `/dev/zero`).
pub const MAX_TEXT_BYTES: u64 = 1 << 30;

/// Why [`read_text_file`] read nothing.
#[derive(Debug)]
pub enum TextFileError {
    /// Opening or reading failed.
    Io(std::io::Error),
    /// A directory, device or pipe: a FIFO would block, a device never end.
    NotRegular,
    /// Larger than [`MAX_TEXT_BYTES`] (the size in bytes).
    TooLarge(u64),
}

impl TextFileError {
    /// What went wrong, for a file that should have been `what` ("a trace
    /// file"); callers add the path in their own error type.
    pub fn message(&self, what: &str) -> String {
        match self {
            TextFileError::Io(e) => e.to_string(),
            TextFileError::NotRegular => format!("not a regular file (a directory, device or pipe); give {what}"),
            TextFileError::TooLarge(n) => format!("{n} bytes is larger than {what} can be ({MAX_TEXT_BYTES} at most)"),
        }
    }
}

/// Reads a whole text file of the kinds the tools read (topologies, tables):
/// a regular file of at most [`MAX_TEXT_BYTES`]. Bytes that are not UTF-8
/// (node descriptions come off the wire as bytes) are replaced, not refused:
/// the parser then names the line if it matters.
pub fn read_text_file(path: &Path) -> Result<String, TextFileError> {
    use std::io::Read;
    // Checked before opening too: opening a FIFO waits for a writer.
    if !std::fs::metadata(path).map_err(TextFileError::Io)?.is_file() {
        return Err(TextFileError::NotRegular);
    }
    let file = std::fs::File::open(path).map_err(TextFileError::Io)?;
    let meta = file.metadata().map_err(TextFileError::Io)?;
    if !meta.is_file() {
        return Err(TextFileError::NotRegular);
    }
    if meta.len() > MAX_TEXT_BYTES {
        return Err(TextFileError::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_TEXT_BYTES).read_to_end(&mut bytes).map_err(TextFileError::Io)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// [`read_text_file`] for a topology or system file, naming it in the error.
pub(crate) fn read_text(path: &Path) -> Result<String, FabricError> {
    read_text_file(path).map_err(|e| match e {
        TextFileError::Io(source) => FabricError::Io { path: path.to_path_buf(), source },
        e => FabricError::parse(Location { file: Some(path.to_path_buf()), line: None }, e.message("a topology file")),
    })
}

fn detect_format(path: &Path, text: &str) -> Result<TopologyFormat, FabricError> {
    // Before the extension: OpenSM names its dumps `*.dump`, `*.fdbs` or
    // nothing, but a user may have renamed one, and these contents cannot be
    // a topology whatever the name. Without this, a `Switch: guid ...` line
    // reads as a net file's `Switch` and the error talks about ports.
    if let Some((line, kind)) = other_opensm_file(text) {
        return Err(FabricError::parse(
            Location::new(Some(path.to_path_buf()), line),
            format!(
                "this is {}, not a topology: {}. A topology is an ibnetdiscover/ibsim net file, \
                 an IBDM .topo file or an OpenSM subnet.lst",
                kind.what(),
                kind.use_instead()
            ),
        ));
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("topo") => return Ok(TopologyFormat::Ibdm),
        Some("lst") => return Ok(TopologyFormat::SubnetLst),
        Some("ibnl") => {
            return Err(FabricError::parse(
                Location { file: Some(path.to_path_buf()), line: None },
                "an .ibnl file defines a system type, not a fabric; load a .topo file that uses it",
            ))
        }
        _ => {}
    }
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('{') {
            return Ok(TopologyFormat::SubnetLst);
        }
        let word: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        if netfile::is_netfile_keyword(&word) || t.starts_with('[') {
            return Ok(TopologyFormat::NetFile);
        }
        if t.contains("->") || text.lines().skip(i + 1).take(4).any(|l| l.contains("->")) {
            return Ok(TopologyFormat::Ibdm);
        }
        break;
    }
    Err(FabricError::parse(
        Location { file: Some(path.to_path_buf()), line: None },
        "cannot tell the topology format: expected an IBDM .topo file, an OpenSM subnet.lst, \
         or an ibnetdiscover/ibsim net file (lines such as 'Switch 8 \"sw1\"')",
    ))
}

/// Files OpenSM (or infiniband-diags) writes beside a topology, which people
/// give as one by mistake. Each is recognised by the lines its writer prints
/// (opensm/osm_dump.c, osm_db_files.c, osm_ucast_updn.c; infiniband-diags
/// ibroute and dump_fts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenSmFile {
    /// `opensm-lfts.dump` (`dump_ucast_lfts`), or `ibroute`/`dump_fts` output:
    /// `Unicast lids [0-N] of switch Lid L guid 0x... ('desc'):`.
    Lfts,
    /// `opensm.fdbs` (`dump_ucast_routes`): `dump_ucast_routes: Switch 0x...`.
    UcastRoutes,
    /// `opensm.mcfdbs` (`dump_mcast_routes`): `Switch 0x...` then
    /// `LID    : Out Port(s)`; or `ibroute -M`: `Multicast mlids [...]`.
    Mcast,
    /// `opensm-lid-matrix.dump` (`dump_lid_matrix`): `Switch: guid 0x...`.
    LidMatrix,
    /// `opensm-sl2vl.dump` (`dump_sl2vl_tbl`):
    /// `Switch 0x..., base LID 3, "desc"` then `#in out : 0  1 ...`.
    Sl2Vl,
    /// `guid2lid` (OpenSM's LID database, `osm_db_store`): `0x<GUID> 0x<min LID> 0x<max LID>`.
    Guid2Lid,
    /// `opensm-updn-roots.dump` or a `root_guid_file`: one GUID a line.
    RootGuids,
}

impl OpenSmFile {
    /// What the file is, as an article and a name.
    pub fn what(self) -> &'static str {
        match self {
            OpenSmFile::Lfts => "an OpenSM LFT dump (opensm-lfts.dump, or ibroute/dump_fts output)",
            OpenSmFile::UcastRoutes => "an OpenSM unicast route listing (opensm.fdbs)",
            OpenSmFile::Mcast => "a multicast forwarding dump (opensm.mcfdbs, or ibroute -M output)",
            OpenSmFile::LidMatrix => "an OpenSM hop-count dump (opensm-lid-matrix.dump)",
            OpenSmFile::Sl2Vl => "an OpenSM SL2VL table dump (opensm-sl2vl.dump)",
            OpenSmFile::Guid2Lid => "OpenSM's LID assignment file (guid2lid)",
            OpenSmFile::RootGuids => "a list of up*/down* root GUIDs (opensm-updn-roots.dump or a root_guid_file)",
        }
    }

    /// What to do with it instead.
    pub fn use_instead(self) -> &'static str {
        match self {
            OpenSmFile::Lfts | OpenSmFile::UcastRoutes => {
                "give it with --lfts (check) or --lfts-file (route --engine file), after the topology it was dumped from"
            }
            OpenSmFile::Mcast => "ibnetsim does not read multicast tables; it computes them from the topology",
            OpenSmFile::LidMatrix => "give it with --lid-matrix (check), after the topology of the same run",
            OpenSmFile::Sl2Vl => "give it with --sl2vl (check), after the topology of the same run",
            OpenSmFile::Guid2Lid => "give it with --guid2lid (check or route), after the topology of the same run",
            OpenSmFile::RootGuids => "give it with --root FILE (route or check --engine updn)",
        }
    }
}

/// Recognises [`OpenSmFile`]s by content: the 1-based line that tells, and
/// the kind. Only the first meaningful lines are looked at, and each test
/// asks for a shape no topology format has (see the tests for the samples).
pub fn other_opensm_file(text: &str) -> Option<(usize, OpenSmFile)> {
    let mut meaningful =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    // The SL2VL dump's column heading and guid2lid have no comments, so a
    // `#` line can only be a comment of a root GUID file or a topology.
    let (no, first) = meaningful.clone().find(|(_, l)| !l.starts_with('#'))?;
    let after_first = meaningful.clone().skip_while(|&(n, _)| n <= no).map(|(_, l)| l).next();
    if first.starts_with("Unicast lids") {
        return Some((no, OpenSmFile::Lfts));
    }
    if first.starts_with("Multicast mlids") {
        return Some((no, OpenSmFile::Mcast));
    }
    if first.starts_with("dump_ucast_routes: Switch 0x") {
        return Some((no, OpenSmFile::UcastRoutes));
    }
    if first.starts_with("Switch: guid 0x") {
        return Some((no, OpenSmFile::LidMatrix));
    }
    let node_line = ["Switch 0x", "Channel Adapter 0x", "Router 0x"].iter().any(|p| first.starts_with(p));
    if node_line && first.contains(", base LID ") {
        return Some((no, OpenSmFile::Sl2Vl));
    }
    if first.starts_with("Switch 0x") && after_first.is_some_and(|l| l.starts_with("LID") && l.contains("Out Port")) {
        return Some((no, OpenSmFile::Mcast));
    }
    let numbers: Vec<&str> = first.split('#').next().unwrap_or("").split_whitespace().collect();
    let is_hex = |t: &str| t.len() > 2 && (t.starts_with("0x") || t.starts_with("0X")) && t[2..].bytes().all(|b| b.is_ascii_hexdigit());
    match numbers.as_slice() {
        [g, a, b] if is_hex(g) && is_hex(a) && is_hex(b) => Some((no, OpenSmFile::Guid2Lid)),
        [g, ..] if is_hex(g) => {
            // Every line a number first, then anything (OpenSM's parse_node_map
            // ignores the rest of a root line), or a comment.
            let number = |t: &str| is_hex(t) || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
            let all = meaningful.all(|(_, l)| l.starts_with('#') || l.split_whitespace().next().is_some_and(number));
            all.then_some((no, OpenSmFile::RootGuids))
        }
        _ => None,
    }
}

/// Source file of a parse, for building [`Location`]s.
#[derive(Debug, Clone, Default)]
pub(crate) struct Src {
    pub file: Option<PathBuf>,
}

impl Src {
    pub fn new(file: Option<&Path>) -> Self {
        Src { file: file.map(Path::to_path_buf) }
    }
    pub fn at(&self, line: usize) -> Location {
        Location::new(self.file.clone(), line)
    }
    pub fn err(&self, line: usize, msg: impl Into<String>) -> FabricError {
        FabricError::parse(self.at(line), msg)
    }
}

/// Node GUIDs for nodes that a file gives none: the same scheme as
/// [`Fabric::add_node`] (index-derived, low byte free for CA ports), skipping
/// every GUID the file does give so that the two can never collide.
pub(crate) fn fill_guids(given: &[Option<u64>]) -> Vec<u64> {
    const BASE: u64 = 0x0002_c903_0000_0000;
    let taken: FxHashSet<u64> = given.iter().flatten().copied().collect();
    let mut used = FxHashSet::default();
    given
        .iter()
        .enumerate()
        .map(|(i, g)| match g {
            Some(g) => *g,
            None => {
                let mut g = BASE + ((i as u64 + 1) << 8);
                while taken.contains(&g) || used.contains(&g) {
                    g += 1 << 8;
                }
                used.insert(g);
                g
            }
        })
        .collect()
}

/// Parses an unsigned number as C's `strtoul(s, NULL, 0)` would for well-formed
/// input: `0x` hex, otherwise decimal.
pub(crate) fn parse_c_number(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_guids_avoid_given_ones() {
        let base = 0x0002_c903_0000_0000u64;
        let g = fill_guids(&[None, Some(base + (2 << 8)), None]);
        assert_eq!(g[0], base + (1 << 8));
        assert_eq!(g[1], base + (2 << 8));
        // index 2 would get base + 3<<8, which is free
        assert_eq!(g[2], base + (3 << 8));
        let g = fill_guids(&[Some(base + (2 << 8)), None]);
        assert_eq!(g, vec![base + (2 << 8), base + (3 << 8)]);
    }

    #[test]
    fn c_numbers() {
        assert_eq!(parse_c_number("0x1f"), Some(31));
        assert_eq!(parse_c_number("17"), Some(17));
        assert_eq!(parse_c_number("x"), None);
    }

    #[test]
    fn files_that_are_not_fabrics_are_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("ibnetsim-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in [("empty.topo", ""), ("blank.lst", "  \n\t\n"), ("nothing.topo", "# nothing\n")] {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            let e = read_topology(&p).unwrap_err().to_string();
            assert_eq!(e, format!("{}: no nodes: the file is empty, holds only comments, or (subnet.lst) only links that are down", p.display()));
        }
        // Without a telling extension, an empty file has no format either.
        let p = dir.join("comments.net");
        std::fs::write(&p, "# nothing\n").unwrap();
        assert!(read_topology(&p).unwrap_err().to_string().contains("cannot tell the topology format"));
        let e = read_topology(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: not a regular file (a directory, device or pipe); give a topology file");
        let e = read_topology(&dir).unwrap_err().to_string();
        assert!(e.ends_with("not a regular file (a directory, device or pipe); give a topology file"), "{e}");
        // A FIFO is refused before it is opened: opening one waits for a writer.
        let fifo = dir.join("fabric.topo");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            let e = read_topology(&fifo).unwrap_err().to_string();
            assert!(e.ends_with("fabric.topo: not a regular file (a directory, device or pipe); give a topology file"), "{e}");
        }
        // A description that is not UTF-8 is read, the bad byte replaced.
        let p = dir.join("latin1.net");
        std::fs::write(&p, b"Switch 4 \"s\" # \"caf\xe9\"\n[1] \"h\"[1]\n\nCa 1 \"h\"\n[1] \"s\"[1]\n").unwrap();
        let t = read_topology(&p).unwrap();
        let s = t.fabric.node_by_name("s").unwrap();
        assert_eq!(t.fabric.node(s).description, "caf\u{fffd}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// One sample of each file, line by line as its writer's printf formats
    /// give it (opensm/osm_dump.c, osm_db_pack.c + osm_db_files.c,
    /// osm_ucast_updn.c `dump_roots`; infiniband-diags dump_fts.c).
    const OPENSM_SAMPLES: [(&str, &str, OpenSmFile, usize); 10] = [
        // dump_ucast_lfts: "Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64 " ('%s'):"
        (
            "opensm-lfts.dump",
            "Unicast lids [0-3] of switch Lid 3 guid 0x0002c90300000100 ('s'):\n\
             0x0001 001 # Channel Adapter portguid 0x0002c90300000201: 'h0'\n3 lids dumped\n",
            OpenSmFile::Lfts,
            1,
        ),
        // dump_fts: "Unicast lids [0x%x-0x%x] of switch %s guid 0x%016" PRIx64 " (%s):", then headings.
        (
            "fts.txt",
            "Unicast lids [0x0-0x3] of switch Lid 3 guid 0x0002c90300000100 (s):\n  Lid  Out   Destination\n",
            OpenSmFile::Lfts,
            1,
        ),
        // dump_ucast_routes: "dump_ucast_routes: Switch 0x%016" PRIx64 "\nLID    : Port : Hops : Optimal\n"
        (
            "opensm.fdbs",
            "dump_ucast_routes: Switch 0x0002c90300000100\nLID    : Port : Hops : Optimal\n0x0001 : 001  : 01   : yes\n",
            OpenSmFile::UcastRoutes,
            1,
        ),
        // dump_mcast_routes: "\nSwitch 0x%016" PRIx64 "\nLID    : Out Port(s)\n", "0x%04X :", " 0x%03X "
        (
            "opensm.mcfdbs",
            "\nSwitch 0x0002c90300000100\nLID    : Out Port(s)\n0xC000 : 0x001  0x002 \n",
            OpenSmFile::Mcast,
            2,
        ),
        // dump_lid_matrix: "Switch: guid 0x%016" PRIx64, then "0x%04x:" " %02x"... " # portguid 0x%016" PRIx64
        (
            "opensm-lid-matrix.dump",
            "Switch: guid 0x0002c90300000100\n0x0001: 01 00 02 # portguid 0x0002c90300000201\n",
            OpenSmFile::LidMatrix,
            1,
        ),
        // dump_sl2vl_tbl: "%s 0x%016" PRIx64 ", base LID %d, \"%s\"", heading, separator, "%-3d %-3d :%s"
        (
            "opensm-sl2vl.dump",
            "Channel Adapter 0x0002c90300000201, base LID 1, \"h0 HCA-1\"\n\
             #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n\
             #--------------------------------------------------------\n\
             0   0   : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 7 \n\
             #--------------------------------------------------------\n\n",
            OpenSmFile::Sl2Vl,
            1,
        ),
        ("sl2vl.topo", "Switch 0x0002c90300000100, base LID 3, \"s\"\n", OpenSmFile::Sl2Vl, 1),
        // osm_db_store: "%s %s\n\n" of "0x%016" PRIx64 and "0x%04x 0x%04x"
        (
            "guid2lid",
            "0x0002c90300000100 0x0003 0x0003\n\n0x0002c90300000201 0x0004 0x0007\n\n",
            OpenSmFile::Guid2Lid,
            1,
        ),
        // dump_roots: "0x%" PRIx64 "\n"
        ("opensm-updn-roots.dump", "0x2c90300000100\n0x2c90300000200\n", OpenSmFile::RootGuids, 1),
        // A hand-written root_guid_file: comments, and text after a GUID, as parse_node_map allows.
        ("roots", "# spines\n0x0002c90300000100 spine-1\n\n0x0002c90300000200 # spine-2\n", OpenSmFile::RootGuids, 2),
    ];

    #[test]
    fn opensm_files_given_as_topologies_are_named() {
        for (name, text, kind, line) in OPENSM_SAMPLES {
            assert_eq!(other_opensm_file(text), Some((line, kind)), "{name}");
        }
        // Topologies are not taken for them.
        for text in [
            "Switch\t24 \"S-0002c90300000100\"\t\t# \"s\" base port 0 lid 3 lmc 0\n[1]\t\"H-1\"[1]\n",
            "vendid=0x2c9\ndevid=0xbd36\n",
            "{ SW Ports:08 SystemGUID:0002c90300000100 ...",
            "MTS800 S1\n  P1 -> Cougar H-1 P1\n",
            "# only a comment\n",
            "0x0002c90300000100 spine\nSwitch 8 \"s\"\n",
        ] {
            assert_eq!(other_opensm_file(text), None, "{text}");
        }
        let dir = std::env::temp_dir().join(format!("ibnetsim-opensm-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text, kind, line) in OPENSM_SAMPLES {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            let e = read_topology(&p).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "{}:{line}: this is {}, not a topology: {}. A topology is an ibnetdiscover/ibsim net file, \
                     an IBDM .topo file or an OpenSM subnet.lst",
                    p.display(),
                    kind.what(),
                    kind.use_instead()
                )
            );
        }
        // The message in full, once.
        let e = read_topology(&dir.join("opensm-lid-matrix.dump")).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "opensm-lid-matrix.dump:1: this is an OpenSM hop-count dump (opensm-lid-matrix.dump), not a topology: \
                 give it with --lid-matrix (check), after the topology of the same run. A topology is an \
                 ibnetdiscover/ibsim net file, an IBDM .topo file or an OpenSM subnet.lst"
            ),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn format_detection_by_content() {
        let p = Path::new("whatever");
        assert_eq!(detect_format(p, "# c\n\nSwitch 8 \"a\"\n").unwrap(), TopologyFormat::NetFile);
        assert_eq!(detect_format(p, "vendid=0x2c9\n").unwrap(), TopologyFormat::NetFile);
        assert_eq!(detect_format(p, "{ SW Ports:08 ...").unwrap(), TopologyFormat::SubnetLst);
        assert_eq!(detect_format(p, "MTS800 S1\n  P1 -> Cougar H-1 P1\n").unwrap(), TopologyFormat::Ibdm);
        assert_eq!(detect_format(Path::new("a.topo"), "").unwrap(), TopologyFormat::Ibdm);
        let e = detect_format(p, "hello world\n").unwrap_err().to_string();
        assert!(e.starts_with("whatever: cannot tell the topology format"), "{e}");
    }
}
