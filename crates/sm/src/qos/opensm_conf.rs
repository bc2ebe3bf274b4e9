//! OpenSM's QoS options, read from `opensm.conf` or from a scenario's `[qos]`
//! TOML table, and applied to a fabric as OpenSM programs them.
//!
//! Sources (linux-rdma/opensm):
//! - opensm/osm_subnet.c: the option table `opt_tbl` (names and value types),
//!   `osm_subn_parse_conf_file` (line syntax), `clean_val`, `opts_parse_*`,
//!   `subn_verify_qos_set` and `osm_subn_output_conf` (what `opensm -c` writes);
//! - opensm/osm_qos.c: `qos_build_config` (precedence and list syntax),
//!   `osm_qos_setup`, `qos_extports_setup`, `qos_endport_setup`, `vlarb_update`
//!   and `sl2vl_update_table` (which set goes to which port, VL masking);
//! - include/opensm/osm_base.h: the `OSM_DEFAULT_QOS_*` defaults;
//! - doc/qos-config.txt: the meaning of each option and of the prefixes.
//!
//! # File syntax (as `osm_subn_parse_conf_file`)
//! One option per line: a key, whitespace, and the rest of the line as value.
//! Everything from the first `#` on is a comment. The value is trimmed and one
//! pair of surrounding `"` or `'` is removed. Numbers are C integers (`strtol`
//! base 0: `10`, `0xa`, `012`). When a key repeats, the last one wins.
//!
//! # Options
//! `qos` is `TRUE` or `FALSE` (default `FALSE`); `qos_policy_file` is kept but
//! not read (it selects SLs for SA path queries, not these tables). Then five
//! settings, each in a global form and in four prefixed forms:
//!
//! | option | value | OpenSM default |
//! |---|---|---|
//! | `qos_max_vls` | 1..=15 data VLs | 15 |
//! | `qos_high_limit` | 0..=255, `LimitOfHighPriority` | 0 |
//! | `qos_vlarb_high` | `VL:weight,...`, up to 64 entries, VL 0..=14, weight 0..=255 | `0:4,1:0,2:0,...,14:0` |
//! | `qos_vlarb_low` | same | `0:0,1:4,2:4,...,14:4` |
//! | `qos_sl2vl` | 16 VLs for SL 0..=15, 15 = drop | `0,1,2,...,14,7` |
//!
//! `qos_ca_*` apply to CA ports, `qos_sw0_*` to switch port 0, `qos_swe_*` to
//! switch external ports and `qos_rtr_*` to router ports. Each setting is taken
//! from the prefixed option if given, else from the global one, else from the
//! default (`qos_build_config`). A prefixed or global option is "not given"
//! when absent or when it holds OpenSM's unset marker, which is what
//! `opensm -c` writes for options never set: `0` for `*_max_vls`, `-1` for
//! `*_high_limit`, `(null)` for the strings. Our fabric model has no routers,
//! so `qos_rtr_*` is checked and kept but programs nothing.
//!
//! # Errors where OpenSM only warns
//! OpenSM logs a warning and carries on for a malformed or out-of-range value
//! (and reads `qos true` as FALSE). We reject the file instead, naming
//! file:line and key: an unknown `qos_*` key, a value that is not of its
//! option's syntax (including spaces between a number and its separator,
//! which OpenSM's parser misreads), a VL beyond 14 (15 in `qos_sl2vl`), a
//! weight beyond 255, more than 64 arbitration entries, or other than 16 SL2VL
//! entries. A trailing comma is accepted, as OpenSM ignores it.
//!
//! # Other keys
//! opensm.conf is shared by all of OpenSM, so other keys are ignored, except
//! the congestion-control keys `cc_*` and `congestion_control`: they are kept
//! raw, in file order with their location, in [`QosConfig::cc_options`] for the
//! congestion-control model, and are not interpreted here. Repeats are all kept
//! (OpenSM sets `cc_ca_cong_setting_*` once per SL).
//!
//! # TOML
//! A scenario's `[qos]` table mirrors the options without the `qos_` prefix
//! (unknown keys are errors):
//!
//! ```toml
//! [qos]
//! enabled = true            # qos TRUE; defaults to true when [qos] is present
//! max_vls = 8               # qos_max_vls
//! high_limit = 0            # qos_high_limit
//! vlarb_high = "0:4,1:0"    # qos_vlarb_high
//! vlarb_low = "0:0,1:4"     # qos_vlarb_low
//! sl2vl = "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7"   # qos_sl2vl
//! [qos.ca]                  # qos_ca_*; likewise [qos.sw0], [qos.swe], [qos.rtr]
//! max_vls = 4
//! ```
//!
//! A TOML option is either given, with a valid value, or omitted: the unset
//! markers `0`, `-1` and `(null)` are errors there. `qos_policy_file` and the
//! congestion-control keys have no TOML form here.
//!
//! # Applying
//! [`QosConfig::apply`] programs every port as `osm_qos_setup` does; see its
//! documentation for the port-by-port rules and the modelling choices.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ibnetsim_fabric::{Fabric, Location, NodeId, PortNum};
use serde::Deserialize;
use toml::Spanned;

use super::sl2vl::{uniform_map, Sl2VlMap, Sl2VlTables, VL_DROP};
use super::vlarb::{opensm_entries, VlArbConfig, VlArbTables, VLARB_MAX_ENTRIES};
use super::{fold_vl, PortLayout, MAX_DATA_VLS};
use crate::error::SmError;

/// `OSM_DEFAULT_QOS_MAX_VLS` (osm_base.h).
pub const OSM_DEFAULT_QOS_MAX_VLS: u8 = 15;
/// `OSM_DEFAULT_QOS_HIGH_LIMIT` (osm_base.h).
pub const OSM_DEFAULT_QOS_HIGH_LIMIT: u8 = 0;
/// `OSM_DEFAULT_QOS_VLARB_HIGH` (osm_base.h).
pub const OSM_DEFAULT_QOS_VLARB_HIGH: &str = "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0";
/// `OSM_DEFAULT_QOS_VLARB_LOW` (osm_base.h).
pub const OSM_DEFAULT_QOS_VLARB_LOW: &str = "0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4";
/// `OSM_DEFAULT_QOS_SL2VL` (osm_base.h).
pub const OSM_DEFAULT_QOS_SL2VL: &str = "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7";

/// Highest VL an arbitration entry may name (OpenSM's `subn_verify_vlarb`).
const MAX_ARB_VL: i64 = 14;

/// The kind of port a prefixed option set applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortClass {
    /// CA ports (`qos_ca_*`, `[qos.ca]`).
    Ca,
    /// Switch port 0 (`qos_sw0_*`, `[qos.sw0]`).
    Switch0,
    /// Switch external ports (`qos_swe_*`, `[qos.swe]`).
    SwitchExternal,
    /// Router ports (`qos_rtr_*`, `[qos.rtr]`).
    Router,
}

impl PortClass {
    /// All classes, in OpenSM's order.
    pub const ALL: [PortClass; 4] = [PortClass::Ca, PortClass::Switch0, PortClass::SwitchExternal, PortClass::Router];

    /// The opensm.conf key prefix without the trailing `_` (`qos_ca`).
    pub fn prefix(self) -> &'static str {
        match self {
            PortClass::Ca => "qos_ca",
            PortClass::Switch0 => "qos_sw0",
            PortClass::SwitchExternal => "qos_swe",
            PortClass::Router => "qos_rtr",
        }
    }

    /// The TOML sub-table name (`ca`).
    pub fn toml_name(self) -> &'static str {
        &self.prefix()[4..]
    }
}

/// One of OpenSM's option sets (`osm_qos_options_t`); `None` means not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosSet {
    /// `*_max_vls`: operational data VLs, 1..=15.
    pub max_vls: Option<u8>,
    /// `*_high_limit`: `LimitOfHighPriority`.
    pub high_limit: Option<u8>,
    /// `*_vlarb_high`: high-priority arbitration table.
    pub vlarb_high: Option<Vec<(u8, u8)>>,
    /// `*_vlarb_low`: low-priority arbitration table.
    pub vlarb_low: Option<Vec<(u8, u8)>>,
    /// `*_sl2vl`: VL per SL, 15 = drop.
    pub sl2vl: Option<Sl2VlMap>,
}

/// Fully resolved settings for one class of port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QosParams {
    /// Operational data VLs.
    pub max_vls: u8,
    /// `LimitOfHighPriority`.
    pub high_limit: u8,
    /// High-priority table as configured (before folding onto a port's VLs).
    pub vlarb_high: Vec<(u8, u8)>,
    /// Low-priority table as configured.
    pub vlarb_low: Vec<(u8, u8)>,
    /// SL to VL as configured.
    pub sl2vl: Sl2VlMap,
}

impl QosParams {
    /// OpenSM's built-in defaults (`OSM_DEFAULT_QOS_*`).
    pub fn opensm_default() -> Self {
        QosParams {
            max_vls: OSM_DEFAULT_QOS_MAX_VLS,
            high_limit: OSM_DEFAULT_QOS_HIGH_LIMIT,
            vlarb_high: (0..15).map(|vl| (vl, if vl == 0 { 4 } else { 0 })).collect(),
            vlarb_low: (0..15).map(|vl| (vl, if vl == 0 { 0 } else { 4 })).collect(),
            sl2vl: std::array::from_fn(|sl| if sl == 15 { 7 } else { sl as u8 }),
        }
    }
}

/// An option kept verbatim for a later consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawOption {
    /// The cleaned value (comment cut, trimmed, quotes removed).
    pub value: String,
    /// Where it was read.
    pub loc: Location,
}

/// OpenSM's QoS options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosConfig {
    /// `qos`: whether the subnet manager programs QoS at all.
    pub enabled: bool,
    /// `qos_policy_file`, kept for reference; not read.
    pub policy_file: Option<String>,
    /// `qos_*`: the set every class falls back to.
    pub global: QosSet,
    /// `qos_ca_*`.
    pub ca: QosSet,
    /// `qos_sw0_*`.
    pub sw0: QosSet,
    /// `qos_swe_*`.
    pub swe: QosSet,
    /// `qos_rtr_*`.
    pub rtr: QosSet,
    /// `cc_*` and `congestion_control`, raw, in file order per key.
    pub cc_options: BTreeMap<String, Vec<RawOption>>,
}

/// The five settings of a set, as named after the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    MaxVls,
    HighLimit,
    VlarbHigh,
    VlarbLow,
    Sl2Vl,
}

const FIELDS: [(&str, Field); 5] = [
    ("max_vls", Field::MaxVls),
    ("high_limit", Field::HighLimit),
    ("vlarb_high", Field::VlarbHigh),
    ("vlarb_low", Field::VlarbLow),
    ("sl2vl", Field::Sl2Vl),
];

/// OpenSM's unset marker for string options (`null_str` in osm_subnet.c).
const NULL_STR: &str = "(null)";

impl QosConfig {
    /// The set of `class`, or the global set for `None`.
    pub fn set(&self, class: Option<PortClass>) -> &QosSet {
        match class {
            None => &self.global,
            Some(PortClass::Ca) => &self.ca,
            Some(PortClass::Switch0) => &self.sw0,
            Some(PortClass::SwitchExternal) => &self.swe,
            Some(PortClass::Router) => &self.rtr,
        }
    }

    fn set_mut(&mut self, class: Option<PortClass>) -> &mut QosSet {
        match class {
            None => &mut self.global,
            Some(PortClass::Ca) => &mut self.ca,
            Some(PortClass::Switch0) => &mut self.sw0,
            Some(PortClass::SwitchExternal) => &mut self.swe,
            Some(PortClass::Router) => &mut self.rtr,
        }
    }

    /// The settings ports of `class` get: each from the class's own set, else
    /// the global set, else OpenSM's default (`qos_build_config`).
    pub fn resolve(&self, class: PortClass) -> QosParams {
        let own = self.set(Some(class));
        let g = &self.global;
        let d = QosParams::opensm_default();
        QosParams {
            max_vls: own.max_vls.or(g.max_vls).unwrap_or(d.max_vls),
            high_limit: own.high_limit.or(g.high_limit).unwrap_or(d.high_limit),
            vlarb_high: own.vlarb_high.clone().or_else(|| g.vlarb_high.clone()).unwrap_or(d.vlarb_high),
            vlarb_low: own.vlarb_low.clone().or_else(|| g.vlarb_low.clone()).unwrap_or(d.vlarb_low),
            sl2vl: own.sl2vl.or(g.sl2vl).unwrap_or(d.sl2vl),
        }
    }

    /// Reads the QoS options of an opensm.conf file.
    pub fn read_opensm_conf(path: &Path) -> Result<Self, SmError> {
        let text = crate::error::read_text(path, "an opensm.conf file")?;
        Self::parse_opensm_conf(&text, Some(path))
    }

    /// Parses the QoS options of opensm.conf text; `file` is used in messages.
    pub fn parse_opensm_conf(text: &str, file: Option<&Path>) -> Result<Self, SmError> {
        let mut cfg = QosConfig::default();
        let mut options = 0usize;
        let mut first_line = None;
        for (i, raw) in text.lines().enumerate() {
            let loc = || Location::new(file.map(Path::to_path_buf), i + 1);
            // osm_subn_parse_conf_file cuts the line at its first '#'.
            let line = raw.split('#').next().unwrap_or("");
            let line = line.trim_start_matches(is_c_space);
            if line.is_empty() {
                continue;
            }
            let (key, rest) = line.split_once(is_c_space).unwrap_or((line, ""));
            let value = clean_val(rest);
            let fail = |msg: String| SmError::parse(loc(), format!("{key}: {msg}"));
            first_line.get_or_insert(i + 1);
            let lower = key.to_ascii_lowercase();
            if lower != key && (lower == "qos" || lower.starts_with("qos_") || lower == "congestion_control" || lower.starts_with("cc_")) {
                // OpenSM matches option names exactly, so it would skip this line without a word.
                return Err(fail(format!("OpenSM's option names are lower case; write '{lower}' (OpenSM ignores '{key}')")));
            }
            if key == "qos" || key.starts_with("qos_") || key == "congestion_control" || key.starts_with("cc_") {
                options += 1;
            }
            if key == "qos" {
                cfg.enabled = match value {
                    "TRUE" => true,
                    "FALSE" => false,
                    v => return Err(fail(format!("'{v}' is not TRUE or FALSE (OpenSM would read it as FALSE)"))),
                };
            } else if key == "qos_policy_file" {
                cfg.policy_file = (value != NULL_STR).then(|| value.to_string());
            } else if key.starts_with("qos_") {
                let (class, field) = lookup_key(key).ok_or_else(|| {
                    SmError::parse(
                        loc(),
                        format!(
                            "unknown QoS option '{key}'; OpenSM's are qos, qos_policy_file and \
                             qos[_ca|_sw0|_swe|_rtr]_{{max_vls,high_limit,vlarb_high,vlarb_low,sl2vl}}"
                        ),
                    )
                })?;
                set_from_opensm(cfg.set_mut(class), field, value).map_err(fail)?;
            } else if key == "congestion_control" || key.starts_with("cc_") {
                cfg.cc_options
                    .entry(key.to_string())
                    .or_default()
                    .push(RawOption { value: value.to_string(), loc: loc() });
            }
        }
        if let (0, Some(line)) = (options, first_line) {
            // Text with no QoS option at all is most likely not an opensm.conf.
            return Err(SmError::parse(
                Location::new(file.map(Path::to_path_buf), line),
                "no QoS option (qos, qos_max_vls, qos_sl2vl, ...) in the whole file; give an opensm.conf \
                 with QoS options, or leave the QoS file out",
            ));
        }
        Ok(cfg)
    }

    /// Writes the options in opensm.conf syntax (only those given, plus `qos`).
    pub fn to_opensm_conf(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "qos {}", if self.enabled { "TRUE" } else { "FALSE" });
        if let Some(p) = &self.policy_file {
            let _ = writeln!(out, "qos_policy_file {p}");
        }
        let sets = std::iter::once(("qos", &self.global))
            .chain(PortClass::ALL.iter().map(|&c| (c.prefix(), self.set(Some(c)))));
        for (prefix, set) in sets {
            for (name, value) in set_values(set) {
                let _ = writeln!(out, "{prefix}_{name} {value}");
            }
        }
        for (key, values) in &self.cc_options {
            for v in values {
                let _ = writeln!(out, "{key} {}", v.value);
            }
        }
        out
    }

    /// Reads a TOML document whose only top-level table is `[qos]` (absent: QoS off).
    pub fn from_toml_str(text: &str, file: Option<&Path>) -> Result<Self, SmError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Doc {
            qos: Option<QosSection>,
        }
        let doc: Doc = toml::from_str(text).map_err(|e| toml_error(&e, text, file))?;
        match doc.qos {
            Some(q) => q.to_config(text, file),
            None => Ok(QosConfig::default()),
        }
    }

    /// Writes the options as a `[qos]` TOML table (without `qos_policy_file` and
    /// the congestion-control keys, which have no TOML form).
    pub fn to_toml(&self) -> String {
        let mut out = String::from("[qos]\n");
        let _ = writeln!(out, "enabled = {}", self.enabled);
        write_toml_set(&mut out, &self.global);
        for c in PortClass::ALL {
            let set = self.set(Some(c));
            if *set != QosSet::default() {
                let _ = writeln!(out, "\n[qos.{}]", c.toml_name());
                write_toml_set(&mut out, set);
            }
        }
        out
    }

    /// Programs SL2VL and VL arbitration tables on every port of `fabric`, as
    /// OpenSM's `osm_qos_setup` (osm_qos.c) would.
    ///
    /// With `qos FALSE` OpenSM programs nothing; we then give every port
    /// `qos_max_vls` data VLs (15 by default), SL `i` to VL `i mod VLs`
    /// ([`Sl2VlTables::uniform`]) and no arbitration priority
    /// ([`VlArbConfig::uniform`]).
    ///
    /// With `qos TRUE`, each class's settings are [`QosConfig::resolve`]d, then:
    /// - Operational VLs. OpenSM does not set them from the QoS options: link
    ///   negotiation gives each port the smaller of its own and its peer's
    ///   `PortInfo:VLCap`, capped by the `max_op_vls` option
    ///   (`osm_physp_calc_link_op_vls`, osm_port.c), and `qos_build_config`
    ///   reads `qos[_ca|_sw0|_swe|_rtr]_max_vls` into a field osm_qos.c never
    ///   uses. Our fabric has no VLCap, so every port operates the global
    ///   `qos_max_vls` (15 by default), "the maximum number of VLs that will
    ///   be on the subnet" in OpenSM's doc/qos-config.txt, as hardware able to
    ///   run that many would. The prefixed `*_max_vls` are read and checked
    ///   but, as in OpenSM 3.3.23, change no table.
    /// - Switch external ports (`qos_extports_setup`): every output port `1..=n`
    ///   gets `swe`'s arbitration tables and high limit; every (input, output)
    ///   pair, input and output port 0 included, gets `swe`'s SL2VL table.
    /// - Switch port 0 (`qos_endport_setup` on the switch's port): `sw0`'s
    ///   arbitration tables and high limit, and `sw0`'s SL2VL table, which the
    ///   attribute modifier 0 OpenSM uses writes to the (0, 0) pair only. All
    ///   our switches count as having an enhanced port 0.
    /// - CA ports: `ca`'s settings. Routers do not exist in our fabric model.
    /// - Every VL written is masked to the port's operational VLs as
    ///   `sl2vl_update_table` and `vlarb_update_table_block` do,
    ///   `vl & ((1 << (OperationalVLs - 1)) - 1)` ([`super::fold_vl`]), VL15
    ///   in SL2VL tables excepted. So with `qos_max_vls 8` a switch port to a
    ///   CA keeps VLs 7, 6, 5, 4 of `qos_swe_sl2vl` even when `qos_ca_max_vls`
    ///   is 4 (ibnetsim before issue 12 folded them onto the CA's 4 VLs).
    /// - Arbitration tables are cut as OpenSM's `vlarb_update` writes them: the
    ///   first `min(cap, 32)` entries, then `cap % 32` more. Our ports hold 64
    ///   entries, and `64 % 32` is 0, so entries 32..=63 of a longer table reach
    ///   the port as weight 0 and are left out here, as arbitration skips them.
    ///   Missing entries are not padded (OpenSM pads with `0:0`, also skipped).
    /// - CA ports are all programmed; OpenSM reaches only the cabled ones, and
    ///   an uncabled port carries no traffic either way.
    pub fn apply(&self, fabric: &Fabric) -> (Sl2VlTables, VlArbTables) {
        if !self.enabled {
            let n = self.global.max_vls.unwrap_or(OSM_DEFAULT_QOS_MAX_VLS);
            let layout = Arc::new(PortLayout::from_fn(fabric, |_, _| n));
            return (Sl2VlTables::with_layout(layout.clone(), &uniform_map(n)), VlArbTables::with_layout(layout));
        }
        let ca = self.resolve(PortClass::Ca);
        let sw0 = self.resolve(PortClass::Switch0);
        let swe = self.resolve(PortClass::SwitchExternal);
        let class_of = |n: NodeId, p: PortNum| -> &QosParams {
            match (fabric.node(n).kind.is_switch(), p) {
                (true, 0) => &sw0,
                (true, _) => &swe,
                (false, _) => &ca,
            }
        };
        // Every port runs the subnet's VLs (see above): not the class's max_vls.
        let op_vls = self.global.max_vls.unwrap_or(OSM_DEFAULT_QOS_MAX_VLS);
        let layout = Arc::new(PortLayout::from_fn(fabric, |_, _| op_vls));
        let mut sl2vl = Sl2VlTables::with_layout(layout.clone(), &uniform_map(1));
        let mut vlarb = VlArbTables::with_layout(layout.clone());
        for n in fabric.ids() {
            let node = fabric.node(n);
            let first = if node.kind.is_switch() { 0 } else { 1 };
            for p in first..=node.num_ports {
                let params = class_of(n, p);
                let vls = layout.data_vls(n, p);
                let cap = vlarb.capacity(n, p);
                vlarb.put(
                    layout.slot(n, p),
                    VlArbConfig {
                        high: opensm_entries(&params.vlarb_high, cap.high, vls),
                        low: opensm_entries(&params.vlarb_low, cap.low, vls),
                        limit_of_high_priority: params.high_limit,
                    },
                );
                // A switch's SL2VL tables towards `p` come from swe, port 0 included.
                let sl_params = if node.kind.is_switch() { &swe } else { &ca };
                sl2vl.put_out_port(n, p, &fold_map(&sl_params.sl2vl, vls));
            }
            if node.kind.is_switch() {
                sl2vl.put_pair(n, 0, 0, &fold_map(&sw0.sl2vl, layout.data_vls(n, 0)));
            }
            sl2vl.compact(n);
        }
        (sl2vl, vlarb)
    }
}

fn fold_map(map: &Sl2VlMap, data_vls: u8) -> Sl2VlMap {
    map.map(|vl| fold_vl(vl, data_vls))
}

/// Finds the set and field a `qos_*` key names.
fn lookup_key(key: &str) -> Option<(Option<PortClass>, Field)> {
    let prefixes = PortClass::ALL.iter().map(|&c| (c.prefix(), Some(c))).chain(std::iter::once(("qos", None)));
    for (prefix, class) in prefixes {
        if let Some(rest) = key.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')) {
            if let Some(&(_, f)) = FIELDS.iter().find(|(name, _)| *name == rest) {
                return Some((class, f));
            }
        }
    }
    None
}

/// Stores one opensm.conf value, honouring OpenSM's unset markers.
fn set_from_opensm(set: &mut QosSet, field: Field, value: &str) -> Result<(), String> {
    match field {
        Field::MaxVls => {
            let v = c_int(value).ok_or_else(|| format!("'{value}' is not a number of VLs (1..=15, or 0 for unset)"))?;
            set.max_vls = match v {
                0 => None,
                1..=15 => Some(v as u8),
                _ => return Err(format!("{v} is out of range; expected 1..=15 data VLs (0 leaves it unset)")),
            };
        }
        Field::HighLimit => {
            let v = c_int(value).ok_or_else(|| format!("'{value}' is not a number (0..=255, or -1 for unset)"))?;
            set.high_limit = match v {
                -1 => None,
                0..=255 => Some(v as u8),
                _ => return Err(format!("{v} is out of range; expected 0..=255 (-1 leaves it unset)")),
            };
        }
        Field::VlarbHigh => set.vlarb_high = opt_unless_null(value, parse_vlarb)?,
        Field::VlarbLow => set.vlarb_low = opt_unless_null(value, parse_vlarb)?,
        Field::Sl2Vl => set.sl2vl = opt_unless_null(value, parse_sl2vl)?,
    }
    Ok(())
}

fn opt_unless_null<T>(value: &str, parse: fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    if value == NULL_STR {
        Ok(None)
    } else {
        parse(value).map(Some)
    }
}

/// The given settings of a set as (name, text) pairs, in OpenSM's order.
fn set_values(set: &QosSet) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if let Some(x) = set.max_vls {
        v.push(("max_vls", x.to_string()));
    }
    if let Some(x) = set.high_limit {
        v.push(("high_limit", x.to_string()));
    }
    if let Some(x) = &set.vlarb_high {
        v.push(("vlarb_high", format_vlarb(x)));
    }
    if let Some(x) = &set.vlarb_low {
        v.push(("vlarb_low", format_vlarb(x)));
    }
    if let Some(x) = &set.sl2vl {
        v.push(("sl2vl", format_sl2vl(x)));
    }
    v
}

fn write_toml_set(out: &mut String, set: &QosSet) {
    for (name, value) in set_values(set) {
        let _ = match name {
            "max_vls" | "high_limit" => writeln!(out, "{name} = {value}"),
            _ => writeln!(out, "{name} = \"{value}\""),
        };
    }
}

/// C's `isspace` in the "C" locale.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// OpenSM's `clean_val`: trim, then drop one pair of surrounding quotes.
fn clean_val(v: &str) -> &str {
    let v = v.trim_matches(is_c_space);
    for q in ['"', '\''] {
        if v.starts_with(q) && v.ends_with(q) {
            return if v.len() >= 2 { &v[1..v.len() - 1] } else { "" };
        }
    }
    v
}

/// A whole C integer as `strtol(s, &end, 0)` reads it, with nothing after it:
/// optional leading space, sign, then decimal, `0x` hex or leading-`0` octal.
fn c_int(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(is_c_space);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (16, hex),
        None if t.len() > 1 && t.starts_with('0') => (8, &t[1..]),
        None => (10, t),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Splits a comma list, accepting one trailing comma as OpenSM does.
fn list_items(s: &str) -> Result<Vec<&str>, String> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut items: Vec<&str> = s.split(',').collect();
    if items.len() > 1 && items.last() == Some(&"") {
        items.pop();
    }
    match items.iter().position(|t| t.trim_matches(is_c_space).is_empty()) {
        Some(i) => Err(format!("entry {} of '{s}' is empty", i + 1)),
        None => Ok(items),
    }
}

/// Parses a VL arbitration table, `VL:weight,VL:weight,...` (empty: no entries).
pub fn parse_vlarb(s: &str) -> Result<Vec<(u8, u8)>, String> {
    let s = s.trim_matches(is_c_space);
    let items = list_items(s)?;
    if items.len() > VLARB_MAX_ENTRIES {
        return Err(format!("{} entries listed; a VL arbitration table holds at most 64", items.len()));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = || format!("entry {} ('{item}')", i + 1);
            let (v, w) = item.split_once(':').ok_or_else(|| format!("{} is not VL:weight", at()))?;
            let vl = c_int(v).ok_or_else(|| format!("{}: VL '{v}' is not a number", at()))?;
            if !(0..=MAX_ARB_VL).contains(&vl) {
                return Err(format!("{}: VL {vl} is out of range; arbitration entries name data VLs 0..=14", at()));
            }
            let weight = c_int(w).ok_or_else(|| format!("{}: weight '{w}' is not a number", at()))?;
            if !(0..=255).contains(&weight) {
                return Err(format!("{}: weight {weight} is out of range 0..=255", at()));
            }
            Ok((vl as u8, weight as u8))
        })
        .collect()
}

/// Parses an SL2VL table: 16 comma-separated VLs for SL 0..=15 (15 = drop).
pub fn parse_sl2vl(s: &str) -> Result<Sl2VlMap, String> {
    let s = s.trim_matches(is_c_space);
    let items = list_items(s)?;
    if items.len() != 16 {
        return Err(format!("{} VLs listed; expected 16, one for each SL 0..=15", items.len()));
    }
    let mut map = [0u8; 16];
    for (sl, item) in items.iter().enumerate() {
        let vl = c_int(item).ok_or_else(|| format!("SL {sl}: '{item}' is not a number"))?;
        if !(0..=VL_DROP as i64).contains(&vl) {
            return Err(format!("SL {sl}: VL {vl} is out of range; expected 0..=14, or 15 to drop the SL"));
        }
        map[sl] = vl as u8;
    }
    Ok(map)
}

/// Writes a VL arbitration table as `VL:weight,...`.
pub fn format_vlarb(table: &[(u8, u8)]) -> String {
    table.iter().map(|(vl, w)| format!("{vl}:{w}")).collect::<Vec<_>>().join(",")
}

/// Writes an SL2VL table as 16 comma-separated VLs.
pub fn format_sl2vl(map: &Sl2VlMap) -> String {
    map.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

fn toml_error(e: &toml::de::Error, text: &str, file: Option<&Path>) -> SmError {
    let line = e.span().map(|s| line_of(text, s.start));
    let mut msg = e.message().trim().to_string();
    if let Some(l) = line {
        if let Some(src) = text.lines().nth(l - 1) {
            let _ = write!(msg, " (at `{}`)", src.trim());
        }
    }
    SmError::Parse { loc: Location { file: file.map(Path::to_path_buf), line }, msg }
}

/// The five settings of a TOML set table (`[qos.ca]`, ...).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QosSetSection {
    /// `max_vls`, 1..=15.
    pub max_vls: Option<Spanned<i64>>,
    /// `high_limit`, 0..=255.
    pub high_limit: Option<Spanned<i64>>,
    /// `vlarb_high`, `"VL:weight,..."`.
    pub vlarb_high: Option<Spanned<String>>,
    /// `vlarb_low`, `"VL:weight,..."`.
    pub vlarb_low: Option<Spanned<String>>,
    /// `sl2vl`, 16 comma-separated VLs.
    pub sl2vl: Option<Spanned<String>>,
}

/// The `[qos]` table of a scenario file; embed it in a larger schema and call
/// [`QosSection::to_config`] with the document's text for line numbers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QosSection {
    /// `qos`; true when omitted, since writing `[qos]` asks for QoS.
    pub enabled: Option<bool>,
    /// `qos_max_vls`.
    pub max_vls: Option<Spanned<i64>>,
    /// `qos_high_limit`.
    pub high_limit: Option<Spanned<i64>>,
    /// `qos_vlarb_high`.
    pub vlarb_high: Option<Spanned<String>>,
    /// `qos_vlarb_low`.
    pub vlarb_low: Option<Spanned<String>>,
    /// `qos_sl2vl`.
    pub sl2vl: Option<Spanned<String>>,
    /// `qos_ca_*`.
    pub ca: Option<QosSetSection>,
    /// `qos_sw0_*`.
    pub sw0: Option<QosSetSection>,
    /// `qos_swe_*`.
    pub swe: Option<QosSetSection>,
    /// `qos_rtr_*`.
    pub rtr: Option<QosSetSection>,
}

impl QosSection {
    /// Checks every value and builds the configuration. `source` is the text
    /// the section was deserialized from (spans index into it), `file` its path.
    pub fn to_config(&self, source: &str, file: Option<&Path>) -> Result<QosConfig, SmError> {
        let global = QosSetSection {
            max_vls: self.max_vls.clone(),
            high_limit: self.high_limit.clone(),
            vlarb_high: self.vlarb_high.clone(),
            vlarb_low: self.vlarb_low.clone(),
            sl2vl: self.sl2vl.clone(),
        };
        let ctx = TomlCtx { source, file: file.map(Path::to_path_buf) };
        let mut cfg =
            QosConfig { enabled: self.enabled.unwrap_or(true), global: ctx.set("qos", &global)?, ..Default::default() };
        for class in PortClass::ALL {
            let section = match class {
                PortClass::Ca => &self.ca,
                PortClass::Switch0 => &self.sw0,
                PortClass::SwitchExternal => &self.swe,
                PortClass::Router => &self.rtr,
            };
            if let Some(s) = section {
                *cfg.set_mut(Some(class)) = ctx.set(&format!("qos.{}", class.toml_name()), s)?;
            }
        }
        Ok(cfg)
    }
}

struct TomlCtx<'a> {
    source: &'a str,
    file: Option<PathBuf>,
}

impl TomlCtx<'_> {
    fn err<T>(&self, key: &str, span: std::ops::Range<usize>, msg: String) -> Result<T, SmError> {
        Err(SmError::parse(Location::new(self.file.clone(), line_of(self.source, span.start)), format!("{key}: {msg}")))
    }

    fn int(&self, key: &str, v: &Option<Spanned<i64>>, max: i64, min: i64) -> Result<Option<u8>, SmError> {
        match v {
            None => Ok(None),
            Some(s) if (min..=max).contains(s.get_ref()) => Ok(Some(*s.get_ref() as u8)),
            Some(s) => self.err(key, s.span(), format!("{} is out of range; expected {min}..={max}", s.get_ref())),
        }
    }

    fn text<T>(
        &self,
        key: &str,
        v: &Option<Spanned<String>>,
        parse: fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, SmError> {
        match v {
            None => Ok(None),
            Some(s) => match parse(s.get_ref()) {
                Ok(t) => Ok(Some(t)),
                Err(m) => self.err(key, s.span(), m),
            },
        }
    }

    fn set(&self, prefix: &str, s: &QosSetSection) -> Result<QosSet, SmError> {
        let key = |name: &str| format!("{prefix}.{name}");
        Ok(QosSet {
            max_vls: self.int(&key("max_vls"), &s.max_vls, MAX_DATA_VLS as i64, 1)?,
            high_limit: self.int(&key("high_limit"), &s.high_limit, 255, 0)?,
            vlarb_high: self.text(&key("vlarb_high"), &s.vlarb_high, parse_vlarb)?,
            vlarb_low: self.text(&key("vlarb_low"), &s.vlarb_low, parse_vlarb)?,
            sl2vl: self.text(&key("sl2vl"), &s.sl2vl, parse_sl2vl)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibnetsim_fabric::LinkSpec;
    use proptest::prelude::*;

    fn conf(text: &str) -> Result<QosConfig, SmError> {
        QosConfig::parse_opensm_conf(text, Some(Path::new("etc/opensm.conf")))
    }

    fn err(text: &str) -> String {
        conf(text).unwrap_err().to_string()
    }

    /// s0 and s1 (4 ports each) joined on port 4; h0, h1 on s0 ports 1-2; h2 on s1 port 1.
    fn fabric() -> Fabric {
        let mut f = Fabric::new();
        let s0 = f.add_switch("s0", 4).unwrap();
        let s1 = f.add_switch("s1", 4).unwrap();
        f.connect(s0, 4, s1, 4, LinkSpec::default()).unwrap();
        for (i, (s, p)) in [(s0, 1), (s0, 2), (s1, 1)].into_iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(s, p, h, 1, LinkSpec::default()).unwrap();
        }
        f
    }

    #[test]
    fn opensm_default_strings_parse_to_the_defaults() {
        let d = QosParams::opensm_default();
        assert_eq!(parse_vlarb(OSM_DEFAULT_QOS_VLARB_HIGH).unwrap(), d.vlarb_high);
        assert_eq!(parse_vlarb(OSM_DEFAULT_QOS_VLARB_LOW).unwrap(), d.vlarb_low);
        assert_eq!(parse_sl2vl(OSM_DEFAULT_QOS_SL2VL).unwrap(), d.sl2vl);
        assert_eq!(d.vlarb_high[0], (0, 4));
        assert_eq!(d.vlarb_high[14], (14, 0));
        assert_eq!(d.vlarb_low[0], (0, 0));
        assert_eq!(d.vlarb_low[9], (9, 4));
        assert_eq!(d.sl2vl[15], 7);
        assert_eq!((d.max_vls, d.high_limit), (15, 0));
        for class in PortClass::ALL {
            assert_eq!(QosConfig::default().resolve(class), d);
        }
    }

    #[test]
    fn qos_off_gives_uniform_tables() {
        let f = fabric();
        let (s, a) = conf("qos FALSE\nqos_max_vls 4\nqos_sl2vl 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n").unwrap().apply(&f);
        let s0 = f.node_by_name("s0").unwrap();
        let h2 = f.node_by_name("h2").unwrap();
        assert_eq!(s.data_vls(), 4);
        assert_eq!(s.vl(s0, 1, 4, 6), 2);
        assert_eq!(s.vl(h2, 0, 1, 15), 3);
        assert_eq!(a.get(s0, 0), &VlArbConfig::uniform(4));
        assert_eq!(a.get(h2, 1), &VlArbConfig::uniform(4));
        let (s, _) = QosConfig::default().apply(&f);
        assert_eq!(s.data_vls(), 15);
        assert_eq!(s.vl(s0, 2, 3, 14), 14);
        assert_eq!(s.vl(s0, 2, 3, 15), 0);
    }

    #[test]
    fn qos_on_with_defaults_programs_opensm_tables() {
        let f = fabric();
        let s0 = f.node_by_name("s0").unwrap();
        let h0 = f.node_by_name("h0").unwrap();
        let (s, a) = conf("qos TRUE\n").unwrap().apply(&f);
        // 15 VLs: OpenSM's default maps SL15 to VL7.
        assert_eq!(s.table(s0, 1, 4), &parse_sl2vl(OSM_DEFAULT_QOS_SL2VL).unwrap());
        assert_eq!(s.vl(h0, 0, 1, 15), 7);
        let d = QosParams::opensm_default();
        assert_eq!(
            a.get(s0, 3),
            &VlArbConfig { high: d.vlarb_high.clone(), low: d.vlarb_low.clone(), limit_of_high_priority: 0 }
        );
        // 8 VLs: the mask folds VL 8..14 onto 0..6, exactly SL i -> i mod 8.
        let (s, a) = conf("qos TRUE\nqos_max_vls 8\n").unwrap().apply(&f);
        for sl in 0..16u8 {
            assert_eq!(s.vl(s0, 2, 1, sl), sl % 8);
        }
        assert_eq!(
            a.get(h0, 1).low,
            vec![
                (0, 0),
                (1, 4),
                (2, 4),
                (3, 4),
                (4, 4),
                (5, 4),
                (6, 4),
                (7, 4),
                (0, 4),
                (1, 4),
                (2, 4),
                (3, 4),
                (4, 4),
                (5, 4),
                (6, 4)
            ]
        );
        assert_eq!(a.get(h0, 1).high[8], (0, 0));
        // One table per distinct (class, VLs): the whole fabric shares one SL2VL table here.
        assert_eq!(s.index_entries(), f.num_nodes());
    }

    #[test]
    fn long_arbitration_tables_lose_entries_beyond_32_as_in_opensm() {
        let f = fabric();
        let low: Vec<String> = (0..40).map(|i| format!("{}:{}", i % 15, i + 1)).collect();
        let (_, a) = conf(&format!("qos TRUE\nqos_vlarb_low {}\n", low.join(","))).unwrap().apply(&f);
        let s0 = f.node_by_name("s0").unwrap();
        let got = &a.get(s0, 4).low;
        assert_eq!(got.len(), 32);
        assert_eq!(got[31], (1, 32));
    }

    const SNIPPET: &str = "\
# QoS for the two-switch test fabric
qos TRUE
qos_policy_file /etc/opensm/qos-policy.conf
qos_max_vls 8
qos_high_limit 10
qos_vlarb_high 0:8,1:4   # VL0 and VL1 first
qos_vlarb_low 2:1,3:1,4:1,5:1,6:1,7:1,8:2
qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
qos_ca_max_vls 4
qos_ca_sl2vl \"1,1,2,2,3,3,0,0,15,15,1,1,2,2,3,3\"
qos_swe_high_limit 0xff
qos_sw0_vlarb_low 0:32
qos_sw0_sl2vl 7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7
routing_engine updn
lmc 2
";

    #[test]
    fn snippet_programs_exact_tables() {
        let f = fabric();
        let cfg = conf(SNIPPET).unwrap();
        assert_eq!(cfg.policy_file.as_deref(), Some("/etc/opensm/qos-policy.conf"));
        let (s, a) = cfg.apply(&f);
        let [s0, s1, h0, _h1, h2] = ["s0", "s1", "h0", "h1", "h2"].map(|n| f.node_by_name(n).unwrap());

        // Operational VLs: qos_max_vls 8 on every port. OpenSM masks by the
        // port's OperationalVLs (osm_qos.c sl2vl_update_table), which link
        // negotiation sets, and never reads qos_ca_max_vls 4; before issue 12
        // CA links ran min(4, 8) = 4 here.
        assert_eq!(s.port_data_vls(s0, 1), 8);
        assert_eq!(s.port_data_vls(s0, 4), 8);
        assert_eq!(s.port_data_vls(s0, 3), 8);
        assert_eq!(s.port_data_vls(s0, 0), 8);
        assert_eq!(s.port_data_vls(h2, 1), 8);
        assert_eq!(s.data_vls(), 8);

        // Switch pairs: the global SL2VL folded onto the output port; SL15 dropped.
        let to_switch: Vec<u8> = (0..16).map(|sl| s.vl(s0, 1, 4, sl)).collect();
        assert_eq!(to_switch, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15]);
        // Towards a host too: VL & 7 (was VL mod 4, [0, 1, 2, 3, 0, 1, 2, 3, ...]).
        let to_host: Vec<u8> = (0..16).map(|sl| s.vl(s1, 4, 1, sl)).collect();
        assert_eq!(to_host, to_switch);
        assert_eq!(s.table(s0, 3, 0), s.table(s0, 1, 4));
        assert_eq!(s.table(s0, 0, 4), s.table(s0, 1, 4));
        // sw0's SL2VL reaches only the (0, 0) pair.
        assert_eq!(s.table(s0, 0, 0), &[7; 16]);
        // CAs: their own table, unchanged by masking to 8 VLs.
        assert_eq!(s.table(h0, 0, 1), &[1, 1, 2, 2, 3, 3, 0, 0, 15, 15, 1, 1, 2, 2, 3, 3]);

        // Arbitration: swe ports take the global tables, folded, with swe's limit.
        let high = vec![(0, 8), (1, 4)];
        assert_eq!(
            a.get(s0, 4),
            &VlArbConfig {
                high: high.clone(),
                low: vec![(2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (0, 2)],
                limit_of_high_priority: 255
            }
        );
        // Ports facing a host take the same 8-VL masking (VL 8 -> 0), not the
        // 4-VL one (was 2:1,3:1,0:1,1:1,2:1,3:1,0:2).
        let low8 = vec![(2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (0, 2)];
        assert_eq!(a.get(s0, 2), &VlArbConfig { high: high.clone(), low: low8.clone(), limit_of_high_priority: 255 });
        assert_eq!(a.get(s0, 0), &VlArbConfig { high: high.clone(), low: vec![(0, 32)], limit_of_high_priority: 10 });
        assert_eq!(a.get(h0, 1), &VlArbConfig { high, low: low8, limit_of_high_priority: 10 });
        // Three distinct settings over 13 ports (swe, sw0, ca), plus the one VL count's starting table.
        assert_eq!(a.pool_len(), 3 + 1);
    }

    #[test]
    fn switch_ports_to_cas_are_masked_by_operational_vls_not_qos_ca_max_vls() {
        // osm_qos.c sl2vl_update_table: vl_mask = (1 << (op_vls - 1)) - 1 with
        // op_vls the port's OperationalVLs (4 = VL0..VL7 here), VL15 kept;
        // cfg->max_vls (qos_ca_max_vls) is never read. So 7,6,5,4 stay 7,6,5,4
        // (the old rule folded them onto the CA's 4 VLs: 3,2,1,0).
        let f = fabric();
        let cfg = conf(
            "qos TRUE\nqos_max_vls 8\nqos_ca_max_vls 4\n\
             qos_swe_sl2vl 7,6,5,4,3,2,1,0,7,6,5,4,3,2,1,15\n\
             qos_swe_vlarb_low 7:1,6:2,5:3,4:4\n",
        )
        .unwrap();
        let (s, a) = cfg.apply(&f);
        let [s1, h0] = ["s1", "h0"].map(|n| f.node_by_name(n).unwrap());
        let to_host: Vec<u8> = (0..16).map(|sl| s.vl(s1, 4, 1, sl)).collect();
        assert_eq!(to_host, [7, 6, 5, 4, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 15]);
        let host_port = f.peer(h0, 1).unwrap();
        assert_eq!(a.get(host_port.node, host_port.port).low, vec![(7, 1), (6, 2), (5, 3), (4, 4)]);
        assert_eq!(s.port_data_vls(h0, 1), 8);
        // qos_max_vls 4 is the subnet's VLs: then the mask is 3 everywhere.
        let (s, _) = conf("qos TRUE\nqos_max_vls 4\nqos_swe_sl2vl 7,6,5,4,3,2,1,0,7,6,5,4,3,2,1,15\n").unwrap().apply(&f);
        let to_host: Vec<u8> = (0..16).map(|sl| s.vl(s1, 4, 1, sl)).collect();
        assert_eq!(to_host, [3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 15]);
    }

    #[test]
    fn prefixed_options_take_precedence_over_global_over_default() {
        let cfg = conf(
            "qos TRUE\n\
             qos_max_vls 4\n\
             qos_vlarb_low 0:1\n\
             qos_ca_max_vls 2\n\
             qos_ca_vlarb_low 1:9\n\
             qos_sw0_high_limit 3\n\
             qos_swe_sl2vl 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1\n\
             qos_rtr_vlarb_high 2:2\n",
        )
        .unwrap();
        let d = QosParams::opensm_default();
        let ca = cfg.resolve(PortClass::Ca);
        assert_eq!(
            (ca.max_vls, ca.high_limit, ca.vlarb_low, ca.vlarb_high),
            (2, 0, vec![(1, 9)], d.vlarb_high.clone())
        );
        let sw0 = cfg.resolve(PortClass::Switch0);
        assert_eq!((sw0.max_vls, sw0.high_limit, sw0.vlarb_low, sw0.sl2vl), (4, 3, vec![(0, 1)], d.sl2vl));
        let swe = cfg.resolve(PortClass::SwitchExternal);
        assert_eq!((swe.high_limit, swe.sl2vl[15], swe.sl2vl[0]), (0, 1, 0));
        let rtr = cfg.resolve(PortClass::Router);
        assert_eq!((rtr.vlarb_high, rtr.vlarb_low), (vec![(2, 2)], vec![(0, 1)]));
        // The last occurrence of a key wins.
        assert_eq!(conf("qos_max_vls 2\nqos_max_vls 8\n").unwrap().global.max_vls, Some(8));
    }

    #[test]
    fn opensm_generated_unset_markers_mean_not_given() {
        // What `opensm -c` writes (osm_subn_output_conf) for options never set.
        let text = "\
#
# QoS OPTIONS
#
# Enable QoS setup
qos FALSE

# QoS policy file to be used
qos_policy_file /etc/opensm/qos-policy.conf
# Supress QoS MAD status errors
suppress_sl2vl_mad_status_errors FALSE

# QoS default options
qos_max_vls 0
qos_high_limit -1
qos_vlarb_high (null)
qos_vlarb_low (null)
qos_sl2vl (null)

# QoS CA options
qos_ca_max_vls 0
qos_ca_high_limit -1
qos_ca_vlarb_high (null)
qos_ca_vlarb_low (null)
qos_ca_sl2vl (null)
";
        let cfg = conf(text).unwrap();
        assert!(!cfg.enabled);
        assert_eq!(cfg.global, QosSet::default());
        assert_eq!(cfg.ca, QosSet::default());
        // An explicit unset marker also undoes an earlier value.
        let cfg = conf(
            "qos_ca_max_vls 4\nqos_ca_max_vls 0\nqos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\nqos_sl2vl (null)",
        )
        .unwrap();
        assert_eq!(cfg.ca.max_vls, None);
        assert_eq!(cfg.global.sl2vl, None);
    }

    #[test]
    fn value_syntax_follows_opensm() {
        let cfg = conf(
            "  qos\tTRUE  \n\
             qos_max_vls 010\n\
             qos_high_limit 0x10 # sixteen\n\
             qos_vlarb_high ' 0:0x4, 1:04,'\n\
             qos_vlarb_low\n\
             qos_sl2vl +0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15,\r\n",
        )
        .unwrap();
        assert!(cfg.enabled);
        assert_eq!(cfg.global.max_vls, Some(8));
        assert_eq!(cfg.global.high_limit, Some(16));
        assert_eq!(cfg.global.vlarb_high, Some(vec![(0, 4), (1, 4)]));
        assert_eq!(cfg.global.vlarb_low, Some(vec![]));
        assert_eq!(cfg.global.sl2vl, Some([0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15]));
        assert_eq!(c_int("0x"), None);
        assert_eq!(c_int("08"), None);
        assert_eq!(c_int("-7"), Some(-7));
        assert_eq!(clean_val(" \"x y\" "), "x y");
        assert_eq!(clean_val("'"), "");
    }

    #[test]
    fn cc_keys_are_kept_raw_and_others_ignored() {
        let cfg = conf(
            "congestion_control TRUE\n\
             cc_key 0x0000000000000000\n\
             sm_priority 15\n\
             cc_ca_cong_setting_ccti_timer 0 100\n\
             cc_ca_cong_setting_ccti_timer 1 200  # SL 1\n\
             qosx 3\n",
        )
        .unwrap();
        let loc = |l| Location::new(Some(PathBuf::from("etc/opensm.conf")), l);
        assert_eq!(cfg.cc_options.len(), 3);
        assert_eq!(cfg.cc_options["congestion_control"], vec![RawOption { value: "TRUE".into(), loc: loc(1) }]);
        assert_eq!(
            cfg.cc_options["cc_ca_cong_setting_ccti_timer"],
            vec![RawOption { value: "0 100".into(), loc: loc(4) }, RawOption { value: "1 200".into(), loc: loc(5) }]
        );
        assert_eq!(cfg.global, QosSet::default());
        assert!(cfg.to_opensm_conf().contains("cc_ca_cong_setting_ccti_timer 1 200\n"));
    }

    #[test]
    fn every_opensm_conf_error_names_file_line_and_key() {
        let cases: &[(&str, &str)] = &[
            ("qos_foo 1", "etc/opensm.conf:1: unknown QoS option 'qos_foo'; OpenSM's are qos, qos_policy_file and qos[_ca|_sw0|_swe|_rtr]_{max_vls,high_limit,vlarb_high,vlarb_low,sl2vl}"),
            ("\nqos_ca_max_vl 3", "etc/opensm.conf:2: unknown QoS option 'qos_ca_max_vl'"),
            ("qos true", "etc/opensm.conf:1: qos: 'true' is not TRUE or FALSE (OpenSM would read it as FALSE)"),
            ("qos", "etc/opensm.conf:1: qos: '' is not TRUE or FALSE"),
            ("qos_max_vls 16", "etc/opensm.conf:1: qos_max_vls: 16 is out of range; expected 1..=15 data VLs (0 leaves it unset)"),
            ("qos_sw0_max_vls eight", "etc/opensm.conf:1: qos_sw0_max_vls: 'eight' is not a number of VLs (1..=15, or 0 for unset)"),
            ("qos_swe_high_limit 256", "etc/opensm.conf:1: qos_swe_high_limit: 256 is out of range; expected 0..=255 (-1 leaves it unset)"),
            ("qos_high_limit -2", "etc/opensm.conf:1: qos_high_limit: -2 is out of range"),
            ("qos_high_limit 1.5", "etc/opensm.conf:1: qos_high_limit: '1.5' is not a number (0..=255, or -1 for unset)"),
            ("qos_vlarb_high 0:4,1", "etc/opensm.conf:1: qos_vlarb_high: entry 2 ('1') is not VL:weight"),
            ("qos_vlarb_low 0:4,,1:0", "etc/opensm.conf:1: qos_vlarb_low: entry 2 of '0:4,,1:0' is empty"),
            ("qos_ca_vlarb_low 15:4", "etc/opensm.conf:1: qos_ca_vlarb_low: entry 1 ('15:4'): VL 15 is out of range; arbitration entries name data VLs 0..=14"),
            ("qos_rtr_vlarb_high x:4", "etc/opensm.conf:1: qos_rtr_vlarb_high: entry 1 ('x:4'): VL 'x' is not a number"),
            ("qos_vlarb_high 0:256", "etc/opensm.conf:1: qos_vlarb_high: entry 1 ('0:256'): weight 256 is out of range 0..=255"),
            ("qos_vlarb_high 0:4 ,1:0", "etc/opensm.conf:1: qos_vlarb_high: entry 1 ('0:4 '): weight '4 ' is not a number"),
            ("qos_sl2vl 0,1,2", "etc/opensm.conf:1: qos_sl2vl: 3 VLs listed; expected 16, one for each SL 0..=15"),
            ("qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0", "etc/opensm.conf:1: qos_sl2vl: 17 VLs listed"),
            ("qos_swe_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,16", "etc/opensm.conf:1: qos_swe_sl2vl: SL 15: VL 16 is out of range; expected 0..=14, or 15 to drop the SL"),
            ("qos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,a", "etc/opensm.conf:1: qos_sl2vl: SL 15: 'a' is not a number"),
        ];
        for (text, want) in cases {
            let got = err(text);
            assert!(got.starts_with(want), "for {text:?}\n got: {got}\nwant: {want}");
        }
        let long = format!("qos_vlarb_low {}", vec!["1:1"; 65].join(","));
        assert_eq!(
            err(&long),
            "etc/opensm.conf:1: qos_vlarb_low: 65 entries listed; a VL arbitration table holds at most 64"
        );
        let missing = QosConfig::read_opensm_conf(Path::new("/nonexistent/opensm.conf")).unwrap_err();
        assert!(matches!(missing, SmError::Io { .. }), "{missing}");
    }

    const TOML_FORM: &str = r#"
[qos]
max_vls = 8
high_limit = 10
vlarb_high = "0:8,1:4"
vlarb_low = "2:1,3:1,4:1,5:1,6:1,7:1,8:2"
sl2vl = "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"

[qos.ca]
max_vls = 4
sl2vl = "1,1,2,2,3,3,0,0,15,15,1,1,2,2,3,3"

[qos.swe]
high_limit = 255

[qos.sw0]
vlarb_low = "0:32"
sl2vl = "7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7"
"#;

    fn all_lookups(f: &Fabric, s: &Sl2VlTables, a: &VlArbTables) -> (Vec<u8>, Vec<VlArbConfig>) {
        let mut vls = Vec::new();
        let mut arb = Vec::new();
        for n in f.ids() {
            let ports = f.node(n).num_ports;
            let first = if f.node(n).kind.is_switch() { 0 } else { 1 };
            for o in first..=ports {
                arb.push(a.get(n, o).clone());
                for i in 0..=ports {
                    vls.extend((0..16).map(|sl| s.vl(n, i, o, sl)));
                }
            }
        }
        (vls, arb)
    }

    #[test]
    fn toml_and_opensm_conf_forms_are_equivalent() {
        let f = fabric();
        let from_conf = conf(SNIPPET).unwrap();
        let from_toml = QosConfig::from_toml_str(TOML_FORM, Some(Path::new("scenario.toml"))).unwrap();
        let mut conf_qos_only = from_conf.clone();
        conf_qos_only.policy_file = None;
        assert_eq!(from_toml, conf_qos_only);
        let (s1, a1) = from_conf.apply(&f);
        let (s2, a2) = from_toml.apply(&f);
        assert_eq!(all_lookups(&f, &s1, &a1), all_lookups(&f, &s2, &a2));
        // No [qos] table: QoS off.
        assert_eq!(QosConfig::from_toml_str("", None).unwrap(), QosConfig::default());
        assert!(!QosConfig::from_toml_str("[qos]\nenabled = false\n", None).unwrap().enabled);
    }

    #[test]
    fn keys_that_only_look_like_opensm_options_and_files_with_none_are_refused() {
        let p = Some(Path::new("opensm.conf"));
        let err = QosConfig::parse_opensm_conf("qos TRUE\nQOS_MAX_VLS 2\n", p).unwrap_err().to_string();
        assert_eq!(err, "opensm.conf:2: QOS_MAX_VLS: OpenSM's option names are lower case; write 'qos_max_vls' (OpenSM ignores 'QOS_MAX_VLS')");
        let passwd = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
        let err = QosConfig::parse_opensm_conf(passwd, p).unwrap_err().to_string();
        assert!(err.starts_with("opensm.conf:1: no QoS option (qos, qos_max_vls"), "{err}");
        // Other OpenSM options beside QoS ones are fine, and so is a file of comments only.
        assert!(QosConfig::parse_opensm_conf("sm_priority 15\nqos FALSE\n", p).is_ok());
        assert_eq!(QosConfig::parse_opensm_conf("# nothing\n\n", p).unwrap(), QosConfig::default());
    }

    #[test]
    fn an_opensm_conf_that_is_not_text_or_not_a_file_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("ibnetsim-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("opensm.conf");
        std::fs::write(&conf, b"qos TRUE\nqos_max_vls 4\xff\n").unwrap();
        let err = QosConfig::read_opensm_conf(&conf).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:2: ", conf.display())), "{err}");
        let err = QosConfig::read_opensm_conf(&dir).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: not a regular file (a directory, device or pipe); give an opensm.conf file", dir.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_toml_error_names_file_line_and_key() {
        let p = Some(Path::new("scenario.toml"));
        let cases: &[(&str, &str)] = &[
            ("[qos]\nmax_vl = 3\n", "scenario.toml:2: unknown field `max_vl`"),
            ("[qos.ca]\npolicy_file = 'x'\n", "scenario.toml:2: unknown field `policy_file`"),
            ("[qos]\n[qos.router]\n", "scenario.toml:2: unknown field `router`"),
            ("[routing]\n", "scenario.toml:1: unknown field `routing`"),
            ("[qos]\nmax_vls = 0\n", "scenario.toml:2: qos.max_vls: 0 is out of range; expected 1..=15"),
            (
                "[qos]\n\n[qos.swe]\nhigh_limit = 300\n",
                "scenario.toml:4: qos.swe.high_limit: 300 is out of range; expected 0..=255",
            ),
            ("[qos.ca]\nvlarb_low = \"0:4,9\"\n", "scenario.toml:2: qos.ca.vlarb_low: entry 2 ('9') is not VL:weight"),
            ("[qos.sw0]\nsl2vl = \"(null)\"\n", "scenario.toml:2: qos.sw0.sl2vl: 1 VLs listed; expected 16"),
            (
                "[qos]\nhigh_limit = \"4\"\n",
                "scenario.toml:2: invalid type: string \"4\", expected i64 (at `high_limit = \"4\"`)",
            ),
        ];
        for (text, want) in cases {
            let got = QosConfig::from_toml_str(text, p).unwrap_err().to_string();
            assert!(got.starts_with(want), "for {text:?}\n got: {got}\nwant: {want}");
        }
    }

    fn arb_table() -> impl Strategy<Value = Vec<(u8, u8)>> {
        prop::collection::vec((0..=14u8, any::<u8>()), 0..=64)
    }

    fn arb_set() -> impl Strategy<Value = QosSet> {
        (
            prop::option::of(1..=15u8),
            prop::option::of(any::<u8>()),
            prop::option::of(arb_table()),
            prop::option::of(arb_table()),
            prop::option::of(prop::array::uniform16(0..=15u8)),
        )
            .prop_map(|(max_vls, high_limit, vlarb_high, vlarb_low, sl2vl)| QosSet {
                max_vls,
                high_limit,
                vlarb_high,
                vlarb_low,
                sl2vl,
            })
    }

    fn arb_config() -> impl Strategy<Value = QosConfig> {
        (any::<bool>(), arb_set(), arb_set(), arb_set(), arb_set(), arb_set()).prop_map(
            |(enabled, global, ca, sw0, swe, rtr)| QosConfig {
                enabled,
                global,
                ca,
                sw0,
                swe,
                rtr,
                ..Default::default()
            },
        )
    }

    proptest! {
        #[test]
        fn vlarb_and_sl2vl_text_round_trips(t in arb_table(), m in prop::array::uniform16(0..=15u8)) {
            prop_assert_eq!(parse_vlarb(&format_vlarb(&t)).unwrap(), t);
            prop_assert_eq!(parse_sl2vl(&format_sl2vl(&m)).unwrap(), m);
        }

        #[test]
        fn opensm_conf_round_trips(cfg in arb_config(), policy in prop::option::of("[a-z/._-]{1,20}")) {
            let cfg = QosConfig { policy_file: policy, ..cfg };
            prop_assert_eq!(QosConfig::parse_opensm_conf(&cfg.to_opensm_conf(), None).unwrap(), cfg);
        }

        #[test]
        fn toml_round_trips(cfg in arb_config()) {
            let text = cfg.to_toml();
            prop_assert_eq!(QosConfig::from_toml_str(&text, None).unwrap(), cfg);
        }

        /// Whatever the configuration, every programmed VL is valid on its port.
        #[test]
        fn applied_tables_fit_their_ports(cfg in arb_config()) {
            let f = fabric();
            let cfg = QosConfig { enabled: true, ..cfg };
            let (s, a) = cfg.apply(&f);
            for n in f.ids() {
                let ports = f.node(n).num_ports;
                let first = if f.node(n).kind.is_switch() { 0 } else { 1 };
                for o in first..=ports {
                    let vls = s.port_data_vls(n, o);
                    prop_assert!(a.get(n, o).check(vls, a.capacity(n, o)).is_ok());
                    for i in 0..=ports {
                        prop_assert!(s.table(n, i, o).iter().all(|&vl| vl == VL_DROP || vl < vls));
                    }
                }
            }
        }
    }
}
