//! OpenSM's `torus-2QoS.conf`, the input of the `torus-2QoS` engine.
//!
//! Read as OpenSM 3.3.23 reads it (`parse_config` in `opensm/osm_torus.c`,
//! format in `man/torus-2QoS.conf.5.in`): one keyword per line, blank lines
//! and `#` lines skipped, tokens after a keyword's arguments ignored. Numbers
//! take C's `strtoul(…, 0)` forms (decimal, `0x` hex, leading-`0` octal).
//! Keywords: `torus`/`mesh` with three radices (each optionally suffixed
//! `t`/`T` for a ring or `m`/`M` for an open line; radix 2 is always a mesh,
//! as in OpenSM), `xp_link`/`xm_link`/`yp_link`/… seeds, `x_dateline`/…,
//! `next_seed`, `port_order`, and `portgroup_max_ports`/`max_changes`, which
//! are read and have no effect here. OpenSM logs a bad line and refuses to
//! route; we stop at the first one, naming the file and line.

use std::path::{Path, PathBuf};

use ibnetsim_fabric::Location;

use crate::error::{read_text, SmError};

/// How many entries OpenSM's `port_order` array holds (`IB_NODE_NUM_PORTS_MAX + 1`).
pub const PORT_ORDER_LEN: usize = 255;

/// One seed link: `from` is the seed's origin switch, `to` its neighbour, by node GUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedLink {
    /// Node GUID of the origin switch.
    pub from: u64,
    /// Node GUID of the neighbour in the link's direction.
    pub to: u64,
    /// Line of the file that gave it.
    pub line: usize,
}

/// One seed: the links that fix the coordinate directions at its origin
/// switch, and where the datelines lie relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seed {
    /// `links[d][0]` is the minus (`xm_link`…), `links[d][1]` the plus link of dimension d.
    pub links: [[Option<SeedLink>; 2]; 3],
    /// `x_dateline`…: the origin's coordinate is `-dateline` (mod radix).
    pub dateline: [i32; 3],
}

/// A parsed `torus-2QoS.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorusConf {
    /// The file, for messages.
    pub path: PathBuf,
    /// Radix of x, y and z (1 for an absent dimension).
    pub radix: [u32; 3],
    /// Whether each dimension is open (a mesh) rather than a ring.
    pub mesh: [bool; 3],
    /// Seeds in file order; the first whose switches all exist is used.
    pub seeds: Vec<Seed>,
    /// The order destination-switch ports are visited in (a permutation of
    /// `0..PORT_ORDER_LEN`): the ports listed by `port_order`, then the rest ascending.
    pub port_order: Vec<u32>,
}

const DIMS: [char; 3] = ['x', 'y', 'z'];

impl TorusConf {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<Self, SmError> {
        let text = read_text(path, "a torus-2QoS.conf")?;
        Self::parse(&text, path)
    }

    /// Parses the text of `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SmError> {
        let mut radix: Option<[u32; 3]> = None;
        let mut mesh = [false; 3];
        let mut seeds: Vec<Seed> = Vec::new();
        let mut listed: Vec<u32> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let at = Location::new(Some(path.to_path_buf()), n + 1);
            let err = |msg: String| SmError::parse(at.clone(), msg);
            let mut tokens = line.split([' ', '\t', '\r']).filter(|t| !t.is_empty());
            let Some(keyword) = tokens.next() else { continue };
            if keyword.starts_with('#') {
                continue;
            }
            let mut arg = |what: &str| tokens.next().ok_or_else(|| err(format!("'{keyword}' needs {what}")));
            match keyword {
                "torus" | "mesh" => {
                    if radix.is_some() {
                        return Err(err("a second torus/mesh line; the file describes one torus".into()));
                    }
                    let mut r = [0u32; 3];
                    for d in 0..3 {
                        let tok = arg("three radices (x y z), e.g. 'torus 4 4 1'")?;
                        let (value, suffix) = split_number(tok);
                        r[d] = parse_uint(value).ok_or_else(|| err(format!("'{tok}' is not a radix (a number, optionally followed by t or m)")))?;
                        if r[d] == 0 {
                            return Err(err(format!("the {} radix is 0; an absent dimension has radix 1", DIMS[d])));
                        }
                        mesh[d] = match suffix.chars().next() {
                            Some('t' | 'T') => false,
                            Some('m' | 'M') => true,
                            _ => keyword == "mesh",
                        } || r[d] == 2;
                    }
                    radix = Some(r);
                }
                "next_seed" => seeds.push(Seed::default()),
                "port_order" => {
                    for tok in tokens.by_ref() {
                        if listed.len() == PORT_ORDER_LEN {
                            break;
                        }
                        let p = parse_uint(tok).ok_or_else(|| err(format!("'{tok}' is not a port number")))?;
                        if !listed.contains(&p) {
                            listed.push(p);
                        }
                    }
                }
                "portgroup_max_ports" | "max_changes" => {
                    let tok = arg("a number")?;
                    parse_uint(tok).ok_or_else(|| err(format!("'{tok}' is not a number")))?;
                }
                _ => {
                    let Some((d, kind)) = dir_keyword(keyword) else {
                        return Err(err(format!(
                            "unknown keyword '{keyword}' (known: torus, mesh, xp_link, xm_link, yp_link, ym_link, zp_link, zm_link, x_dateline, y_dateline, z_dateline, next_seed, port_order, portgroup_max_ports, max_changes)"
                        )));
                    };
                    if seeds.is_empty() {
                        seeds.push(Seed::default());
                    }
                    let seed = seeds.last_mut().expect("a seed");
                    match kind {
                        Kw::Dateline => {
                            let r = radix.ok_or_else(|| err(format!("'{keyword}' comes before the torus/mesh line that sets the radix")))?;
                            let tok = arg("a position")?;
                            let v = parse_int(tok).ok_or_else(|| err(format!("'{tok}' is not a position")))?;
                            let max = r[d] as i64;
                            if v <= -max || v >= max {
                                return Err(err(format!("dateline {v} is out of range: the {} radix is {max}, so {} < position < {max}", DIMS[d], -max)));
                            }
                            seed.dateline[d] = v as i32;
                        }
                        Kw::Link(sign) => {
                            let want = "two switch GUIDs (from, to)";
                            let a = arg(want)?;
                            let from = parse_uint64(a).ok_or_else(|| err(format!("'{a}' is not a GUID")))?;
                            let b = arg(want)?;
                            let to = parse_uint64(b).ok_or_else(|| err(format!("'{b}' is not a GUID")))?;
                            seed.links[d][sign] = Some(SeedLink { from, to, line: n + 1 });
                        }
                    }
                }
            }
        }
        let file_err = |msg: String| SmError::parse(Location { file: Some(path.to_path_buf()), line: None }, msg);
        let radix = radix.ok_or_else(|| file_err("no torus or mesh line: say e.g. 'torus 4 4 1'".into()))?;
        if seeds.is_empty() {
            return Err(file_err("no seed: give e.g. 'xp_link GUID0 GUID1' and 'yp_link GUID0 GUID2' from one switch".into()));
        }
        let mut port_order = listed.clone();
        port_order.extend((0..PORT_ORDER_LEN as u32).filter(|p| !listed.contains(p)));
        Ok(TorusConf { path: path.to_path_buf(), radix, mesh, seeds, port_order })
    }
}

enum Kw {
    Link(usize),
    Dateline,
}

fn dir_keyword(k: &str) -> Option<(usize, Kw)> {
    let d = DIMS.iter().position(|&c| k.starts_with(c))?;
    match &k[1..] {
        "p_link" => Some((d, Kw::Link(1))),
        "m_link" => Some((d, Kw::Link(0))),
        "_dateline" => Some((d, Kw::Dateline)),
        _ => None,
    }
}

/// The leading number of `tok` and what follows it.
fn split_number(tok: &str) -> (&str, &str) {
    let hex = tok.starts_with("0x") || tok.starts_with("0X");
    let start = if hex { 2 } else { 0 };
    let end = tok[start..].find(|c: char| if hex { !c.is_ascii_hexdigit() } else { !c.is_ascii_digit() }).map_or(tok.len(), |i| i + start);
    tok.split_at(end)
}

/// C's `strtoull(s, …, 0)` on a whole token.
fn parse_uint64(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_uint(s: &str) -> Option<u32> {
    parse_uint64(s).and_then(|v| u32::try_from(v).ok())
}

fn parse_int(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(rest) => parse_uint64(rest).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        None => parse_uint64(s.strip_prefix('+').unwrap_or(s)).and_then(|v| i64::try_from(v).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TorusConf, SmError> {
        TorusConf::parse(text, Path::new("t.conf"))
    }

    #[test]
    fn the_man_page_example() {
        let c = parse(
            "# Look for a 2D (since x radix is one) 4x5 torus.\ntorus 1 4 5\n\nyp_link 0x200000 0x200005  # sw @ y=0,z=0 -> sw @ y=1,z=0\nym_link 0x200000 0x20000f\nzp_link 0x200000 0x200001\n\nnext_seed\n\nyp_link 0x20000b 0x200010\nym_link 0x20000b 0x200006\nzp_link 0x20000b 0x20000c\n\ny_dateline -2\nz_dateline -1\nport_order 7 10 8 11 9 12 25 28 26 29 27 30 7\n",
        )
        .unwrap();
        assert_eq!(c.radix, [1, 4, 5]);
        assert_eq!(c.mesh, [false; 3]);
        assert_eq!(c.seeds.len(), 2);
        assert_eq!(c.seeds[0].links[1][1], Some(SeedLink { from: 0x200000, to: 0x200005, line: 4 }));
        assert_eq!(c.seeds[0].links[1][0].unwrap().to, 0x20000f);
        assert_eq!(c.seeds[0].links[0], [None, None]);
        assert_eq!(c.seeds[1].dateline, [0, -2, -1]);
        assert_eq!(c.seeds[0].dateline, [0, 0, 0]);
        assert_eq!(&c.port_order[..14], &[7, 10, 8, 11, 9, 12, 25, 28, 26, 29, 27, 30, 0, 1]);
        assert_eq!(c.port_order.len(), PORT_ORDER_LEN);
    }

    #[test]
    fn radix_suffixes_and_radix_two() {
        let c = parse("mesh 3T 4 2t\nxp_link 1 2\n").unwrap();
        assert_eq!(c.mesh, [false, true, true]);
        let c = parse("torus 3 4M 5m\nxp_link 010 0x10\n").unwrap();
        assert_eq!(c.mesh, [false, true, true]);
        assert_eq!(c.seeds[0].links[0][1].map(|l| (l.from, l.to)), Some((8, 16)));
    }

    #[test]
    fn hex_radices_take_a_suffix_after_their_hex_digits() {
        // strtoul(…, 0) reads "0x5" as 5 and "0x3" of "0x3m" as 3; the "m"
        // after it makes y open.
        let c = parse("torus 0x5 0x3m 1\nxp_link 1 2\n").unwrap();
        assert_eq!((c.radix, c.mesh), ([5, 3, 1], [false, true, false]));
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("torus 4 4 1\n\nqp_link 1 2\n").unwrap_err().to_string();
        assert!(e.starts_with("t.conf:3: unknown keyword 'qp_link'"), "{e}");
        assert_eq!(parse("x_dateline 1\ntorus 4 4 1\n").unwrap_err().to_string(), "t.conf:1: 'x_dateline' comes before the torus/mesh line that sets the radix");
        assert_eq!(parse("torus 4 4 1\nx_dateline 4\n").unwrap_err().to_string(), "t.conf:2: dateline 4 is out of range: the x radix is 4, so -4 < position < 4");
        assert_eq!(parse("torus 4 4\n").unwrap_err().to_string(), "t.conf:1: 'torus' needs three radices (x y z), e.g. 'torus 4 4 1'");
        assert_eq!(parse("torus 4 4 1\nxp_link 0x1\n").unwrap_err().to_string(), "t.conf:2: 'xp_link' needs two switch GUIDs (from, to)");
        assert_eq!(parse("torus 4 4 1\ntorus 4 4 1\n").unwrap_err().to_string(), "t.conf:2: a second torus/mesh line; the file describes one torus");
        assert_eq!(parse("xp_link 1 2\n").unwrap_err().to_string(), "t.conf: no torus or mesh line: say e.g. 'torus 4 4 1'");
        assert!(parse("torus 4 4 1\n").unwrap_err().to_string().starts_with("t.conf: no seed"));
    }
}
