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

pub mod ibdm;
pub mod ibnl;
pub mod netfile;
pub mod subnet_lst;

use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;

use crate::error::{FabricError, Location};
use crate::fabric::{Fabric, NodeId, PortNum};

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
    let topology = match format {
        TopologyFormat::NetFile => parse_netfile(&text, Some(path)),
        TopologyFormat::Ibdm => parse_topo(&text, Some(path), opts),
        TopologyFormat::SubnetLst => parse_subnet_lst(&text, Some(path)),
    }?;
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
    let whole = || Location { file: Some(path.to_path_buf()), line: None };
    read_text_file(path).map_err(|e| match e {
        TextFileError::Io(source) => FabricError::Io { path: path.to_path_buf(), source },
        TextFileError::NotRegular => FabricError::parse(whole(), "not a regular file (a directory, device or pipe); give a topology file"),
        TextFileError::TooLarge(n) => FabricError::parse(whole(), format!("{n} bytes is larger than any topology file ({MAX_TEXT_BYTES} at most)")),
    })
}

fn detect_format(path: &Path, text: &str) -> Result<TopologyFormat, FabricError> {
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
