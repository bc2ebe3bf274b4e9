//! Admission control and arbitration tables of paper 001 (`ibnetsim.qos`):
//! `qos_plan` admits a list of connection requests, `qos_setup` runs the
//! paper's random connection setup (and lists what it established). Both return plain columns; the Python
//! module makes DataFrames of them.

use ibnetsim_fabric::{Fabric, LinkEnd};
use ibnetsim_sm::qos::admission::{
    run_setup, Admission, AdmissionConfig, Connection, Decision, EntryLimit, RateBasis, SetupParams, SlOrder,
    SourcePort, StopRule, TrafficClass,
};
use ibnetsim_sm::qos::{format_sl2vl, format_vlarb};
use ibnetsim_sm::SmError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{sm_err, ConfigError};
use crate::subnet::PySubnet;

fn config(be_share: f64, rate_basis: &str, high_limit: u8, entry_limit: &str) -> PyResult<AdmissionConfig> {
    let rate_basis = RateBasis::parse(rate_basis)
        .ok_or_else(|| ConfigError::new_err(format!("rate_basis must be 'signalling' or 'data', not '{rate_basis}'")))?;
    let entry_limit = EntryLimit::parse(entry_limit)
        .ok_or_else(|| ConfigError::new_err(format!("entry_limit must be 'table', 'none' or 'vl', not '{entry_limit}'")))?;
    Ok(AdmissionConfig { be_share, rate_basis, high_limit, entry_limit, ..Default::default() })
}

/// A connection request: source, destination, class, mean bit/s, and the SL
/// to admit it on (None: the SL of its class and bandwidth).
pub type Request = (String, String, String, u64, Option<u8>);

/// Admits `c` on `sl` if given (`admit_as`), else on its bandwidth's SL.
fn admit(adm: &mut Admission<'_>, c: &Connection, path: &[LinkEnd], sl: Option<u8>) -> Result<Decision, SmError> {
    match sl {
        Some(sl) => adm.admit_as(c, sl),
        None => adm.admit_on(c, path),
    }
}

fn port_name(f: &Fabric, e: LinkEnd) -> String {
    format!("{}/{}", f.node(e.node).name, e.port)
}

/// Per-port use and tables as columns.
fn ports_columns<'py>(py: Python<'py>, adm: &Admission<'_>) -> PyResult<Bound<'py, PyDict>> {
    let f = adm.fabric();
    let usage = adm.usage();
    let d = PyDict::new(py);
    d.set_item("node", usage.iter().map(|u| f.node(u.end.node).name.as_str()).collect::<Vec<_>>())?;
    d.set_item("port", usage.iter().map(|u| u.end.port as u32).collect::<Vec<_>>())?;
    d.set_item("is_switch", usage.iter().map(|u| f.node(u.end.node).kind.is_switch()).collect::<Vec<_>>())?;
    d.set_item("link_bps", usage.iter().map(|u| u.link_bps).collect::<Vec<_>>())?;
    d.set_item("reserved_slots", usage.iter().map(|u| u.reserved).collect::<Vec<_>>())?;
    d.set_item("budget_slots", usage.iter().map(|u| u.budget).collect::<Vec<_>>())?;
    d.set_item("high_entries", usage.iter().map(|u| u.high_entries as u32).collect::<Vec<_>>())?;
    d.set_item("low_entries", usage.iter().map(|u| u.low_entries as u32).collect::<Vec<_>>())?;
    d.set_item("overflow_slots", usage.iter().map(|u| u.overflow).collect::<Vec<_>>())?;
    let arb: Vec<_> = usage.iter().map(|u| adm.vlarb(u.end).expect("cabled port")).collect();
    d.set_item("vlarb_high", arb.iter().map(|a| format_vlarb(&a.high)).collect::<Vec<_>>())?;
    d.set_item("vlarb_low", arb.iter().map(|a| format_vlarb(&a.low)).collect::<Vec<_>>())?;
    Ok(d)
}

/// Table entries of every port as long-form columns (free positions as VL 0, weight 0).
fn entries_columns<'py>(py: Python<'py>, adm: &Admission<'_>) -> PyResult<Bound<'py, PyDict>> {
    let f = adm.fabric();
    let (mut node, mut port, mut prio, mut entry, mut vl, mut weight) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (e, s) in adm.ports() {
        for (name, t) in [("high", &s.high), ("low", &s.low)] {
            for (i, &(v, w)) in t.entries().iter().enumerate() {
                node.push(f.node(e.node).name.as_str());
                port.push(e.port as u32);
                prio.push(name);
                entry.push(i as u32);
                vl.push(v as u32);
                weight.push(w as u32);
            }
        }
    }
    let d = PyDict::new(py);
    d.set_item("node", node)?;
    d.set_item("port", port)?;
    d.set_item("priority", prio)?;
    d.set_item("entry", entry)?;
    d.set_item("vl", vl)?;
    d.set_item("weight", weight)?;
    Ok(d)
}

fn common<'py>(py: Python<'py>, adm: &Admission<'_>, d: &Bound<'py, PyDict>) -> PyResult<()> {
    d.set_item("ports", ports_columns(py, adm)?)?;
    d.set_item("entries", entries_columns(py, adm)?)?;
    d.set_item("sl2vl", format_sl2vl(&adm.sl2vl()))?;
    let idle = adm.idle_vlarb();
    d.set_item("idle_vlarb_high", format_vlarb(&idle.high))?;
    d.set_item("idle_vlarb_low", format_vlarb(&idle.low))?;
    d.set_item("high_limit", adm.config().high_limit)?;
    d.set_item("be_slots", adm.config().be_slots().map_err(sm_err)?)?;
    Ok(())
}

/// Admits `requests` = [(source, destination, class, mean bit/s, SL or None)]
/// in order; `labels[i]` (e.g. `file:line`) names request i in errors.
#[pyfunction]
#[pyo3(signature = (subnet, requests, labels, be_share, rate_basis, high_limit, entry_limit="table"))]
#[allow(clippy::too_many_arguments)]
pub fn qos_plan<'py>(
    py: Python<'py>,
    subnet: &PySubnet,
    requests: Vec<Request>,
    labels: Vec<String>,
    be_share: f64,
    rate_basis: &str,
    high_limit: u8,
    entry_limit: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let f = &subnet.fabric().inner;
    let mut adm =
        Admission::new(f, subnet.subnet(), config(be_share, rate_basis, high_limit, entry_limit)?).map_err(sm_err)?;
    let label = |i: usize| labels.get(i).cloned().unwrap_or_else(|| format!("request {}", i + 1));
    let (mut sl, mut accepted, mut refused_at, mut reason, mut src_slots) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, (s, t, class, bw, want_sl)) in requests.iter().enumerate() {
        let at = |e: String| ConfigError::new_err(format!("{}: {e}", label(i)));
        let src = f.resolve(s).map_err(|e| at(e.to_string()))?;
        let dst = f.resolve(t).map_err(|e| at(e.to_string()))?;
        let class = TrafficClass::parse(class)
            .ok_or_else(|| at(format!("class '{class}' is not one of DBTS, DB, BE, CH")))?;
        let c = Connection { src, dst, class, bw_bps: *bw };
        let path = adm.path(src, dst).map_err(|e: SmError| at(e.to_string()))?;
        src_slots.push(if class.reserves() { adm.slots_at(path[0], *bw).unwrap_or(0) } else { 0 });
        match admit(&mut adm, &c, &path, *want_sl).map_err(|e| at(e.to_string()))? {
            Decision::Accepted { sl: l, .. } => {
                sl.push(l as u32);
                accepted.push(true);
                refused_at.push(String::new());
                reason.push(String::new());
            }
            Decision::Rejected(r) => {
                sl.push(want_sl.unwrap_or_else(|| ibnetsim_sm::qos::admission::sl_of(class, *bw)) as u32);
                accepted.push(false);
                refused_at.push(port_name(f, r.at));
                reason.push(r.shortfall.to_string());
            }
        }
    }
    let d = PyDict::new(py);
    let conns = PyDict::new(py);
    conns.set_item("sl", sl)?;
    conns.set_item("accepted", accepted)?;
    conns.set_item("source_slots", src_slots)?;
    conns.set_item("refused_at", refused_at)?;
    conns.set_item("reason", reason)?;
    d.set_item("connections", conns)?;
    common(py, &adm, &d)?;
    Ok(d)
}

/// The SL2VL and VLArbitration tables `qos_plan` programs for `requests`,
/// as the data plane takes them (refused requests leave nothing behind).
pub fn plan_tables(
    subnet: &PySubnet,
    requests: &[Request],
    be_share: f64,
    rate_basis: &str,
    high_limit: u8,
    entry_limit: &str,
) -> PyResult<ibnetsim_sim::QosTables> {
    let f = &subnet.fabric().inner;
    let mut adm =
        Admission::new(f, subnet.subnet(), config(be_share, rate_basis, high_limit, entry_limit)?).map_err(sm_err)?;
    for (i, (s, t, class, bw, sl)) in requests.iter().enumerate() {
        let at = |e: String| ConfigError::new_err(format!("request {}: {e}", i + 1));
        let src = f.resolve(s).map_err(|e| at(e.to_string()))?;
        let dst = f.resolve(t).map_err(|e| at(e.to_string()))?;
        let class = TrafficClass::parse(class)
            .ok_or_else(|| at(format!("class '{class}' is not one of DBTS, DB, BE, CH")))?;
        let c = Connection { src, dst, class, bw_bps: *bw };
        let path = adm.path(src, dst).map_err(|e| at(e.to_string()))?;
        admit(&mut adm, &c, &path, *sl).map_err(|e| at(e.to_string()))?;
    }
    Ok(ibnetsim_sim::QosTables::from_admission(&adm))
}

/// Paper 001's connection setup: returns per-band counts, per-port use and
/// the established connections in admission order (`connections`: source,
/// destination, SL, bit/s), which `qos_plan` with the same options and those
/// SLs admits again into the same tables.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (subnet, target, retry_limit, seed, be_share, rate_basis, class, stop, bands, order="balanced", entry_limit="table", source_port="checked", loose_bands=false))]
pub fn qos_setup<'py>(
    py: Python<'py>,
    subnet: &PySubnet,
    target: u32,
    retry_limit: u32,
    seed: u64,
    be_share: f64,
    rate_basis: &str,
    class: &str,
    stop: &str,
    bands: Option<Vec<(u64, u64)>>,
    order: &str,
    entry_limit: &str,
    source_port: &str,
    loose_bands: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let f = &subnet.fabric().inner;
    let mut cfg = config(be_share, rate_basis, 255, entry_limit)?;
    cfg.source_port = match source_port {
        "checked" => SourcePort::Checked,
        "unchecked" => SourcePort::Unchecked,
        _ => {
            return Err(ConfigError::new_err(format!(
                "source_port must be 'checked' or 'unchecked', not '{source_port}'"
            )))
        }
    };
    let order = SlOrder::parse(order).ok_or_else(|| {
        ConfigError::new_err(format!("order must be 'balanced', 'cyclic' or 'random', not '{order}'"))
    })?;
    let class = match TrafficClass::parse(class) {
        Some(c @ (TrafficClass::Db | TrafficClass::Dbts)) => c,
        _ => return Err(ConfigError::new_err(format!("class must be 'DB' or 'DBTS', not '{class}'"))),
    };
    let stop = match stop {
        "all" => StopRule::All,
        "level" => StopRule::Level,
        _ => return Err(ConfigError::new_err(format!("stop must be 'all' or 'level', not '{stop}'"))),
    };
    let mut params = SetupParams { class, stop, order, loose_bands, ..SetupParams::paper(target, retry_limit, seed) };
    if let Some(b) = bands {
        params.bands = b.try_into().map_err(|b: Vec<_>| {
            ConfigError::new_err(format!("bands must give 4 (low, high) ranges, one per SL, not {}", b.len()))
        })?;
    }
    let mut adm = Admission::new(f, subnet.subnet(), cfg).map_err(sm_err)?;
    let r = py.detach(|| run_setup(&mut adm, &params)).map_err(sm_err)?;
    let d = PyDict::new(py);
    d.set_item("target", r.target)?;
    d.set_item("established", r.established.to_vec())?;
    d.set_item("tried", r.tried.to_vec())?;
    d.set_item("refused_bandwidth", r.refused_bandwidth.to_vec())?;
    d.set_item("refused_entries", r.refused_entries.to_vec())?;
    d.set_item("bandwidth_bps", r.bandwidth_bps.to_vec())?;
    d.set_item("exhausted", r.exhausted.map(|b| b as i64).unwrap_or(-1))?;
    d.set_item("first_sl", ibnetsim_sm::qos::admission::sl_of(class, 0))?;
    let conns = PyDict::new(py);
    let name = |n| f.node(n).name.as_str();
    conns.set_item("source", r.connections.iter().map(|c| name(c.src)).collect::<Vec<_>>())?;
    conns.set_item("destination", r.connections.iter().map(|c| name(c.dst)).collect::<Vec<_>>())?;
    conns.set_item("sl", r.connections.iter().map(|c| c.sl as u32).collect::<Vec<_>>())?;
    conns.set_item("bandwidth_bps", r.connections.iter().map(|c| c.bw_bps).collect::<Vec<_>>())?;
    d.set_item("connections", conns)?;
    common(py, &adm, &d)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(qos_plan, m)?)?;
    m.add_function(wrap_pyfunction!(qos_setup, m)?)?;
    Ok(())
}
