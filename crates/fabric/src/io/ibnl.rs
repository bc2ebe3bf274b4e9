//! IBDM system netlists (`.ibnl`): how the switch ASICs and HCAs inside one
//! product (a 36-port switch box, a 648-port director, an HCA card) are wired
//! to each other and to the product's front-panel connectors.
//!
//! Format: nmorey/ibutils `ibdm/doc/ibdm-ibnl-file.pod`; semantics follow
//! `ibdm/ibdm/SysDef.cpp` (`IBSystemsCollection::makeSystem` and friends):
//!
//! ```text
//! SYSTEM LEAF,LEAF:4x            board definition, names local to this file
//! NODE SW 36 MT48436 U1          a device instance ...
//!    1 -10G-> P1                 ... whose port 1 is the board's connector P1
//! TOPSYSTEM MIS5600,IS5600       the product, its names visible to .topo files
//! SUBSYSTEM LEAF leaf1           a board instance ...
//!    P1 -> L1/P1                 ... board connector P1 is product connector L1/P1
//!    P19 -10G-> spine1 P1        ... board connector P19 cabled to board spine1's P1
//! ```
//!
//! A product is flattened into a `Flat`: its nodes named by instance path
//! (`leaf1/U1`), the links inside it, and a map from each front-panel
//! connector to a node port. As in IBDM, a `CFG:` modifier `board=R` (or `X`,
//! `Removed`) drops a board and everything cabled to it, and `board=12x`
//! selects the board definition named `LEAF:12x`. Connections whose far end
//! is a connector that the chosen board variant does not have are dropped
//! (the netlist may list ports of every variant); naming a connector no
//! variant has is an error. IBDM's `name=attribute` lines are accepted and
//! ignored.
//!
//! Six netlists from ibutils are built in (see `ibnl/NOTICE`): MTS800
//! (Buffalo), Cougar/MT23108, MTS2400, MTS3600, MTS14400 and MIS5600.

use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{read_text, ReadOptions};
use crate::error::{FabricError, Location};
use crate::fabric::{NodeKind, PortNum};
use crate::rate::{LinkSpec, LinkSpeed, LinkWidth};

/// The netlists shipped inside the crate: (file name, text).
pub const BUILTIN_IBNL: [(&str, &str); 6] = [
    ("Buffalo.ibnl", include_str!("../../ibnl/Buffalo.ibnl")),
    ("Cougar.ibnl", include_str!("../../ibnl/Cougar.ibnl")),
    ("MTS2400-24.ibnl", include_str!("../../ibnl/MTS2400-24.ibnl")),
    ("MTS3600.ibnl", include_str!("../../ibnl/MTS3600.ibnl")),
    ("MTS14400.ibnl", include_str!("../../ibnl/MTS14400.ibnl")),
    ("MIS5600.ibnl", include_str!("../../ibnl/MIS5600.ibnl")),
];

/// Boards nest at most this deep; deeper means a SUBSYSTEM includes itself.
const MAX_DEPTH: usize = 16;

/// Width and speed tags of one netlist or cable line (`-4x-10G->`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tags {
    /// `1x`, `4x`, `8x`, `12x` (any case).
    pub width: Option<LinkWidth>,
    /// `2.5G`, `5G`, `10G` (and the later lane rates or generation names).
    pub speed: Option<LinkSpeed>,
}

impl Tags {
    /// Each field from `self`, else from `other`.
    pub(crate) fn or(self, other: Tags) -> Tags {
        Tags { width: self.width.or(other.width), speed: self.speed.or(other.speed) }
    }

    /// The slower of two ends, field by field, where both say something.
    pub(crate) fn slower(a: Tags, b: Tags) -> Tags {
        fn pick<T: Ord>(x: Option<T>, y: Option<T>) -> Option<T> {
            match (x, y) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }
        }
        Tags { width: pick(a.width, b.width), speed: pick(a.speed, b.speed) }
    }

    /// A link spec with IBDM's defaults (4x, SDR) for what is still unknown.
    pub(crate) fn spec(self) -> LinkSpec {
        LinkSpec::new(self.width.unwrap_or(LinkWidth::X4), self.speed.unwrap_or(LinkSpeed::Sdr))
    }
}

/// Splits a connection line `<local> -[<tag>-[<tag>-]]> <far end...>` into the
/// local port name, the tags, and the far-end tokens.
pub(crate) fn split_arrow(line: &str) -> Result<(&str, Tags, Vec<&str>), String> {
    let arrow = line.find("->").ok_or("expected '->'")?;
    let left = line[..arrow].trim_end();
    let right: Vec<&str> = line[arrow + 2..].split_whitespace().collect();
    let toks: Vec<&str> = left.split_whitespace().collect();
    let (port, tag_tok) = match toks.as_slice() {
        [p, t] if t.starts_with('-') => (*p, &t[1..]),
        [p] => match p.strip_suffix('-') {
            // `P1 ->` has its opening dash in the arrow itself; `P1-` never occurs.
            Some(_) => return Err(format!("expected a space between the port '{p}' and '->'")),
            None => (*p, ""),
        },
        [] => return Err("expected a port name before '->'".into()),
        _ => return Err(format!("expected '<port> -> ...', found '{left} ->'")),
    };
    let mut tags = Tags::default();
    for t in tag_tok.split('-').filter(|t| !t.is_empty()) {
        if t.ends_with(['x', 'X']) {
            let w: LinkWidth = t.parse().map_err(|e: String| format!("bad width tag '-{t}-': {e}"))?;
            tags.width = Some(w);
        } else {
            let s: LinkSpeed = t.parse().map_err(|e: String| format!("bad speed tag '-{t}-': {e}"))?;
            tags.speed = Some(s);
        }
    }
    Ok((port, tags, right))
}

/// One netlist file.
#[derive(Debug)]
pub(crate) struct IbnlFile {
    /// Where it came from, for messages (`<built-in>/X.ibnl` for embedded ones).
    path: PathBuf,
    systems: Vec<SysDef>,
    /// Every SYSTEM and TOPSYSTEM name of the file (board lookups are file-local).
    by_name: FxHashMap<String, usize>,
}

#[derive(Debug)]
struct SysDef {
    names: Vec<String>,
    top: bool,
    insts: Vec<Inst>,
    inst_by_name: FxHashMap<String, usize>,
    /// Instance port to instance port.
    conns: Vec<Conn>,
    /// Instance port to a connector of this (sub)system.
    connectors: Vec<ConnectorDef>,
}

#[derive(Debug)]
struct Inst {
    name: String,
    kind: InstKind,
    line: usize,
}

#[derive(Debug)]
enum InstKind {
    /// The device name (`MT48436`) is not part of the fabric model and is not kept.
    Node {
        kind: NodeKind,
        num_ports: u8,
    },
    Board {
        master: String,
    },
}

#[derive(Debug)]
struct Conn {
    from: usize,
    from_port: String,
    to_name: String,
    to: usize,
    to_port: String,
    tags: Tags,
    line: usize,
}

#[derive(Debug)]
struct ConnectorDef {
    name: String,
    inst: usize,
    port: String,
    tags: Tags,
    line: usize,
}

/// Parses one `.ibnl` file; `path` names it in messages.
pub(crate) fn parse_ibnl(text: &str, path: PathBuf) -> Result<IbnlFile, FabricError> {
    let err = |line: usize, msg: String| FabricError::parse(Location::new(Some(path.clone()), line), msg);
    let mut systems: Vec<SysDef> = Vec::new();
    let mut by_name: FxHashMap<String, usize> = FxHashMap::default();
    let mut cur_inst: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        match first {
            "SYSTEM" | "TOPSYSTEM" => {
                let names: Vec<String> =
                    t[first.len()..].split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
                if names.is_empty() || names.iter().any(|n| n.contains(char::is_whitespace)) {
                    return Err(err(no, format!("expected '{first} <name>[,<alias>...]'")));
                }
                for n in &names {
                    if by_name.insert(n.clone(), systems.len()).is_some() {
                        return Err(err(no, format!("system '{n}' is defined twice in this file")));
                    }
                }
                systems.push(SysDef {
                    names,
                    top: first == "TOPSYSTEM",
                    insts: Vec::new(),
                    inst_by_name: FxHashMap::default(),
                    conns: Vec::new(),
                    connectors: Vec::new(),
                });
                cur_inst = None;
            }
            "NODE" | "SUBSYSTEM" => {
                let Some(sys) = systems.last_mut() else {
                    return Err(err(no, format!("{first} before any SYSTEM or TOPSYSTEM line")));
                };
                let toks: Vec<&str> = t.split_whitespace().collect();
                let (name, kind) = if first == "NODE" {
                    let [_, ty, n, _device, name] = toks.as_slice() else {
                        return Err(err(no, "expected 'NODE <SW|CA|HCA> <ports> <device> <name>'".into()));
                    };
                    let kind = match *ty {
                        "SW" => NodeKind::Switch,
                        "CA" | "HCA" => NodeKind::Hca,
                        _ => return Err(err(no, format!("unknown node type '{ty}': expected SW, CA or HCA"))),
                    };
                    let num_ports = n
                        .parse::<u8>()
                        .ok()
                        .filter(|&p| p > 0)
                        .ok_or_else(|| err(no, format!("bad number of ports '{n}': expected 1..=255")))?;
                    (*name, InstKind::Node { kind, num_ports })
                } else {
                    let [_, master, name] = toks.as_slice() else {
                        return Err(err(no, "expected 'SUBSYSTEM <board type> <instance name>'".into()));
                    };
                    (*name, InstKind::Board { master: master.to_string() })
                };
                if sys.inst_by_name.insert(name.to_string(), sys.insts.len()).is_some() {
                    return Err(err(no, format!("instance '{name}' is defined twice in system '{}'", sys.names[0])));
                }
                sys.insts.push(Inst { name: name.to_string(), kind, line: no });
                cur_inst = Some(sys.insts.len() - 1);
            }
            _ if t.contains("->") => {
                let (Some(sys), Some(inst)) = (systems.last_mut(), cur_inst) else {
                    return Err(err(no, "connection line outside a NODE or SUBSYSTEM section".into()));
                };
                let (port, tags, right) = split_arrow(t).map_err(|m| err(no, m))?;
                if let InstKind::Node { num_ports, .. } = sys.insts[inst].kind {
                    node_port(port, num_ports).map_err(|m| err(no, m))?;
                }
                match right.as_slice() {
                    [connector] => sys.connectors.push(ConnectorDef {
                        name: connector.to_string(),
                        inst,
                        port: port.to_string(),
                        tags,
                        line: no,
                    }),
                    [to, to_port] => sys.conns.push(Conn {
                        from: inst,
                        from_port: port.to_string(),
                        to_name: to.to_string(),
                        to: usize::MAX,
                        to_port: to_port.to_string(),
                        tags,
                        line: no,
                    }),
                    _ => {
                        return Err(err(
                            no,
                            "expected '<port> -> <connector>' or '<port> -> <instance> <instance port>'".into(),
                        ))
                    }
                }
            }
            // IBDM's per-node attributes (`U1=isChaBma`) do not affect the fabric.
            _ if t.contains('=') && !t.contains(char::is_whitespace) && !systems.is_empty() => {}
            _ => {
                return Err(err(
                    no,
                    format!(
                        "unrecognised line '{t}': expected SYSTEM, TOPSYSTEM, NODE, SUBSYSTEM, a \
                         '<port> -> ...' connection or a '<node>=<attribute>' line"
                    ),
                ))
            }
        }
    }
    if !systems.iter().any(|s| s.top) {
        return Err(FabricError::parse(
            Location { file: Some(path.clone()), line: None },
            "no TOPSYSTEM section: an .ibnl file must define one top system",
        ));
    }
    for sys in &mut systems {
        let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
        for c in &sys.connectors {
            if let Some(prev) = seen.insert(&c.name, c.line) {
                return Err(err(c.line, format!("connector '{}' is already defined at line {prev}", c.name)));
            }
        }
        for c in &mut sys.conns {
            c.to = *sys
                .inst_by_name
                .get(&c.to_name)
                .ok_or_else(|| err(c.line, format!("unknown instance '{}' in system '{}'", c.to_name, sys.names[0])))?;
        }
    }
    Ok(IbnlFile { path, systems, by_name })
}

/// A node's port given by number in a netlist.
fn node_port(name: &str, num_ports: u8) -> Result<PortNum, String> {
    match name.parse::<u32>() {
        Ok(p) if p >= 1 && p <= num_ports as u32 => Ok(p as PortNum),
        Ok(p) => Err(format!("port {p} is out of range for a node with ports 1..={num_ports}")),
        Err(_) => Err(format!("bad node port '{name}': expected a number 1..={num_ports}")),
    }
}

/// A flattened product: nodes by instance path, internal links, connectors.
#[derive(Debug)]
pub(crate) struct Flat {
    pub nodes: Vec<FlatNode>,
    pub links: Vec<FlatLink>,
    pub connectors: FxHashMap<String, FlatPort>,
    /// True when a CFG modifier removed a board (for error messages).
    pub boards_removed: bool,
}

#[derive(Debug)]
pub(crate) struct FlatNode {
    /// Instance path inside the product, e.g. `leaf1/U1`.
    pub rel: String,
    pub kind: NodeKind,
    pub num_ports: u8,
}

#[derive(Debug)]
pub(crate) struct FlatLink {
    pub a: (u32, PortNum),
    pub b: (u32, PortNum),
    pub spec: LinkSpec,
}

/// A node port reachable from a connector, with the tags found on the way up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlatPort {
    pub node: u32,
    pub port: PortNum,
    pub tags: Tags,
}

/// Identifies a system definition inside a [`Library`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct DefRef {
    source: usize,
    file: usize,
    sys: usize,
}

#[derive(Debug)]
enum SourceKind {
    Dir(PathBuf),
    Builtin,
}

#[derive(Debug)]
struct Source {
    kind: SourceKind,
    files: Option<Vec<IbnlFile>>,
    tops: FxHashMap<String, (usize, usize)>,
}

/// Where system types are looked up, in order, each source read on first need.
#[derive(Debug)]
pub(crate) struct Library {
    sources: Vec<Source>,
}

impl Library {
    /// The lookup order for a `.topo` file: `.ibnl` files next to it, its
    /// `ibnl/` subdirectory, the caller's directories, the built-in netlists.
    pub fn for_topo(topo: Option<&Path>, opts: &ReadOptions) -> Library {
        let mut dirs = Vec::new();
        if let Some(t) = topo {
            let dir = match t.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            dirs.push(dir.join("ibnl"));
            dirs.insert(0, dir);
        }
        dirs.extend(opts.ibnl_dirs.iter().cloned());
        let mut sources: Vec<Source> = dirs
            .into_iter()
            .map(|d| Source { kind: SourceKind::Dir(d), files: None, tops: FxHashMap::default() })
            .collect();
        sources.push(Source { kind: SourceKind::Builtin, files: None, tops: FxHashMap::default() });
        Library { sources }
    }

    fn load(&mut self, si: usize) -> Result<(), FabricError> {
        if self.sources[si].files.is_some() {
            return Ok(());
        }
        let mut files = Vec::new();
        match &self.sources[si].kind {
            SourceKind::Builtin => {
                for (name, text) in BUILTIN_IBNL {
                    files.push(parse_ibnl(text, Path::new("<built-in>").join(name))?);
                }
            }
            SourceKind::Dir(dir) => {
                let entries = match std::fs::read_dir(dir) {
                    Ok(e) => e,
                    // A directory that is not there simply holds no netlists.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        self.sources[si].files = Some(Vec::new());
                        return Ok(());
                    }
                    Err(source) => return Err(FabricError::Io { path: dir.clone(), source }),
                };
                let mut paths: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "ibnl"))
                    .collect();
                paths.sort();
                for p in paths {
                    let text = read_text(&p)?;
                    files.push(parse_ibnl(&text, p)?);
                }
            }
        }
        let mut tops: FxHashMap<String, (usize, usize)> = FxHashMap::default();
        for (fi, f) in files.iter().enumerate() {
            for (si2, s) in f.systems.iter().enumerate().filter(|(_, s)| s.top) {
                for n in &s.names {
                    if let Some((pf, _)) = tops.insert(n.clone(), (fi, si2)) {
                        return Err(FabricError::parse(
                            Location { file: Some(f.path.clone()), line: None },
                            format!("system type '{n}' is also defined in {}", files[pf].path.display()),
                        ));
                    }
                }
            }
        }
        let src = &mut self.sources[si];
        src.files = Some(files);
        src.tops = tops;
        Ok(())
    }

    /// The first definition of top-level system type `ty`.
    pub fn lookup(&mut self, ty: &str) -> Result<Option<DefRef>, FabricError> {
        for si in 0..self.sources.len() {
            self.load(si)?;
            if let Some(&(file, sys)) = self.sources[si].tops.get(ty) {
                return Ok(Some(DefRef { source: si, file, sys }));
            }
        }
        Ok(None)
    }

    /// Human-readable list of where [`Library::lookup`] searched.
    pub fn searched(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for s in &self.sources {
            match &s.kind {
                SourceKind::Dir(d) => parts.push(format!("{}/*.ibnl", d.display())),
                SourceKind::Builtin => {
                    let mut names: Vec<&str> = s.tops.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    parts.push(format!("the built-in library ({})", names.join(", ")));
                }
            }
        }
        parts.join(", ")
    }

    fn file(&self, d: DefRef) -> &IbnlFile {
        &self.sources[d.source].files.as_ref().expect("a DefRef points into a loaded source")[d.file]
    }

    /// Flattens system `def` with CFG modifiers `mods` (board instance path →
    /// modifier). `cfg_loc` is where the modifiers were given.
    pub fn flatten(
        &self,
        def: DefRef,
        mods: &FxHashMap<String, String>,
        cfg_loc: &Location,
    ) -> Result<Flat, FabricError> {
        let mut b = Builder {
            lib: self,
            mods,
            used_mods: FxHashSet::default(),
            nodes: Vec::new(),
            links: Vec::new(),
            link_at: FxHashMap::default(),
            port_tags: FxHashMap::default(),
            boards_removed: false,
        };
        let connectors = b.build(def, "", 0)?;
        let mut unused: Vec<&String> = mods.keys().filter(|k| !b.used_mods.contains(*k)).collect();
        if !unused.is_empty() {
            unused.sort();
            return Err(FabricError::parse(
                cfg_loc.clone(),
                format!(
                    "CFG names {} which {} not a board of system type '{}'",
                    unused.iter().map(|u| format!("'{u}'")).collect::<Vec<_>>().join(", "),
                    if unused.len() == 1 { "is" } else { "are" },
                    self.file(def).systems[def.sys].names[0]
                ),
            ));
        }
        let links = b
            .links
            .iter()
            .map(|l| FlatLink { a: l.a, b: l.b, spec: l.tags.or(Tags::slower(l.a_tags, l.b_tags)).spec() })
            .collect();
        Ok(Flat { nodes: b.nodes, links, connectors, boards_removed: b.boards_removed })
    }
}

struct PendingLink {
    a: (u32, PortNum),
    b: (u32, PortNum),
    tags: Tags,
    a_tags: Tags,
    b_tags: Tags,
    loc: Location,
}

/// What an instance of the system being flattened turned into.
enum Resolved {
    Node { idx: u32, num_ports: u8 },
    Board { master: String, ports: FxHashMap<String, FlatPort> },
    Removed,
}

struct Builder<'a> {
    lib: &'a Library,
    mods: &'a FxHashMap<String, String>,
    used_mods: FxHashSet<String>,
    nodes: Vec<FlatNode>,
    links: Vec<PendingLink>,
    link_at: FxHashMap<(u32, PortNum), usize>,
    /// Tags the netlist puts on a node's own port (`1 -10G-> P1`).
    port_tags: FxHashMap<(u32, PortNum), Tags>,
    boards_removed: bool,
}

impl Builder<'_> {
    fn build(&mut self, def: DefRef, prefix: &str, depth: usize) -> Result<FxHashMap<String, FlatPort>, FabricError> {
        let lib = self.lib;
        let file = lib.file(def);
        let sd = &file.systems[def.sys];
        let loc = |line: usize| Location::new(Some(file.path.clone()), line);
        let mut resolved = Vec::with_capacity(sd.insts.len());
        for inst in &sd.insts {
            resolved.push(match &inst.kind {
                InstKind::Node { kind, num_ports, .. } => {
                    self.nodes.push(FlatNode {
                        rel: format!("{prefix}{}", inst.name),
                        kind: *kind,
                        num_ports: *num_ports,
                    });
                    Resolved::Node { idx: self.nodes.len() as u32 - 1, num_ports: *num_ports }
                }
                InstKind::Board { master } => {
                    let hier = format!("{prefix}{}", inst.name);
                    let modifier = self.mods.get(&hier);
                    if modifier.is_some() {
                        self.used_mods.insert(hier.clone());
                    }
                    match modifier.map(String::as_str) {
                        Some("R" | "X" | "Removed") => {
                            self.boards_removed = true;
                            Resolved::Removed
                        }
                        m => {
                            let wanted = match m {
                                Some(m) => format!("{master}:{m}"),
                                None => master.clone(),
                            };
                            let Some(&sub) = file.by_name.get(&wanted) else {
                                let why = match m {
                                    Some(m) => format!(" (selected by CFG modifier {hier}={m})"),
                                    None => String::new(),
                                };
                                return Err(FabricError::parse(
                                    loc(inst.line),
                                    format!("board type '{wanted}'{why} is not defined in this file"),
                                ));
                            };
                            if depth >= MAX_DEPTH {
                                return Err(FabricError::parse(
                                    loc(inst.line),
                                    format!(
                                        "boards nest deeper than {MAX_DEPTH} levels: does '{master}' contain itself?"
                                    ),
                                ));
                            }
                            let ports = self.build(DefRef { sys: sub, ..def }, &format!("{hier}/"), depth + 1)?;
                            Resolved::Board { master: master.clone(), ports }
                        }
                    }
                }
            });
        }

        let mut out = FxHashMap::default();
        out.reserve(sd.connectors.len());
        for cd in &sd.connectors {
            let fp = match &resolved[cd.inst] {
                Resolved::Node { idx, num_ports } => {
                    let port = node_port(&cd.port, *num_ports).map_err(|m| FabricError::parse(loc(cd.line), m))?;
                    self.port_tags.insert((*idx, port), cd.tags);
                    Some(FlatPort { node: *idx, port, tags: cd.tags })
                }
                r => self
                    .board_port(file, r, &cd.port, &loc(cd.line))?
                    .map(|fp| FlatPort { tags: fp.tags.or(cd.tags), ..fp }),
            };
            if let Some(fp) = fp {
                out.insert(cd.name.clone(), fp);
            }
        }

        for c in &sd.conns {
            let a = self.inst_port(file, &resolved[c.from], &c.from_port, &loc(c.line))?;
            let b = self.inst_port(file, &resolved[c.to], &c.to_port, &loc(c.line))?;
            if let (Some(a), Some(b)) = (a, b) {
                self.add_link(a, b, c.tags, loc(c.line))?;
            }
        }
        Ok(out)
    }

    fn inst_port(
        &self,
        file: &IbnlFile,
        r: &Resolved,
        port: &str,
        loc: &Location,
    ) -> Result<Option<FlatPort>, FabricError> {
        match r {
            Resolved::Node { idx, num_ports } => {
                let p = node_port(port, *num_ports).map_err(|m| FabricError::parse(loc.clone(), m))?;
                let tags = self.port_tags.get(&(*idx, p)).copied().unwrap_or_default();
                Ok(Some(FlatPort { node: *idx, port: p, tags }))
            }
            r => self.board_port(file, r, port, loc),
        }
    }

    /// Connector `port` of a board instance; `None` when the board was removed
    /// or its chosen variant lacks a connector that another variant has.
    fn board_port(
        &self,
        file: &IbnlFile,
        r: &Resolved,
        port: &str,
        loc: &Location,
    ) -> Result<Option<FlatPort>, FabricError> {
        let Resolved::Board { master, ports } = r else { return Ok(None) };
        if let Some(fp) = ports.get(port) {
            return Ok(Some(*fp));
        }
        let variant_prefix = format!("{master}:");
        let some_variant_has = file.systems.iter().any(|s| {
            s.names.iter().any(|n| n == master || n.starts_with(&variant_prefix))
                && s.connectors.iter().any(|c| c.name == port)
        });
        if some_variant_has {
            Ok(None)
        } else {
            Err(FabricError::parse(loc.clone(), format!("board type '{master}' has no connector '{port}'")))
        }
    }

    fn add_link(&mut self, a: FlatPort, b: FlatPort, tags: Tags, loc: Location) -> Result<(), FabricError> {
        let (ka, kb) = ((a.node, a.port), (b.node, b.port));
        let name = |k: (u32, PortNum)| format!("{} port {}", self.nodes[k.0 as usize].rel, k.1);
        if ka == kb {
            return Err(FabricError::parse(loc, format!("{} is connected to itself", name(ka))));
        }
        match (self.link_at.get(&ka).copied(), self.link_at.get(&kb).copied()) {
            (None, None) => {
                self.links.push(PendingLink { a: ka, b: kb, tags, a_tags: a.tags, b_tags: b.tags, loc });
                self.link_at.insert(ka, self.links.len() - 1);
                self.link_at.insert(kb, self.links.len() - 1);
                Ok(())
            }
            // The same connection listed from its other end (MTS14400, MIS5600 do this).
            (Some(x), Some(y)) if x == y => {
                let prev = &mut self.links[x];
                if matches!((prev.tags.width, tags.width), (Some(p), Some(q)) if p != q)
                    || matches!((prev.tags.speed, tags.speed), (Some(p), Some(q)) if p != q)
                {
                    return Err(FabricError::parse(
                        loc,
                        format!("this connection has different width/speed tags than at {}", prev.loc),
                    ));
                }
                prev.tags = prev.tags.or(tags);
                Ok(())
            }
            (Some(x), _) | (None, Some(x)) => {
                let l = &self.links[x];
                let busy = if self.link_at.get(&ka) == Some(&x) { ka } else { kb };
                let other = if l.a == busy { l.b } else { l.a };
                Err(FabricError::parse(
                    loc,
                    format!("{} is already connected to {} at {}", name(busy), name(other), l.loc),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib_from(text: &str) -> (Library, DefRef) {
        let mut lib =
            Library { sources: vec![Source { kind: SourceKind::Builtin, files: None, tops: FxHashMap::default() }] };
        let f = parse_ibnl(text, PathBuf::from("t.ibnl")).unwrap();
        let mut tops = FxHashMap::default();
        for (i, s) in f.systems.iter().enumerate().filter(|(_, s)| s.top) {
            for n in &s.names {
                tops.insert(n.clone(), (0, i));
            }
        }
        lib.sources[0].files = Some(vec![f]);
        lib.sources[0].tops = tops;
        let d = lib.lookup("TOP").unwrap().unwrap();
        (lib, d)
    }

    const TWO_BOARDS: &str = "\
SYSTEM BOARD,BOARD:a
NODE SW 4 DEV U1
   1 -4x-> P1
   2 -> P2
   3 -> U2 1

NODE CA 1 DEV U2

SYSTEM BOARD:b
NODE SW 4 DEV U1
   1 -12x-QDR-> P1

TOPSYSTEM TOP,TOPALIAS
U1=attr
SUBSYSTEM BOARD b1
   P1 -> F1
   P2 -10G-> b2 P2
SUBSYSTEM BOARD b2
   P1 -> F2
   P2 -> b1 P2
";

    #[test]
    fn the_slower_end_decides_each_field_given_by_both() {
        let t = |width, speed| Tags { width, speed };
        let fast = t(Some(LinkWidth::X4), Some(LinkSpeed::Edr));
        let slow = t(Some(LinkWidth::X1), Some(LinkSpeed::Qdr));
        assert_eq!(Tags::slower(fast, slow), slow);
        assert_eq!(Tags::slower(slow, fast), slow);
        // A field only one end gives is taken from it.
        let mixed = Tags::slower(t(Some(LinkWidth::X12), None), t(None, Some(LinkSpeed::Fdr)));
        assert_eq!(mixed, t(Some(LinkWidth::X12), Some(LinkSpeed::Fdr)));
    }

    #[test]
    fn a_directory_source_that_is_a_file_is_an_error() {
        // Only a missing directory holds no netlists; a file given as one is refused.
        let file = std::env::temp_dir().join(format!("ibnetsim-ibnl-notdir-{}", std::process::id()));
        std::fs::write(&file, "not a directory\n").unwrap();
        let source = Source { kind: SourceKind::Dir(file.clone()), files: None, tops: FxHashMap::default() };
        let mut lib = Library { sources: vec![source] };
        let found = lib.lookup("TOP");
        std::fs::remove_file(&file).unwrap();
        assert!(found.is_err(), "{:?}", found.map(|f| f.is_some()));
    }

    #[test]
    fn a_directory_source_reads_only_its_ibnl_files() {
        // Netlist directories hold notes and other files beside the netlists.
        let dir = std::env::temp_dir().join(format!("ibnetsim-ibnl-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("boards.ibnl"), TWO_BOARDS).unwrap();
        std::fs::write(dir.join("README"), "not a netlist\n").unwrap();
        let source = Source { kind: SourceKind::Dir(dir.clone()), files: None, tops: FxHashMap::default() };
        let mut lib = Library { sources: vec![source] };
        let found = lib.lookup("TOP");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(found.unwrap().is_some());
    }

    #[test]
    fn flatten_boards_and_links() {
        let (lib, d) = lib_from(TWO_BOARDS);
        let f = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap();
        let rels: Vec<&str> = f.nodes.iter().map(|n| n.rel.as_str()).collect();
        assert_eq!(rels, ["b1/U1", "b1/U2", "b2/U1", "b2/U2"]);
        // U1-U2 inside each board, and b1.P2-b2.P2 listed from both ends once.
        assert_eq!(f.links.len(), 3);
        let between = f.links.iter().find(|l| l.a == (0, 2)).unwrap();
        assert_eq!(between.b, (2, 2));
        assert_eq!((between.spec.width, between.spec.speed), (LinkWidth::X4, LinkSpeed::Qdr));
        let inside = f.links.iter().find(|l| l.a == (0, 3)).unwrap();
        assert_eq!(inside.b, (1, 1));
        assert_eq!(inside.spec, LinkSpec::new(LinkWidth::X4, LinkSpeed::Sdr));
        let f1 = f.connectors["F1"];
        assert_eq!((f1.node, f1.port, f1.tags.width), (0, 1, Some(LinkWidth::X4)));
        assert_eq!(f.connectors["F2"].node, 2);
    }

    #[test]
    fn cfg_selects_variant_and_removes_boards() {
        let (lib, d) = lib_from(TWO_BOARDS);
        let mods: FxHashMap<String, String> = [("b2".to_string(), "b".to_string())].into_iter().collect();
        let f = lib.flatten(d, &mods, &Location::default()).unwrap();
        // b2 is variant b: one node, no P2, so the b1-b2 link is dropped.
        assert_eq!(f.nodes.len(), 3);
        assert_eq!(f.links.len(), 1);
        assert_eq!(f.connectors["F2"].tags.width, Some(LinkWidth::X12));
        let mods: FxHashMap<String, String> = [("b1".to_string(), "R".to_string())].into_iter().collect();
        let f = lib.flatten(d, &mods, &Location::default()).unwrap();
        assert_eq!(f.nodes.len(), 2);
        assert!(!f.connectors.contains_key("F1") && f.boards_removed);
        let mods: FxHashMap<String, String> = [("b9".to_string(), "R".to_string())].into_iter().collect();
        let e = lib.flatten(d, &mods, &Location::new(Some("x.topo".into()), 4)).unwrap_err().to_string();
        assert_eq!(e, "x.topo:4: CFG names 'b9' which is not a board of system type 'TOP'");
        let mods: FxHashMap<String, String> = [("b1".to_string(), "zz".to_string())].into_iter().collect();
        let e = lib.flatten(d, &mods, &Location::default()).unwrap_err().to_string();
        assert_eq!(e, "t.ibnl:15: board type 'BOARD:zz' (selected by CFG modifier b1=zz) is not defined in this file");
    }

    #[test]
    fn netlist_errors_name_file_and_line() {
        let e = |t: &str| parse_ibnl(t, PathBuf::from("e.ibnl")).unwrap_err().to_string();
        assert_eq!(
            e("TOPSYSTEM T\nNODE SW 4 D U1\n   5 -> P5\n"),
            "e.ibnl:3: port 5 is out of range for a node with ports 1..=4"
        );
        assert_eq!(e("TOPSYSTEM T\nNODE XX 4 D U1\n"), "e.ibnl:2: unknown node type 'XX': expected SW, CA or HCA");
        assert_eq!(
            e("TOPSYSTEM T\nNODE SW 4 D U1\n 1 -3x-> P1\n"),
            "e.ibnl:3: bad width tag '-3x-': unknown link width '3x' (expected 1x, 2x, 4x, 8x or 12x)"
        );
        assert_eq!(e("TOPSYSTEM T\nNODE SW 4 D U1\n 1 -> U9 1\n"), "e.ibnl:3: unknown instance 'U9' in system 'T'");
        assert_eq!(
            e("SYSTEM B\nNODE SW 4 D U1\n"),
            "e.ibnl: no TOPSYSTEM section: an .ibnl file must define one top system"
        );
        assert!(e("TOPSYSTEM T\nwhat is this\n").starts_with("e.ibnl:2: unrecognised line 'what is this'"));
        assert!(e("TOPSYSTEM T\nNODE SW 0 D U1\n").starts_with("e.ibnl:2: bad number of ports '0'"));
        assert_eq!(
            e("TOPSYSTEM T\nNODE SW 4 D U1\n 1 -> P1\n 2 -> P1\n"),
            "e.ibnl:4: connector 'P1' is already defined at line 3"
        );
    }

    #[test]
    fn a_board_port_is_looked_up_in_that_boards_types_only() {
        // TOP has a connector F1, BOARD has none: b2's F1 must not be taken as
        // an unused variant port and dropped.
        let (lib, d) = lib_from(
            "SYSTEM BOARD\nNODE SW 4 D U1\n 1 -> P1\n\n\
             TOPSYSTEM TOP\nSUBSYSTEM BOARD b1\n P1 -> F1\nSUBSYSTEM BOARD b2\n F1 -> b1 P1\n",
        );
        let e = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap_err().to_string();
        assert!(e.ends_with("board type 'BOARD' has no connector 'F1'"), "{e}");
    }

    #[test]
    fn a_board_that_contains_itself_is_refused() {
        let (lib, d) = lib_from("SYSTEM BOARD\nSUBSYSTEM BOARD inner\n\nTOPSYSTEM TOP\nSUBSYSTEM BOARD b1\n");
        let e = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap_err().to_string();
        assert!(e.contains("boards nest deeper than 16 levels"), "{e}");
    }

    #[test]
    fn conflicting_internal_links() {
        let (lib, d) = lib_from("TOPSYSTEM TOP\nNODE SW 4 D U1\n 1 -> U2 1\nNODE SW 4 D U2\n 1 -> U1 2\n");
        let e = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap_err().to_string();
        assert_eq!(e, "t.ibnl:5: U2 port 1 is already connected to U1 port 1 at t.ibnl:3");
    }

    #[test]
    fn arrows_and_tags() {
        let (p, t, r) = split_arrow("L1/P1 -8X-5G-> MT23108 H-1 P1").unwrap();
        assert_eq!(
            (p, t.width, t.speed, r),
            ("L1/P1", Some(LinkWidth::X8), Some(LinkSpeed::Ddr), vec!["MT23108", "H-1", "P1"])
        );
        let (p, t, r) = split_arrow("1 -> P1").unwrap();
        assert_eq!((p, t, r), ("1", Tags::default(), vec!["P1"]));
        let (_, t, _) = split_arrow("P19 -10G-> spine1 P1").unwrap();
        assert_eq!((t.width, t.speed), (None, Some(LinkSpeed::Qdr)));
        assert!(split_arrow("a b -> c").is_err());
        assert!(split_arrow("P1 -7G-> c").unwrap_err().starts_with("bad speed tag '-7G-'"));
    }

    #[test]
    fn builtin_library_parses_and_flattens() {
        let mut lib = Library::for_topo(None, &ReadOptions::default());
        let counts = [
            ("MTS800", 1, 0, 8),
            ("Buffalo", 1, 0, 8),
            ("Cougar", 1, 0, 2),
            ("MT23108", 1, 0, 2),
            ("MTS2400", 1, 0, 24),
            ("MTS3600", 1, 0, 36),
            // 12 leaves + 2 spine boards of 3 ASICs; every leaf has 12 uplinks.
            ("MTS14400", 18, 144, 144),
            // 36 leaves + 18 spines; each leaf has one link to each spine.
            ("MIS5600", 54, 648, 648),
        ];
        for (ty, nodes, links, connectors) in counts {
            let d = lib.lookup(ty).unwrap().unwrap_or_else(|| panic!("{ty} is built in"));
            let f = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap();
            assert_eq!((f.nodes.len(), f.links.len(), f.connectors.len()), (nodes, links, connectors), "{ty}");
        }
        let d = lib.lookup("MIS5600").unwrap().unwrap();
        let f = lib.flatten(d, &FxHashMap::default(), &Location::default()).unwrap();
        assert!(f.nodes.iter().any(|n| n.rel == "leaf1/U1") && f.nodes.iter().any(|n| n.rel == "spine18/U1"));
        // Internal links carry -10G- and no width: 4x QDR.
        assert!(f.links.iter().all(|l| l.spec == LinkSpec::new(LinkWidth::X4, LinkSpeed::Qdr)));
        assert!(lib.lookup("NoSuchBox").unwrap().is_none());
        assert!(lib.searched().starts_with("the built-in library (Buffalo, Cougar,"), "{}", lib.searched());
    }
}
