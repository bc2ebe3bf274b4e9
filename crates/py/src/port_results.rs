//! The per-port records of a run's results as Python objects, built
//! directly instead of through JSON.
//!
//! A 1,728-host fat tree has 10,368 cabled transmitters, each with a
//! utilization per VL slot: as JSON text parsed by `json.loads` they cost
//! about 14 ms per call of `simulate`, more than the whole of a short run's
//! other fixed costs. Most of that is allocation: a new float for every
//! `0.0` of an idle VL and a new string for every repetition of a node's
//! name. Python's floats and strings are immutable, so the records can share
//! one zero and one string per node; they are equal, value and type, to
//! what `json.loads` gives for the same results (whose utilizations are
//! finite: a zero-length window counts as idle, where JSON would have
//! turned a NaN into `null`).

use std::collections::HashMap;

use ibnetsim_sim::metrics::PortResult;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};

/// `ports` as a list of dicts with `PortResult`'s fields as keys, in its
/// declaration order (that of its JSON).
pub(crate) fn port_records<'py, 'a>(py: Python<'py>, ports: &'a [PortResult]) -> PyResult<Bound<'py, PyList>> {
    let zero = PyFloat::new(py, 0.0);
    let float = |x: f64| if x.to_bits() == 0 { zero.clone() } else { PyFloat::new(py, x) };
    let mut names: HashMap<&'a str, Bound<'py, PyString>> = HashMap::new();
    let mut name = |n: &'a str| names.entry(n).or_insert_with(|| PyString::new(py, n)).clone();
    let records = PyList::empty(py);
    for p in ports {
        // Destructured in full: a field added to `PortResult` fails to
        // compile here until it is added to the record too.
        let PortResult { node, port, peer_node, peer_port, utilization, vl_utilization } = p;
        let d = PyDict::new(py);
        d.set_item(pyo3::intern!(py, "node"), name(node))?;
        d.set_item(pyo3::intern!(py, "port"), port)?;
        d.set_item(pyo3::intern!(py, "peer_node"), name(peer_node))?;
        d.set_item(pyo3::intern!(py, "peer_port"), peer_port)?;
        d.set_item(pyo3::intern!(py, "utilization"), float(*utilization))?;
        d.set_item(pyo3::intern!(py, "vl_utilization"), PyList::new(py, vl_utilization.iter().map(|&u| float(u)))?)?;
        records.append(d)?;
    }
    Ok(records)
}
