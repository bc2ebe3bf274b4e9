//! Criterion benchmark of the event loop: a fixed slice of simulated time on
//! the 8×8 mesh (DOR, uniform 30 %), the 64-switch random regular network
//! (up*/down*, uniform 30 %) and the 1,728-host 12-ary 3-tree (ftree,
//! uniform 30 %; the large fabric of `ibnetsim bench`), with both event queues.

mod nets;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ibnetsim_fabric::gen::FatTreeParams;
use ibnetsim_fabric::{Fabric, LinkSpec};
use ibnetsim_sim::{preset, ClassConfig, PatternConfig, ProcessKind, SimConfig, Simulation};
use ibnetsim_sm::routing::build_engine;
use ibnetsim_sm::{ForwardingTables, LidMap, RoutingOptions};

fn class() -> ClassConfig {
    ClassConfig {
        name: "uniform".into(),
        load: 0.3,
        process: ProcessKind::Poisson,
        payload_bytes: 256,
        pattern: PatternConfig::Uniform,
        ..ClassConfig::default()
    }
}

fn bench_net(c: &mut Criterion, name: &str, f: &Fabric, t: &ForwardingTables, lids: &LidMap, base: &SimConfig, until: u64) {
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    for queue in ["fifo", "heap"] {
        let mut cfg = base.clone();
        cfg.event_queue = queue.into();
        // Events per run, to report events/s.
        let mut probe = Simulation::new(f, lids, t, &cfg).unwrap();
        probe.run(until).unwrap();
        g.throughput(Throughput::Elements(probe.events()));
        g.bench_function(queue, |b| {
            b.iter_batched(
                || Simulation::new(f, lids, t, &cfg).unwrap(),
                |mut sim| {
                    sim.run(until).unwrap();
                    sim.events()
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let f = nets::mesh(8, 8, 1, LinkSpec::default());
    let lids = LidMap::assign(&f, 0).unwrap();
    let t = nets::lowest_minimal(&f, &lids);
    let mut cfg = SimConfig { mtu_bytes: 256, ..SimConfig::default() };
    cfg.traffic.classes = vec![class()];
    bench_net(c, "mesh8x8_dor_uniform30", &f, &t, &lids, &cfg, 200_000_000);

    let f = nets::random_regular(64, 4, 4, 1, LinkSpec { length_m: 20.0, ..LinkSpec::default() });
    let lids = LidMap::assign(&f, 0).unwrap();
    let t = nets::updn(&f, &lids);
    let mut cfg = preset("martinez2003").unwrap();
    cfg.traffic.classes = vec![class()];
    bench_net(c, "irregular64_updn_uniform30", &f, &t, &lids, &cfg, 100_000_000);

    let f = FatTreeParams::new(12, 3).build().unwrap();
    let lids = LidMap::assign(&f, 0).unwrap();
    let t = build_engine("ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).unwrap().tables;
    let mut cfg = SimConfig::default();
    cfg.traffic.classes = vec![class()];
    bench_net(c, "fattree1728_ftree_uniform30", &f, &t, &lids, &cfg, 100_000_000);
}

criterion_group!(sim, benches);
criterion_main!(sim);
