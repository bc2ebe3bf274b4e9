//! Loads a topology file, prints what it holds and how long reading took.
//!
//! `cargo run --release -p ibnetsim-fabric --example load_topology -- <file> [runs]`

use std::path::PathBuf;
use std::time::Instant;

use ibnetsim_fabric::io::read_topology;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: load_topology <topology file> [runs]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        match read_topology(&path) {
            Ok(t) => last = Some(t),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        times.push(t0.elapsed());
    }
    let t = last.expect("at least one run");
    let f = &t.fabric;
    times.sort();
    println!(
        "{}: {:?}, {} switches, {} CAs, {} links, {} LIDs; read in {:.2} ms (median of {}, min {:.2} ms)",
        path.display(),
        t.format,
        f.switches().count(),
        f.cas().count(),
        f.links().len(),
        t.lids.len(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        times.len(),
        times[0].as_secs_f64() * 1e3
    );
}
