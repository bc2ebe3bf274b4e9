//! The simulation configuration: every parameter of the data plane, with its
//! unit in its name or documentation. Deserialised from TOML (unknown keys are
//! errors); [`crate::Simulation::new`] validates it and names the offending key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{MAX_TIME_PS, PS_PER_NS};
use crate::error::SimError;
pub use crate::hca::transport::{AckMode, TransportConfig};
pub use crate::mechanism::selection::SelectionConfig;
pub use crate::mechanism::MechanismsConfig;
use crate::qos::VlArbConfig;
use crate::traffic::TrafficConfig;

/// How input ports reach the crossbar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CrossbarKind {
    /// One crossbar input per physical input port and one output per physical
    /// output port, shared by all VLs (papers 000 and 001).
    Multiplexed,
    /// One crossbar input and output per (port, VL) (papers 002 and 003).
    PerVl,
}

/// Switch parameters (the same for every switch). Its JSON schema (doc
/// comments included) declares the scenario's `[switch]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Time from the arrival of the LRH+BTH to the end of the forwarding-table
    /// lookup, in nanoseconds. Overlaps with the reception of the rest of the packet.
    pub routing_delay_ns: f64,
    /// Extra pipeline delay of crossbar arbitration after routing, in
    /// nanoseconds (paper 001: 20 ns).
    pub arbitration_delay_ns: f64,
    /// Multiplexed or per-VL crossbar ports.
    pub crossbar: CrossbarKind,
    /// Crossbar port rate as a multiple of the output link's data rate (≥ 1
    /// keeps the crossbar from being a bottleneck; paper 001 uses 2).
    pub speedup: f64,
    /// Input buffer per (port, data VL), in bytes (whole 64-byte credits count).
    pub input_buffer_bytes: u32,
    /// Split of each input data-VL buffer into partitions, in bytes: 2 to 4
    /// entries adding up to `input_buffer_bytes`, each holding an MTU packet;
    /// each partition is a FIFO with its own head and its own credits (paper
    /// 002's adaptive and escape queues: `fully-adaptive` selection needs
    /// `[adaptive, escape]`, e.g. `[512, 512]`). Empty (the default): one buffer.
    pub input_partition_bytes: Vec<u32>,
    /// Output buffer per (port, data VL), in bytes; 0 = no output buffers (the
    /// crossbar feeds the link directly and output VL arbitration chooses among
    /// input queues).
    pub output_buffer_bytes: u32,
    /// VL15 input (and output) buffer per port, in bytes.
    pub vl15_buffer_bytes: u32,
    /// Organisation of each input (port, VL) buffer (docs/switch.md): `fifo`
    /// (only the head may cross, as
    /// in an IBA VL buffer) or `voq` (a queue per output port inside the
    /// buffer, sharing its credits, so a blocked packet holds back only
    /// later packets for its own outputs). Output buffers are needed for `voq`.
    pub input_buffer: String,
    /// Packets one crossbar input may send through the crossbar at once, each
    /// to a different output (ib_flit_sim's `maxBeingSent`); 1 to 255. A
    /// crossbar input is a physical port with a `multiplexed` crossbar and a
    /// (port, VL) with `per-vl`.
    pub max_transfers_per_input: u32,
    /// Which input wins when several want the crossbar (docs/switch.md):
    /// `round-robin` (a pointer rotating over the
    /// input queues), `oldest-first` (the input whose first packet was
    /// generated earliest; ties in round-robin order) or `islip` (rounds of
    /// request–grant–accept with a pointer per crossbar output and input,
    /// until the match is maximal; needs output buffers and `fifo` inputs).
    pub crossbar_arbiter: String,
    /// Interval at which a switch port sends upstream the credits freed in
    /// its input buffers since its last update, in nanoseconds (ib_flit_sim
    /// sends them every 256 ns). 0 = a packet's credits leave as soon as its
    /// last byte has left the buffer. Updates go out at the multiples of the
    /// interval.
    pub credit_update_ns: f64,
    /// Wire bytes of the flow-control packet a switch port sends to advertise
    /// freed credits on its link (IBA's is 6: 4 bytes and an LPCRC). 0 = they
    /// take no link time. Otherwise each advertisement holds the port's
    /// transmitter for its serialization time, between data packets, and
    /// the credits arrive when it has crossed the cable (docs/switch.md).
    pub credit_packet_bytes: u32,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            routing_delay_ns: 100.0,
            arbitration_delay_ns: 0.0,
            crossbar: CrossbarKind::Multiplexed,
            speedup: 1.0,
            input_buffer_bytes: 8192,
            input_partition_bytes: Vec::new(),
            output_buffer_bytes: 8192,
            vl15_buffer_bytes: 512,
            input_buffer: "fifo".into(),
            max_transfers_per_input: 1,
            crossbar_arbiter: "round-robin".into(),
            credit_update_ns: 0.0,
            credit_packet_bytes: 0,
        }
    }
}

/// Channel adapter parameters. Its JSON schema declares the scenario's `[hca]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HcaConfig {
    /// Send buffer per (port, data VL) that the SL send queues feed, in bytes.
    pub send_buffer_bytes: u32,
    /// Receive buffer per (port, data VL), in bytes; the sink drains it at link rate.
    pub receive_buffer_bytes: u32,
    /// Order in which SL send queues are served, highest priority first; SLs
    /// not listed follow in ascending order. Empty = SL 0 first, then 1, ….
    pub sl_priority: Vec<u8>,
    /// Packets each open-loop source may keep in its SL send queue; 0 =
    /// unbounded (every waiting packet is kept: memory grows past
    /// saturation). With a bound, later arrivals are counted (offered load,
    /// injection queue) but become packets only when the queue has room,
    /// back-dated to their arrival, so latencies still include the wait. A
    /// source alone on its SL queue runs exactly as unbounded.
    pub source_queue_packets: u32,
    /// Interval at which a CA port sends the credits its sink has freed since
    /// its last update, in nanoseconds; 0 = as soon as each packet is
    /// consumed. As `switch.credit_update_ns`.
    pub credit_update_ns: f64,
    /// Wire bytes of the flow-control packet a CA port sends to advertise
    /// the credits its sink has freed; 0 = no link time. As
    /// `switch.credit_packet_bytes`.
    pub credit_packet_bytes: u32,
}

impl Default for HcaConfig {
    fn default() -> Self {
        HcaConfig { send_buffer_bytes: 8192, receive_buffer_bytes: 8192, sl_priority: Vec::new(), source_queue_packets: 0, credit_update_ns: 0.0, credit_packet_bytes: 0 }
    }
}

/// How SLs map to VLs on every port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Sl2VlConfig {
    /// SL `i` → VL `i mod data_vls`.
    Modulo,
    /// The same 16-entry map on every port.
    Table {
        /// VL of SL 0..=15.
        vl_of_sl: Vec<u8>,
    },
}

/// VL arbitration policy on every port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum VlArbitrationConfig {
    /// IBA two-table arbitration with these tables. Empty tables (the default)
    /// mean every data VL in the low table with weight 1.
    Iba(VlArbConfig),
    /// Packet-by-packet round robin over the data VLs.
    RoundRobin,
}

/// A per-port, per-VL buffer size that differs from the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferOverride {
    /// Node name (or GUID) as the fabric knows it.
    pub node: String,
    /// Port number on that node.
    pub port: u8,
    /// Data VL; absent = every data VL.
    #[serde(default)]
    pub vl: Option<u8>,
    /// Input (receive) buffer in bytes.
    #[serde(default)]
    pub input_bytes: Option<u32>,
    /// Output (switch) or send (CA) buffer in bytes.
    #[serde(default)]
    pub output_bytes: Option<u32>,
}

/// Automatic warm-up detection (the `[auto_warmup]` table; see
/// [`crate::metrics::warmup`] for the rule). Present = automatic, and then
/// `warmup_ns` must be 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoWarmupConfig {
    /// Length of one sample window of simulated time, in nanoseconds.
    pub window_ns: f64,
    /// Windows the stability test looks at (at least 3): the warm-up is never
    /// shorter than `windows × window_ns`.
    pub windows: u32,
    /// Relative tolerance: the change of the mean latency across the windows,
    /// and the share of offered bytes not accepted, must stay within it.
    pub tolerance: f64,
    /// Longest warm-up, in nanoseconds: a run not stable by then is reported
    /// as not stabilised (`warmup_detected = false`, a saturation signal) and
    /// measured from there.
    pub max_ns: f64,
}

impl Default for AutoWarmupConfig {
    fn default() -> Self {
        AutoWarmupConfig { window_ns: 10_000.0, windows: 10, tolerance: 0.05, max_ns: 500_000.0 }
    }
}

/// The path MTUs IBA defines, in payload bytes: the values `mtu_bytes` may take.
pub const MTU_BYTES: [u32; 5] = [256, 512, 1024, 2048, 4096];
/// The most header bytes a config may give (`header_bytes`, and
/// `extra_header_bytes` beyond them): more than any IBA header stack.
pub const MAX_HEADER_BYTES: u32 = 1024;
/// The largest payload a packet can carry, whatever the MTU.
pub const MAX_MTU_BYTES: u32 = MTU_BYTES[MTU_BYTES.len() - 1];

/// Everything the data plane needs besides the fabric and its tables.
///
/// Its JSON schema (`section_schema("simulation")`) declares the scalar
/// keys; the tables are sections of their own (`switch`, `hca`, one traffic
/// class) or left out of it (`#[schemars(skip)]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// Seed; each traffic source gets its own ChaCha stream derived from it.
    pub seed: u64,
    /// Data VLs per port, 1..=15 (VL15 exists in addition); without QoS tables SL i uses VL i mod `data_vls`.
    #[schemars(range(min = 1, max = 15))]
    pub data_vls: u8,
    /// Path MTU in payload bytes: 256, 512, 1024, 2048 or 4096.
    #[schemars(extend("enum" = MTU_BYTES))]
    pub mtu_bytes: u32,
    /// Bytes of headers and CRCs on every packet: LRH 8 + BTH 12 + ICRC 4 +
    /// VCRC 2 = 26 in IBA. Flit-level models often carry none (0); a switch
    /// then starts routing as soon as a packet's first byte is in, and
    /// otherwise once the LRH and BTH (20 B), or the whole header if shorter,
    /// have arrived.
    #[schemars(range(max = MAX_HEADER_BYTES))]
    pub header_bytes: u32,
    /// Header bytes beyond `header_bytes` on every packet, e.g. 8 for a DETH
    /// or 40 for a GRH.
    #[schemars(range(max = MAX_HEADER_BYTES))]
    pub extra_header_bytes: u32,
    /// Packets generated before this time are excluded from the statistics, in
    /// nanoseconds. Must be 0 with `auto_warmup`.
    pub warmup_ns: f64,
    /// Detect the end of warm-up from the run instead of a fixed `warmup_ns`.
    #[schemars(skip)]
    pub auto_warmup: Option<AutoWarmupConfig>,
    /// Deadlock watchdog, in nanoseconds: the run stops with a deadlock error
    /// if no packet moves for this long while some wait, or if a set of
    /// (link, VL) buffers whose heads have not changed for this long wait for
    /// each other in a cycle while other traffic moves (`watchdog.rs`).
    pub watchdog_ns: f64,
    /// Interval of the time series per link and VL (utilization, input and
    /// output buffer occupancy; results' `series`), in nanoseconds; 0 = none.
    /// Each sample holds a row per cabled port and VL: choose the interval
    /// with the run length and fabric size in mind.
    pub series_interval_ns: f64,
    /// Event queue: `fifo` (a FIFO per fixed delay, a tree of the traffic
    /// sources' next arrivals, and a binary heap for the rest) or `heap`
    /// (the heap alone); identical results.
    #[schemars(extend("enum" = crate::engine::Queue::NAMES))]
    pub event_queue: String,
    /// Selection policy among routing options: `deterministic`, `adaptive-by-credits`
    /// (both at arbitration time) or `lfu` (at routing time); a name, or a
    /// table `{ kind = …, parameters… }` (`prefer_first_within` for
    /// adaptive-by-credits, `counters` for lfu).
    #[schemars(skip)]
    pub selection: SelectionConfig,
    /// Switch parameters.
    #[schemars(skip)]
    pub switch: SwitchConfig,
    /// Channel adapter parameters.
    #[schemars(skip)]
    pub hca: HcaConfig,
    /// SL to VL mapping.
    #[schemars(skip)]
    pub sl2vl: Sl2VlConfig,
    /// Output VL arbitration.
    #[schemars(skip)]
    pub vl_arbitration: VlArbitrationConfig,
    /// Per-port buffer sizes.
    #[schemars(skip)]
    pub buffer_overrides: Vec<BufferOverride>,
    /// The workload.
    #[schemars(skip)]
    pub traffic: TrafficConfig,
    /// The transport layer at the HCAs: acknowledgements and replies.
    #[schemars(skip)]
    pub transport: TransportConfig,
    /// Mechanisms beyond plain IBA, each off unless its table is present.
    #[schemars(skip)]
    pub mechanisms: MechanismsConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            data_vls: 1,
            mtu_bytes: 2048,
            header_bytes: crate::link::BASE_OVERHEAD_BYTES,
            extra_header_bytes: 0,
            warmup_ns: 0.0,
            auto_warmup: None,
            watchdog_ns: 100_000.0,
            series_interval_ns: 0.0,
            event_queue: "fifo".into(),
            selection: SelectionConfig::named("deterministic"),
            switch: SwitchConfig::default(),
            hca: HcaConfig::default(),
            sl2vl: Sl2VlConfig::Modulo,
            vl_arbitration: VlArbitrationConfig::Iba(VlArbConfig::default()),
            buffer_overrides: Vec::new(),
            traffic: TrafficConfig::default(),
            transport: TransportConfig::default(),
            mechanisms: MechanismsConfig::default(),
        }
    }
}

impl SimConfig {
    /// Checks what can be checked without a fabric, with the error that
    /// building a simulation from this config would give (so a configuration
    /// that passes fails later only for a reason the fabric or its tables give).
    pub fn check(&self) -> Result<(), SimError> {
        crate::build::check_config(self)
    }

    /// Parses a TOML document; unknown keys and wrong types are errors that
    /// give `origin` (a file name) with line and column.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, SimError> {
        toml::from_str(text).map_err(|e| SimError::Parse { origin: origin.to_string(), msg: e.to_string() })
    }
}

/// The sections whose JSON schema declares a scenario section of the same
/// name: each field a key, its doc comment the key's documentation.
/// `traffic` is one open-loop class ([`crate::traffic::ClassDoc`]).
/// `simulation` is the scalar keys of [`SimConfig`]; `closed_loop` and
/// `connection` are one entry of `traffic.closed_loop` and
/// `traffic.connections`.
pub const SCHEMA_SECTIONS: [&str; 7] = ["simulation", "switch", "hca", "traffic", "closed_loop", "connection", "transport"];

/// The JSON schema of section `name` (one of [`SCHEMA_SECTIONS`]), or None.
pub fn section_schema(name: &str) -> Option<schemars::Schema> {
    match name {
        "simulation" => Some(schemars::schema_for!(SimConfig)),
        "switch" => Some(schemars::schema_for!(SwitchConfig)),
        "hca" => Some(schemars::schema_for!(HcaConfig)),
        "traffic" => Some(schemars::schema_for!(crate::traffic::ClassDoc)),
        "closed_loop" => Some(schemars::schema_for!(crate::traffic::closed_loop::ClosedLoopDoc)),
        "connection" => Some(schemars::schema_for!(crate::traffic::ConnectionConfig)),
        "transport" => Some(schemars::schema_for!(crate::hca::transport::TransportConfig)),
        _ => None,
    }
}

/// The default of section `name` (one of [`SCHEMA_SECTIONS`]) as a JSON
/// document whose keys are in the order of the struct's fields (the schema's
/// are sorted), or None.
pub fn section_default_json(name: &str) -> Option<String> {
    let c = SimConfig::default();
    let text = match name {
        // The whole config; its schema declares only the scalar keys.
        "simulation" => serde_json::to_string(&c),
        "switch" => serde_json::to_string(&c.switch),
        "hca" => serde_json::to_string(&c.hca),
        "traffic" => serde_json::to_string(&crate::traffic::ClassDoc::default()),
        "closed_loop" => serde_json::to_string(&crate::traffic::closed_loop::ClosedLoopDoc::default()),
        "connection" => serde_json::to_string(&crate::traffic::ConnectionConfig::default()),
        "transport" => serde_json::to_string(&c.transport),
        _ => return None,
    };
    Some(text.expect("config serializes"))
}

impl SimConfig {
    /// `self` with the keys of `overrides` (a JSON document: objects merge key
    /// by key, anything else replaces) laid over it, so that a caller sends
    /// only what its user gave and the defaults (or a preset) stay here. A
    /// value of the wrong type or an unknown key is an error naming its key
    /// path (`switch.speedup`, `traffic.classes[0].laod`), not a position in
    /// the merged document, which nobody wrote.
    pub fn with_overrides(&self, overrides: &str, origin: &str) -> Result<SimConfig, SimError> {
        let parse = |msg: String| SimError::Parse { origin: origin.to_string(), msg };
        let over: serde_json::Value = serde_json::from_str(overrides).map_err(|e| parse(e.to_string()))?;
        let mut merged = serde_json::to_value(self).expect("config serializes");
        lay_over(&mut merged, over);
        let mut doc = PathedJson::default();
        doc.value(&merged, String::new());
        serde_json::from_str(&doc.text).map_err(|e| {
            let text = e.to_string();
            // serde_json ends its message with the position; the key path replaces it.
            let msg = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
            match doc.path_at(e.column()) {
                "" => parse(msg.to_string()),
                path => parse(format!("{path}: {msg}")),
            }
        })
    }
}

/// Objects merge key by key, except a table that names its `kind` (a tagged
/// enum: `vl_arbitration`, `sl2vl`, `selection`), which replaces the base's
/// whole, since its other keys belong to that kind.
fn lay_over(base: &mut serde_json::Value, over: serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) if !o.contains_key("kind") => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => lay_over(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Compact JSON text with the key path at which each key or value starts.
#[derive(Default)]
struct PathedJson {
    text: String,
    starts: Vec<usize>,
    paths: Vec<String>,
}

impl PathedJson {
    fn mark(&mut self, path: &str) {
        self.starts.push(self.text.len());
        self.paths.push(path.to_string());
    }

    fn value(&mut self, v: &serde_json::Value, path: String) {
        self.mark(&path);
        match v {
            serde_json::Value::Object(m) => {
                self.text.push('{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        self.text.push(',');
                    }
                    let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    self.mark(&sub);
                    self.text.push_str(&serde_json::to_string(k).expect("a key serializes"));
                    self.text.push(':');
                    self.value(x, sub);
                }
                self.text.push('}');
            }
            serde_json::Value::Array(a) => {
                self.text.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        self.text.push(',');
                    }
                    self.value(x, format!("{path}[{i}]"));
                }
                self.text.push(']');
            }
            scalar => self.text.push_str(&scalar.to_string()),
        }
    }

    /// The path of the innermost key or value starting before 1-based
    /// `column` (serde stops at or after the offending token's start).
    fn path_at(&self, column: usize) -> &str {
        let i = self.starts.partition_point(|&s| s < column);
        if i == 0 {
            ""
        } else {
            &self.paths[i - 1]
        }
    }
}

/// Converts a duration in nanoseconds to picoseconds, rejecting NaN, infinities
/// and negative values with an error naming `key`.
pub fn ns_to_ps(key: &str, ns: f64) -> Result<u64, SimError> {
    if !ns.is_finite() || ns < 0.0 {
        return Err(SimError::config(key, format!("must be a finite number of nanoseconds >= 0, got {ns}")));
    }
    let ps = (ns * PS_PER_NS as f64).round();
    if ps > MAX_TIME_PS as f64 {
        return Err(SimError::config(key, format!("{ns} ns is too long to simulate")));
    }
    Ok(ps as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{PathBits, PatternConfig, ProcessKind, SizeConfig, TraceConfig};

    #[test]
    fn toml_round_trip_and_unknown_key() {
        let c = SimConfig::from_toml(
            "seed = 7\ndata_vls = 2\n[switch]\ncrossbar = \"per-vl\"\nspeedup = 2.0\n[vl_arbitration]\nkind = \"iba\"\nhigh = [[0, 4]]\nlimit_of_high_priority = 1\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(c.seed, 7);
        assert_eq!(c.switch.crossbar, CrossbarKind::PerVl);
        assert_eq!(
            c.vl_arbitration,
            VlArbitrationConfig::Iba(VlArbConfig { high: vec![(0, 4)], low: vec![], limit_of_high_priority: 1 })
        );
        let e = SimConfig::from_toml("[switch]\nspeed_up = 2.0\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("speed_up") && e.contains("line 2"), "{e}");
        let e = SimConfig::from_toml("[vl_arbitration]\nkind = \"wrr\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("round-robin"), "{e}");
    }

    #[test]
    fn traffic_classes_from_toml() {
        let c = SimConfig::from_toml(
            r#"
            mtu_bytes = 256
            [[traffic.classes]]
            name = "be"
            load = 0.3
            process = "bernoulli"
            pattern = "uniform"
            [[traffic.classes]]
            name = "rt"
            sl = 2
            load = 0.1
            path_bits = "random"
            pattern = "fixed-pairs"
            pairs = ["h0>h1:1"]
            [[buffer_overrides]]
            node = "sw1"
            port = 3
            input_bytes = 4096
            "#,
            "scenario.toml",
        )
        .unwrap();
        let k = &c.traffic.classes;
        assert_eq!((k[0].process, k[1].sl, k[1].path_bits), (ProcessKind::Bernoulli, 2, PathBits::Random));
        assert_eq!(k[1].pattern, PatternConfig::FixedPairs { pairs: vec![("h0".into(), "h1:1".into())] });
        assert_eq!(c.buffer_overrides[0].input_bytes, Some(4096));
        let e = SimConfig::from_toml("[[traffic.classes]]\npattern = \"hotspot\"\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("uniform") && e.contains("fixed-pairs"), "{e}");
        let e = SimConfig::from_toml("[[traffic.classes]]\nlaod = 0.3\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("laod"), "{e}");
    }

    #[test]
    fn size_distributions_and_traces_from_toml() {
        let c = SimConfig::from_toml(
            r#"
            [[traffic.classes]]
            name = "mix"
            load = 0.3
            payload_sizes = [32, 256]
            payload_size_weights = [0.5, 0.5]
            [[traffic.classes]]
            name = "u"
            load = 0.1
            payload_size_range = [32, 256]
            [[traffic.classes]]
            name = "fixed"
            load = 0.1
            payload_bytes = 64
            [[traffic.classes]]
            name = "plain"
            load = 0.1
            [[traffic.traces]]
            file = "io.trace"
            time_scale = 0.5
            "#,
            "s.toml",
        )
        .unwrap();
        let k = &c.traffic.classes;
        assert_eq!(k[0].payload_size, Some(SizeConfig::Empirical { sizes: vec![(32, 0.5), (256, 0.5)] }));
        assert_eq!(k[1].payload_size, Some(SizeConfig::Uniform { min: 32, max: 256 }));
        assert_eq!((k[2].payload_bytes, &k[2].payload_size), (64, &None));
        assert_eq!((k[3].payload_bytes, &k[3].payload_size), (256, &None));
        assert_eq!(c.traffic.traces, vec![TraceConfig { name: String::new(), file: "io.trace".into(), time_scale: 0.5 }]);
        // JSON (the Python binding's route) round-trips, a distribution without payload_bytes.
        let j = serde_json::to_value(&c).unwrap();
        let classes = &j["traffic"]["classes"];
        assert!(classes[0]["payload_bytes"].is_null(), "{j}");
        assert_eq!((&classes[2]["payload_bytes"], &classes[2]["payload_sizes"]), (&serde_json::json!(64), &serde_json::json!([])));
        assert_eq!(serde_json::from_value::<SimConfig>(j).unwrap(), c);
        let e = SimConfig::from_toml(
            "[[traffic.classes]]\nname = \"x\"\nload = 0.1\npayload_bytes = 64\npayload_size_range = [1, 2]\n",
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("s.toml") && e.contains("payload_size_range: give one of payload_bytes, payload_sizes or payload_size_range"), "{e}");
        let e = SimConfig::from_toml("[[traffic.classes]]\nload = 0.1\npattern = \"hot-spot\"\nhot_hosts = [\"h1\"]\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("hot_fraction: pattern \"hot-spot\" needs hot_fraction"), "{e}");
        let e = SimConfig::from_toml("[[traffic.classes]]\nload = 0.1\ntornado_dims = [4, 4]\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("tornado_dims: is read only with pattern = \"tornado\", not \"uniform\""), "{e}");
        let e = SimConfig::from_toml("[[traffic.classes]]\nload = 0.1\npayload_sizes = [32, 64]\npayload_size_weights = [1.0]\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 weights for 2 payload_sizes"), "{e}");
        let e = SimConfig::from_toml("[[traffic.traces]]\nfile = \"a\"\nscale = 2\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("scale") && e.contains("line 3"), "{e}");
        let e = SimConfig::from_toml("[[traffic.traces]]\nname = \"a\"\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("file"), "{e}");
    }

    #[test]
    fn selection_is_a_name_or_a_table_with_parameters() {
        use crate::mechanism::selection::{LfuCounters, Selection, SelectionConfig};
        let c = SimConfig::from_toml("selection = \"lfu\"\n", "t.toml").unwrap();
        assert_eq!(c.selection, SelectionConfig::named("lfu"));
        let c = SimConfig::from_toml("[selection]\nkind = \"lfu\"\ncounters = \"port\"\n", "t.toml").unwrap();
        assert_eq!(c.selection.counters, Some(LfuCounters::Port));
        let Selection::Lfu(l) = Selection::from_config(&c.selection, "selection").unwrap() else { panic!() };
        assert!(!l.per_vl);
        let c = SimConfig::from_toml("selection = { kind = \"adaptive-by-credits\", prefer_first_within = 4 }\n", "t.toml").unwrap();
        let Selection::AdaptiveByCredits(a) = Selection::from_config(&c.selection, "selection").unwrap() else { panic!() };
        assert_eq!(a.prefer_first_within, 4);
        // The table round-trips through JSON (the Python binding's route), a bare name as a string.
        assert_eq!(serde_json::to_value(&c.selection).unwrap()["prefer_first_within"], 4);
        assert_eq!(serde_json::to_value(SelectionConfig::named("lfu")).unwrap(), serde_json::json!("lfu"));
        let e = SimConfig::from_toml("[selection]\nkind = \"lfu\"\ncounter = \"port\"\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("counter") && e.contains("line"), "{e}");
        let bad = SelectionConfig { prefer_first_within: Some(2), ..SelectionConfig::named("lfu") };
        let e = Selection::from_config(&bad, "selection").unwrap_err().to_string();
        assert!(e.contains("selection.prefer_first_within") && e.contains("adaptive-by-credits"), "{e}");
    }

    #[test]
    fn auto_warmup_table_switches_it_on() {
        assert_eq!(SimConfig::from_toml("warmup_ns = 5.0\n", "t.toml").unwrap().auto_warmup, None);
        let c = SimConfig::from_toml("[auto_warmup]\nwindow_ns = 5000.0\n", "t.toml").unwrap();
        assert_eq!(c.auto_warmup, Some(AutoWarmupConfig { window_ns: 5000.0, windows: 10, tolerance: 0.05, max_ns: 500_000.0 }));
        let e = SimConfig::from_toml("[auto_warmup]\nwindow = 5\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("window") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn check_without_a_fabric_names_the_key_a_build_would() {
        assert!(SimConfig::default().check().is_ok());
        let mut c = SimConfig::default();
        c.switch.input_buffer_bytes = 1024;
        match c.check().unwrap_err() {
            SimError::Config { key, msg } => {
                assert_eq!(key, "switch.input_buffer_bytes");
                assert_eq!(
                    msg,
                    "1024 bytes hold 16 credits of 64 B, but virtual cut-through needs room for a whole MTU packet \
                     (2074 B on the wire = 33 credits = 2112 B)"
                );
            }
            e => panic!("{e}"),
        }
        let mut c = SimConfig::default();
        c.switch.speedup = f64::NAN;
        assert!(matches!(c.check().unwrap_err(), SimError::Config { key, .. } if key == "switch.speedup"));
        let c = SimConfig { mtu_bytes: 300, ..SimConfig::default() };
        assert!(matches!(c.check().unwrap_err(), SimError::Config { key, .. } if key == "mtu_bytes"));
    }

    #[test]
    fn section_schemas_declare_every_field_with_its_doc() {
        for name in SCHEMA_SECTIONS {
            let schema = section_schema(name).unwrap();
            let props = schema.get("properties").and_then(|p| p.as_object()).unwrap();
            let defaults: serde_json::Value = serde_json::from_str(&section_default_json(name).unwrap()).unwrap();
            let fields: Vec<&String> = defaults.as_object().unwrap().keys().collect();
            let mut declared: Vec<&String> = props.keys().collect();
            declared.sort();
            let mut expected: Vec<&String> = fields.clone();
            if name == "simulation" {
                // The tables are sections of their own, or not scenario keys.
                let tables = ["switch", "hca", "traffic", "sl2vl", "vl_arbitration", "buffer_overrides", "transport", "mechanisms", "auto_warmup", "selection"];
                expected.retain(|f| !tables.contains(&f.as_str()));
            }
            expected.sort();
            assert_eq!(declared, expected, "[{name}]");
            for (key, p) in props {
                let doc = p.get("description").and_then(|d| d.as_str()).unwrap_or("");
                assert!(!doc.is_empty(), "{name}.{key} has no doc comment");
            }
        }
        assert_eq!(section_schema("connections"), None);
        let sim = section_schema("simulation").unwrap();
        assert_eq!(sim.get("properties").unwrap()["event_queue"]["enum"], serde_json::json!(crate::engine::Queue::NAMES));
        assert_eq!(sim.get("properties").unwrap()["data_vls"]["maximum"], 15);
        let class = section_schema("traffic").unwrap();
        assert_eq!(class.get("required").unwrap(), &serde_json::json!(["load"]));
        assert_eq!(class.get("properties").unwrap()["load"]["maximum"], crate::MAX_LOAD);
        assert_eq!(class.get("properties").unwrap()["sl"]["maximum"], 15);
        let switch = section_schema("switch").unwrap();
        assert_eq!(switch.get("properties").unwrap()["input_buffer_bytes"]["format"], "uint32");
    }

    #[test]
    fn overrides_lay_over_the_base_and_errors_name_their_key() {
        let base = crate::presets::preset("martinez2003").unwrap();
        let c = base.with_overrides(r#"{"data_vls":2,"switch":{"speedup":2.0},"traffic":{"classes":[{"load":0.1}]}}"#, "t").unwrap();
        // The preset's other keys stay: only what the document names changes.
        assert_eq!((c.data_vls, c.switch.speedup, c.mtu_bytes), (2, 2.0, base.mtu_bytes));
        assert_eq!((c.switch.input_buffer_bytes, c.traffic.classes[0].load), (base.switch.input_buffer_bytes, 0.1));
        let e = |doc: &str| base.with_overrides(doc, "t").unwrap_err().to_string();
        let m = e(r#"{"switch":{"speedup":"fast"}}"#);
        assert!(m.contains("switch.speedup: invalid type: string \"fast\", expected f64"), "{m}");
        let m = e(r#"{"traffic":{"classes":[{"load":0.1},{"laod":0.1}]}}"#);
        assert!(m.contains("traffic.classes[1].laod: unknown field `laod`"), "{m}");
        let m = e(r#"{"data_vls":300}"#);
        assert!(m.contains("data_vls: invalid value: integer `300`, expected u8"), "{m}");
        assert!(e("{").contains("EOF"));
        // A table naming its kind replaces the preset's whole.
        let rr = base.with_overrides(r#"{"vl_arbitration":{"kind":"iba","low":[[0,4]]}}"#, "t").unwrap();
        assert_eq!(rr.vl_arbitration, VlArbitrationConfig::Iba(VlArbConfig { high: vec![], low: vec![(0, 4)], limit_of_high_priority: 0 }));
    }

    #[test]
    fn ns_conversion_rounds_and_rejects() {
        assert_eq!(ns_to_ps("x", 100.0).unwrap(), 100_000);
        assert_eq!(ns_to_ps("x", 0.0004).unwrap(), 0);
        assert_eq!(ns_to_ps("x", 3.2).unwrap(), 3_200);
        let e = ns_to_ps("switch.routing_delay_ns", -1.0).unwrap_err().to_string();
        assert!(e.contains("'switch.routing_delay_ns'"), "{e}");
        assert!(ns_to_ps("x", f64::NAN).is_err());
    }
}
