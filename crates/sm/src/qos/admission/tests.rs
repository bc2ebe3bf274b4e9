//! Slot arithmetic and table filling worked by hand; admission on small
//! fabrics where the refusing port is known; a property test of the
//! invariants over random setups and teardowns.

use ibnetsim_fabric::{Fabric, LinkEnd, LinkSpec, LinkSpeed, LinkWidth};
use proptest::prelude::*;

use super::*;
use crate::routing::testfab::{host, two_switch_parallel};
use crate::subnet::{SmConfig, Subnet, SubnetManager};

const B1X: u64 = 2_500_000_000;

/// B that needs exactly `slots` slots on a 1x link: slots × 2.5e9 / 16320 (an integer when slots is a multiple of 51).
fn bw_for_slots(slots: u64) -> u64 {
    assert_eq!(slots * B1X % FRAME_SLOTS as u64, 0);
    slots * B1X / FRAME_SLOTS as u64
}

fn routed(f: &Fabric) -> Subnet {
    SubnetManager::new(SmConfig::default()).configure(f).unwrap()
}

fn end(f: &Fabric, name: &str, port: u8) -> LinkEnd {
    LinkEnd { node: f.node_by_name(name).unwrap(), port }
}

#[test]
fn slots_follow_the_paper_formula() {
    // 16320 × B / B_link, rounded up.
    assert_eq!(FRAME_SLOTS, 16320);
    assert_eq!(slots_for(64_000, B1X), 1); // 0.417792
    assert_eq!(slots_for(1_550_000, B1X), 11); // 10.1184
    assert_eq!(slots_for(64_000_000, B1X), 418); // 417.792
    assert_eq!(slots_for(300_000_000, B1X), 1959); // 1958.4
    assert_eq!(slots_for(300_000_000, 4 * B1X), 490); // 489.6
    assert_eq!(slots_for(300_000_000, 12 * B1X), 164); // 163.2
    // Exact multiples do not round up: 255 slots are 39.0625 Mb/s at 1x.
    assert_eq!(slots_for(39_062_500, B1X), 255);
    assert_eq!(slots_for(39_062_501, B1X), 256);
    assert_eq!(slots_for(B1X, B1X), FRAME_SLOTS);
    assert_eq!(slots_for(0, B1X), 0);
    // N = ⌈B × T_frame / 512⌉ is the same number (T_frame(1x) = 3.342336 ms).
    assert_eq!(slots_for(1_000_000, B1X), (1e6f64 * 3.342336e-3 / 512.0).ceil() as u32);
}

#[test]
fn bands_and_sls() {
    assert_eq!(band(8_000), 0);
    assert_eq!(band(64_000), 0);
    assert_eq!(band(64_001), 1);
    assert_eq!(band(1_550_000), 1);
    assert_eq!(band(1_550_001), 2);
    assert_eq!(band(64_000_000), 2);
    assert_eq!(band(64_000_001), 3);
    assert_eq!(sl_of(TrafficClass::Db, 300_000_000), 3);
    assert_eq!(sl_of(TrafficClass::Dbts, 10_000), 4);
    assert_eq!(sl_of(TrafficClass::Be, 10_000_000), BE_SL);
    assert_eq!(sl_of(TrafficClass::Ch, 1), CH_SL);
    assert_eq!(priority_of_sl(5), Priority::High);
    assert_eq!(priority_of_sl(3), Priority::Low);
    assert_eq!(priority_of_sl(BE_SL), Priority::Low);
    assert_eq!(sl2vl(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 8, 8, 8, 8, 8, 8]);
}

#[test]
fn empty_port_has_be_and_ch_entries() {
    // 20 % of 16320 = 3264 = 12 × 255 + 204.
    let p = PortState::new(3264);
    let mut want = vec![(BE_SL, 255); 12];
    want.push((BE_SL, 204));
    want.push((CH_SL, 1));
    assert_eq!(p.low.entries(), want.as_slice());
    assert!(p.high.entries().is_empty());
    assert_eq!(p.budget, 16320 - 3264);
    assert_eq!(p.low.free_entries(), 50);
    let none = PortState::new(0);
    assert_eq!(none.low.entries(), &[(CH_SL, 1)]);
    assert_eq!(none.budget, 16320);
}

#[test]
fn connections_of_one_sl_share_an_entry_then_overflow() {
    let mut p = PortState::new(3264); // BE at 0..=12, CH at 13
    let a = p.try_reserve(Priority::Low, 1, 100).unwrap();
    assert_eq!(a.grants, vec![(14, 100)]);
    // Fills entry 14 to 255, the other 45 go to the next free entry.
    let b = p.try_reserve(Priority::Low, 1, 200).unwrap();
    assert_eq!(b.grants, vec![(14, 155), (15, 45)]);
    // Another SL never shares SL 1's entries.
    let c = p.try_reserve(Priority::Low, 2, 10).unwrap();
    assert_eq!(c.grants, vec![(16, 10)]);
    // A connection larger than an entry spans several: 45 + 210 tops up 15, then 255 + 90.
    let d = p.try_reserve(Priority::Low, 1, 600).unwrap();
    assert_eq!(d.grants, vec![(15, 210), (17, 255), (18, 135)]);
    assert_eq!(&p.low.entries()[14..], &[(1, 255), (1, 255), (2, 10), (1, 255), (1, 135)]);
    assert_eq!(p.reserved, 910);
    // Releasing one connection changes only its own entries.
    p.release(&a);
    assert_eq!(&p.low.entries()[14..], &[(1, 155), (1, 255), (2, 10), (1, 255), (1, 135)]);
    p.release(&c);
    assert_eq!(&p.low.entries()[14..], &[(1, 155), (1, 255), (0, 0), (1, 255), (1, 135)]);
    // The freed position is taken again, and SL 1 fills its room first.
    let e = p.try_reserve(Priority::Low, 1, 230).unwrap();
    assert_eq!(e.grants, vec![(14, 100), (18, 120), (16, 10)]);
    assert_eq!(&p.low.entries()[14..], &[(1, 255), (1, 255), (1, 10), (1, 255), (1, 255)]);
    for r in [&b, &d, &e] {
        p.release(r);
    }
    assert_eq!(p, PortState::new(3264));
}

#[test]
fn dbts_fills_the_high_table() {
    let mut p = PortState::new(3264);
    let r = p.try_reserve(Priority::High, 4, 300).unwrap();
    assert_eq!(p.high.entries(), &[(4, 255), (4, 45)]);
    assert_eq!(p.low.used_entries(), 14);
    // Both tables draw on the one slot budget.
    assert_eq!(p.free_slots(), 13056 - 300);
    p.release(&r);
    assert!(p.high.entries().is_empty());
}

#[test]
fn a_port_runs_out_of_entries_before_bandwidth() {
    // 50 free low entries × 255 = 12750 slots < the 13056 of the budget.
    let mut p = PortState::new(3264);
    for i in 0..50 {
        p.try_reserve(Priority::Low, 3, 255).unwrap_or_else(|e| panic!("connection {i}: {e}"));
    }
    assert_eq!(p.reserved, 12750);
    assert_eq!(p.free_slots(), 306);
    assert_eq!(
        p.try_reserve(Priority::Low, 2, 1),
        Err(Shortfall::Entries { priority: Priority::Low, needed: 1, free: 0 })
    );
    let before = p.clone();
    assert_eq!(p.try_reserve(Priority::Low, 3, 307), Err(Shortfall::Bandwidth { needed: 307, free: 306 }));
    assert_eq!(p, before);
    // The high table still has its own 64 entries.
    assert!(p.try_reserve(Priority::High, 4, 306).is_ok());
}

#[test]
fn slots_only_reservation_overflows_a_full_table() {
    // The port of the test above: 50 full SL 3 entries, 306 slots of budget left.
    let mut p = PortState::new(3264);
    for _ in 0..50 {
        p.try_reserve(Priority::Low, 3, 255).unwrap();
    }
    let full = p.clone();
    // Keeping one entry per VL: SL 2 has none and none is free, so it is
    // refused for entries; SL 3 has entries and overflows them.
    assert_eq!(p.reserve_slots_with_entry(Priority::Low, 2, 10), Err(Shortfall::Entries { priority: Priority::Low, needed: 1, free: 0 }));
    assert_eq!(p.reserve_slots_with_entry(Priority::Low, 2, 307), Err(Shortfall::Bandwidth { needed: 307, free: 306 }));
    assert_eq!(p, full);
    let b = p.reserve_slots_with_entry(Priority::Low, 3, 10).unwrap();
    assert_eq!((b.grants.len(), b.overflow, p.overflow), (0, 10, 10));
    p.release(&b);
    assert_eq!(p, full);
    // A table-limited reservation is refused for entries; a slots-only one
    // takes the slots with no entry (overflow), up to the budget.
    let a = p.reserve_slots_only(Priority::Low, 2, 10).unwrap();
    assert_eq!((a.grants.len(), a.overflow, a.slots), (0, 10, 10));
    assert_eq!((p.reserved, p.overflow, p.free_slots()), (12760, 10, 296));
    assert_eq!(p.low, full.low);
    let before = p.clone();
    assert_eq!(p.reserve_slots_only(Priority::Low, 2, 297), Err(Shortfall::Bandwidth { needed: 297, free: 296 }));
    assert_eq!(p, before);
    p.release(&a);
    assert_eq!(p, full);
    // With room in the table a slots-only reservation is the ordinary one:
    // 300 slots fill SL 1's partial entry of 100, then 200 in a new entry, no overflow.
    let mut q = PortState::new(3264);
    let mut r = q.clone();
    q.try_reserve(Priority::Low, 1, 100).unwrap();
    r.try_reserve(Priority::Low, 1, 100).unwrap();
    let x = q.try_reserve(Priority::Low, 1, 300).unwrap();
    let y = r.reserve_slots_only(Priority::Low, 1, 300).unwrap();
    assert_eq!(x, y);
    assert_eq!(y.grants, vec![(14, 155), (15, 145)]);
    assert_eq!(q, r);
    // Partly in the table, partly over: 13 free entries × 255 = 3315 of 3400 slots fit.
    let mut t = PortState::new(3264);
    for _ in 0..37 {
        t.try_reserve(Priority::Low, 3, 255).unwrap();
    }
    assert_eq!(t.try_reserve(Priority::Low, 2, 3400), Err(Shortfall::Entries { priority: Priority::Low, needed: 14, free: 13 }));
    let z = t.reserve_slots_only(Priority::Low, 2, 3400).unwrap();
    assert_eq!((z.grants.len(), z.overflow), (13, 85));
    assert_eq!(t.low.free_entries(), 0);
}

#[test]
fn entry_limit_none_admits_what_the_table_refuses() {
    // The fabric of the test below: the 51st 255-slot connection a0 → b0 is
    // refused for entries with the table limit; without it, it and one more
    // fit, and the 307-slot remainder of the budget is the last thing refused.
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let cfg = AdmissionConfig { entry_limit: EntryLimit::None, ..Default::default() };
    let mut adm = Admission::new(&f, &sn, cfg).unwrap();
    let (a0, b0) = (host(&f, "a", 0), host(&f, "b", 0));
    let c = Connection { src: a0, dst: b0, class: TrafficClass::Db, bw_bps: bw_for_slots(255) };
    for _ in 0..51 {
        assert!(matches!(adm.admit(&c).unwrap(), Decision::Accepted { sl: 2, .. }));
    }
    let src = LinkEnd { node: a0, port: 1 };
    assert_eq!((adm.port(src).unwrap().reserved, adm.port(src).unwrap().overflow), (13005, 255));
    assert!(adm.usage().iter().filter(|u| u.reserved > 0).all(|u| u.overflow == 255 && u.low_entries == 64));
    match adm.admit(&c).unwrap() {
        Decision::Rejected(r) => assert_eq!((r.hop, r.shortfall), (0, Shortfall::Bandwidth { needed: 255, free: 51 })),
        d => panic!("expected a refusal, got {d:?}"),
    }
}

#[test]
fn entry_limit_vl_refuses_a_vl_left_without_an_entry() {
    // 51 SL 2 connections of 255 slots fill every entry of a0 → b0's ports
    // (the test above). A 1 Mb/s SL 1 connection (7 slots) still fits the
    // budget: `none` admits it with no VL 1 entry anywhere on its path (VL 1
    // would never be served); `vl` refuses it at the first port, for entries.
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let (a0, b0) = (host(&f, "a", 0), host(&f, "b", 0));
    let big = Connection { src: a0, dst: b0, class: TrafficClass::Db, bw_bps: bw_for_slots(255) };
    let small = Connection { bw_bps: 1_000_000, ..big };
    for (limit, admitted) in [(EntryLimit::None, true), (EntryLimit::Vl, false)] {
        let mut adm = Admission::new(&f, &sn, AdmissionConfig { entry_limit: limit, ..Default::default() }).unwrap();
        for _ in 0..51 {
            assert!(matches!(adm.admit(&big).unwrap(), Decision::Accepted { sl: 2, .. }));
        }
        let d = adm.admit(&small).unwrap();
        match d {
            Decision::Accepted { sl: 1, .. } if admitted => {
                let vl1: u32 = adm.ports().flat_map(|(_, p)| p.low.entries().to_vec()).filter(|e| e.0 == 1).map(|e| e.1 as u32).sum();
                assert_eq!(vl1, 0);
            }
            Decision::Rejected(r) if !admitted => {
                assert_eq!((r.hop, r.shortfall), (0, Shortfall::Entries { priority: Priority::Low, needed: 1, free: 0 }))
            }
            d => panic!("{limit:?}: {d:?}"),
        }
    }
}

#[test]
fn unchecked_source_port_reserves_on_switch_ports_only() {
    // a1 → b0 leaves a1/1, a/1, b/2; with the source CA port unchecked only the last two reserve.
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let cfg = AdmissionConfig { source_port: SourcePort::Unchecked, ..Default::default() };
    let mut adm = Admission::new(&f, &sn, cfg).unwrap();
    let (a1, b0) = (host(&f, "a", 1), host(&f, "b", 0));
    let c = Connection { src: a1, dst: b0, class: TrafficClass::Db, bw_bps: bw_for_slots(255) };
    assert!(matches!(adm.admit(&c).unwrap(), Decision::Accepted { .. }));
    assert_eq!(adm.port(LinkEnd { node: a1, port: 1 }).unwrap().reserved, 0);
    assert_eq!(adm.port(end(&f, "a", 1)).unwrap().reserved, 255);
    assert_eq!(adm.port(end(&f, "b", 2)).unwrap().reserved, 255);
    // A connection bigger than the source port's budget is refused at hop 1, the first switch port.
    let big = Connection { bw_bps: 2_100_000_000, ..c };
    assert!(matches!(adm.admit(&big).unwrap(), Decision::Rejected(Rejection { hop: 1, .. })));
}

#[test]
fn admit_as_gives_the_sl_and_checks_its_class() {
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    let (a0, b0) = (host(&f, "a", 0), host(&f, "b", 0));
    // 100 kb/s is band 1, but the caller says SL 2: one slot in a VL 2 entry.
    let c = Connection { src: a0, dst: b0, class: TrafficClass::Db, bw_bps: 100_000 };
    assert!(matches!(adm.admit_as(&c, 2).unwrap(), Decision::Accepted { sl: 2, .. }));
    let low = &adm.port(LinkEnd { node: a0, port: 1 }).unwrap().low;
    assert_eq!(low.entries()[14], (2, 1));
    assert!(adm.admit_as(&c, 5).unwrap_err().to_string().contains("SL 5"));
    let dbts = Connection { class: TrafficClass::Dbts, ..c };
    assert!(adm.admit_as(&dbts, 2).is_err());
    assert!(matches!(adm.admit_as(&dbts, 6).unwrap(), Decision::Accepted { sl: 6, .. }));
}

#[test]
fn entries_run_out_on_a_fabric_port_with_slots_left() {
    // a0 → b0 over a single cable: 50 connections of exactly 255 slots fill
    // the 50 free low entries of every port on the path; the 51st is refused at
    // the source port for entries, with 306 slots free.
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    let (a0, b0) = (host(&f, "a", 0), host(&f, "b", 0));
    let c = Connection { src: a0, dst: b0, class: TrafficClass::Db, bw_bps: bw_for_slots(255) };
    for _ in 0..50 {
        assert!(matches!(adm.admit(&c).unwrap(), Decision::Accepted { sl: 2, .. }));
    }
    match adm.admit(&c).unwrap() {
        Decision::Rejected(r) => {
            assert_eq!(r.hop, 0);
            assert_eq!(r.at, LinkEnd { node: a0, port: 1 });
            assert_eq!(r.shortfall, Shortfall::Entries { priority: Priority::Low, needed: 1, free: 0 });
        }
        d => panic!("expected a refusal, got {d:?}"),
    }
    assert_eq!(adm.port(LinkEnd { node: a0, port: 1 }).unwrap().free_slots(), 306);
}

#[test]
fn refusal_downstream_releases_everything_upstream() {
    // Path a1 → b0: a1/1, a/1, b/2 (b0 is on b's port 2). Fill b/2 with
    // b1 → b0, then a1 → b0 fits at a1/1 and a/1 but not at b/2.
    let f = two_switch_parallel(1, 2);
    let sn = routed(&f);
    let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    let (a1, b0, b1) = (host(&f, "a", 1), host(&f, "b", 0), host(&f, "b", 1));
    let path = adm.path(a1, b0).unwrap();
    assert_eq!(path, vec![LinkEnd { node: a1, port: 1 }, end(&f, "a", 1), end(&f, "b", 2)]);
    // 13056 slots, the whole DB budget, is 2 Gb/s exactly at 1x.
    let full = Connection { src: b1, dst: b0, class: TrafficClass::Db, bw_bps: 2_000_000_000 };
    // 2 Gb/s needs 13056 slots in SL 3, 52 entries > 50 free: refused for entries.
    assert!(matches!(
        adm.admit(&full).unwrap(),
        Decision::Rejected(Rejection { hop: 0, shortfall: Shortfall::Entries { needed: 52, free: 50, .. }, .. })
    ));
    // 12750 slots (50 entries) fits.
    let fill = Connection { bw_bps: bw_for_slots(12750), ..full };
    assert!(matches!(adm.admit(&fill).unwrap(), Decision::Accepted { .. }));
    let before = adm.clone();
    let c = Connection { src: a1, dst: b0, class: TrafficClass::Db, bw_bps: 1_000_000 };
    match adm.admit(&c).unwrap() {
        Decision::Rejected(r) => {
            assert_eq!((r.hop, r.at), (2, end(&f, "b", 2)));
            assert_eq!(r.shortfall, Shortfall::Entries { priority: Priority::Low, needed: 1, free: 0 });
        }
        d => panic!("expected a refusal, got {d:?}"),
    }
    for (e, p) in adm.ports() {
        assert_eq!(Some(p), before.port(e), "port {e:?} changed by a refused connection");
    }
    assert_eq!(adm.port(LinkEnd { node: a1, port: 1 }).unwrap().reserved, 0);
    // A bandwidth refusal at the last hop also leaves nothing behind.
    let mut adm2 = Admission::new(&f, &sn, AdmissionConfig { be_share: 0.0, ..Default::default() }).unwrap();
    assert!(matches!(adm2.admit(&Connection { bw_bps: 2_400_000_000, ..full }).unwrap(), Decision::Accepted { .. }));
    match adm2.admit(&Connection { bw_bps: 200_000_000, ..c }).unwrap() {
        Decision::Rejected(r) => {
            assert_eq!(r.hop, 2);
            assert_eq!(r.shortfall, Shortfall::Bandwidth { needed: 1306, free: 16320 - 15668 });
        }
        d => panic!("expected a refusal, got {d:?}"),
    }
    assert_eq!(adm2.port(LinkEnd { node: a1, port: 1 }).unwrap().reserved, 0);
    assert_eq!(adm2.port(end(&f, "a", 1)).unwrap().reserved, 0);
}

#[test]
fn be_and_ch_reserve_nothing_and_tables_export() {
    let f = two_switch_parallel(1, 1);
    let sn = routed(&f);
    let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    let (a0, b0) = (host(&f, "a", 0), host(&f, "b", 0));
    for class in [TrafficClass::Be, TrafficClass::Ch] {
        assert!(matches!(
            adm.admit(&Connection { src: a0, dst: b0, class, bw_bps: 1_000_000_000 }).unwrap(),
            Decision::Accepted { .. }
        ));
    }
    assert!(adm.is_empty_state());
    let d = adm.admit(&Connection { src: a0, dst: b0, class: TrafficClass::Dbts, bw_bps: 100_000_000 }).unwrap();
    assert!(matches!(d, Decision::Accepted { sl: 7, .. }));
    let cfg = adm.vlarb(end(&f, "a", 1)).unwrap();
    assert_eq!(cfg.high, vec![(7, 255), (7, 255), (7, 143)]); // ⌈100e6 × 16320 / 2.5e9⌉ = 653
    assert_eq!(cfg.low.len(), 14);
    assert_eq!(cfg.limit_of_high_priority, 255);
    cfg.check(DATA_VLS, Default::default()).unwrap();
    // b's port 1 faces a, not on the a → b path.
    assert_eq!(adm.vlarb(end(&f, "b", 1)).unwrap(), adm.idle_vlarb());
    // Self and switch endpoints are errors, not refusals.
    assert!(adm.admit(&Connection { src: a0, dst: a0, class: TrafficClass::Db, bw_bps: 1 }).is_err());
    let sw = f.node_by_name("a").unwrap();
    assert!(adm.admit(&Connection { src: a0, dst: sw, class: TrafficClass::Db, bw_bps: 1 }).is_err());
}

#[test]
fn be_share_is_checked() {
    let c = |s| AdmissionConfig { be_share: s, ..Default::default() };
    assert_eq!(c(0.2).be_slots().unwrap(), 3264);
    assert_eq!(c(0.0).be_slots().unwrap(), 0);
    assert!(c(1.0).be_slots().unwrap_err().to_string().contains("no table entry for CH"));
    assert!(c(-0.1).be_slots().is_err());
}

#[test]
fn link_rate_sets_the_slots() {
    let mut f = Fabric::new();
    let s = f.add_switch("s", 4).unwrap();
    let h0 = f.add_hca("h0", 1).unwrap();
    let h1 = f.add_hca("h1", 1).unwrap();
    f.connect(s, 1, h0, 1, LinkSpec::new(LinkWidth::X4, LinkSpeed::Sdr)).unwrap();
    f.connect(s, 2, h1, 1, LinkSpec::default()).unwrap();
    let sn = routed(&f);
    let adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    assert_eq!(adm.slots_at(LinkEnd { node: h0, port: 1 }, 300_000_000), Some(490));
    assert_eq!(adm.slots_at(LinkEnd { node: s, port: 2 }, 300_000_000), Some(1959));
    assert_eq!(adm.slots_at(LinkEnd { node: s, port: 3 }, 300_000_000), None); // no cable
    let data = Admission::new(&f, &sn, AdmissionConfig { rate_basis: RateBasis::Data, ..Default::default() }).unwrap();
    assert_eq!(data.slots_at(LinkEnd { node: s, port: 2 }, 300_000_000), Some(2448)); // 300e6 × 16320 / 2e9
}

#[test]
fn setup_counts_add_up_and_repeat() {
    let f = two_switch_parallel(1, 4);
    let sn = routed(&f);
    let run = |target, stop| {
        let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
        let p = SetupParams { stop, ..SetupParams::paper(target, 20, 7) };
        let r = run_setup(&mut adm, &p).unwrap();
        assert_eq!(adm.established() as u32, r.total_established());
        (r, adm.usage())
    };
    // Few connections: all established, evenly spread, nothing refused.
    let (r, _) = run(40, StopRule::All);
    assert_eq!(r.established, [10; 4]);
    assert_eq!(r.tried, [10; 4]);
    assert_eq!(r.exhausted, None);
    // Far too many: SL 3 runs out and setup ends; counts reconcile.
    let (r, usage) = run(10_000, StopRule::All);
    assert!(r.total_established() < 10_000);
    assert_eq!(r.exhausted, Some(3));
    for b in 0..4 {
        assert_eq!(r.tried[b], r.established[b] + r.refused_bandwidth[b] + r.refused_entries[b]);
    }
    assert!(r.established.iter().max().unwrap() - r.established.iter().min().unwrap() <= 1);
    assert!(usage.iter().all(|u| u.reserved <= u.budget && u.low_entries <= 64));
    // The recorded connections are the established ones, band by band ...
    assert_eq!(r.connections.len() as u32, r.total_established());
    for b in 0..4u8 {
        let mine = r.connections.iter().filter(|c| c.sl == b);
        assert_eq!(mine.clone().count() as u32, r.established[b as usize]);
        assert_eq!(mine.map(|c| c.bw_bps).sum::<u64>(), r.bandwidth_bps[b as usize]);
    }
    // ... and admitting them again in order, on their SLs, rebuilds the same ports.
    let mut again = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    for c in &r.connections {
        let conn = Connection { src: c.src, dst: c.dst, class: TrafficClass::Db, bw_bps: c.bw_bps };
        assert!(matches!(again.admit_as(&conn, c.sl).unwrap(), Decision::Accepted { sl, .. } if sl == c.sl));
    }
    assert_eq!(again.usage(), usage);
    // Same seed, same result.
    assert_eq!(run(10_000, StopRule::All).0, r);
    // Stopping only the exhausted SL lets the others go on.
    let (lv, _) = run(10_000, StopRule::Level);
    assert!(lv.total_established() > r.total_established());
    assert!(lv.established[0] > r.established[0]);
}

#[test]
fn setup_orders_and_loose_bands() {
    let f = two_switch_parallel(1, 4);
    let sn = routed(&f);
    let run = |p: &SetupParams, cfg: AdmissionConfig| {
        let mut adm = Admission::new(&f, &sn, cfg).unwrap();
        let r = run_setup(&mut adm, p).unwrap();
        (r, adm)
    };
    let table = AdmissionConfig::default();
    // Cyclic: SLs take one try each in turn, so tries (not established) stay within one.
    let (r, _) = run(&SetupParams { order: SlOrder::Cyclic, ..SetupParams::paper(400, 20, 7) }, table);
    assert!(r.tried.iter().max().unwrap() - r.tried.iter().min().unwrap() <= 1, "{:?}", r.tried);
    assert!(r.refused_bandwidth.iter().sum::<u32>() + r.refused_entries.iter().sum::<u32>() > 0);
    // Random: every SL is drawn, and every try is counted once.
    let (r, _) = run(&SetupParams { order: SlOrder::Random, ..SetupParams::paper(40, 20, 7) }, table);
    assert!(r.tried.iter().all(|&t| t > 0));
    assert_eq!(r.total_established(), 40);
    // Without the entry limit nothing is refused for entries, and the same
    // draws establish at least as many connections before SL 3 runs out.
    let paper = SetupParams::paper(10_000, 20, 7);
    let (limited, _) = run(&paper, table);
    let (free, adm) = run(&paper, AdmissionConfig { entry_limit: EntryLimit::None, ..table });
    assert_eq!(free.refused_entries, [0; 4]);
    assert!(free.total_established() >= limited.total_established());
    assert!(adm.usage().iter().all(|u| u.reserved <= u.budget));
    // §5.2's SL 2 range leaves its class: refused unless loose; then band 2's
    // connections are on VL 2 whatever their bandwidth.
    let mut text = SetupParams { bands: PAPER_TEXT_BANDS_BPS, ..SetupParams::paper(40, 20, 7) };
    assert!(run_setup(&mut Admission::new(&f, &sn, table).unwrap(), &text).unwrap_err().to_string().contains("band 2"));
    text.loose_bands = true;
    text.bands[2] = (64_001, 1_000_000);
    let (r, adm) = run(&text, table);
    assert_eq!(r.established, [10; 4]);
    // A loose band's connection is recorded on the band's SL, not its bandwidth's.
    assert!(r.connections.iter().filter(|c| c.sl == 2).any(|c| c.bw_bps <= 1_550_000));
    assert!(r.bandwidth_bps[2] <= 10 * 1_000_000);
    let vl2: u32 = adm.ports().flat_map(|(_, p)| p.low.entries().to_vec()).filter(|e| e.0 == 2).map(|e| e.1 as u32).sum();
    let vl1: u32 = adm.ports().flat_map(|(_, p)| p.low.entries().to_vec()).filter(|e| e.0 == 1).map(|e| e.1 as u32).sum();
    // Each of the 10 band-2 connections takes at least one slot on each of its ≥ 2 ports.
    assert!(vl2 >= 20 && vl1 >= 20);
}

#[test]
fn setup_rejects_bad_parameters() {
    let f = two_switch_parallel(1, 1);
    let sn = routed(&f);
    let mut adm = Admission::new(&f, &sn, AdmissionConfig::default()).unwrap();
    let mut p = SetupParams::paper(10, 10, 1);
    p.bands[1] = (8_000, 1_000_000);
    assert!(run_setup(&mut adm, &p).unwrap_err().to_string().contains("band 1"));
    let p = SetupParams { class: TrafficClass::Be, ..SetupParams::paper(10, 10, 1) };
    assert!(run_setup(&mut adm, &p).is_err());
    let p = SetupParams::paper(10, 0, 1);
    assert!(run_setup(&mut adm, &p).is_err());
}

#[derive(Debug, Clone)]
enum Op {
    Admit { src: usize, dst: usize, class: u8, bw: u64 },
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..6, 0usize..6, 0u8..4, prop_oneof![1u64..2_000_000, 1_000_000u64..800_000_000])
            .prop_map(|(src, dst, class, bw)| Op::Admit { src, dst, class, bw }),
        1 => (0usize..64).prop_map(Op::Release),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn admission_invariants_hold(ops in prop::collection::vec(op(), 1..120), be in 0u32..=40, slots_only in any::<bool>()) {
        // Three hosts on each of two switches; every port checked after every step.
        let f = two_switch_parallel(1, 3);
        let sn = routed(&f);
        let hosts: Vec<_> = f.cas().collect();
        let entry_limit = if slots_only { EntryLimit::None } else { EntryLimit::Table };
        let cfg = AdmissionConfig { be_share: be as f64 / 100.0, entry_limit, ..Default::default() };
        let be_slots = cfg.be_slots().unwrap();
        let mut adm = Admission::new(&f, &sn, cfg).unwrap();
        let mut live = Vec::new();
        for op in ops {
            match op {
                Op::Admit { src, dst, class, bw } => {
                    if src == dst { continue; }
                    let class = [TrafficClass::Db, TrafficClass::Dbts, TrafficClass::Be, TrafficClass::Ch][class as usize];
                    if let Decision::Accepted { id, .. } = adm.admit(&Connection { src: hosts[src], dst: hosts[dst], class, bw_bps: bw }).unwrap() {
                        live.push(id);
                    }
                }
                Op::Release(i) => {
                    if !live.is_empty() {
                        let id = live.swap_remove(i % live.len());
                        prop_assert!(adm.release(id));
                        prop_assert!(!adm.release(id));
                    }
                }
            }
            for (e, p) in adm.ports() {
                prop_assert!(p.reserved <= FRAME_SLOTS - be_slots, "port {:?} reserved {}", e, p.reserved);
                prop_assert_eq!(p.budget, FRAME_SLOTS - be_slots);
                // Every reserved slot is a weight unit of a DB/DBTS entry or, only
                // without the entry limit, overflow; the BE/CH entries are untouched.
                let weights: u32 = p.high.total_weight() + p.low.total_weight();
                prop_assert_eq!(weights + p.overflow, p.reserved + be_slots + 1);
                prop_assert!(p.overflow == 0 || slots_only);
                let vlarb = adm.vlarb(e).unwrap();
                prop_assert!(vlarb.high.len() <= 64 && vlarb.low.len() <= 64);
                prop_assert!(vlarb.high.iter().all(|&(vl, w)| w == 0 || (4..8).contains(&vl)));
                prop_assert!(vlarb.low.iter().all(|&(vl, w)| w == 0 || vl < 4 || vl == BE_SL || vl == CH_SL));
                prop_assert!(vlarb.check(DATA_VLS, Default::default()).is_ok());
            }
            prop_assert_eq!(adm.established(), live.len());
        }
        for id in live {
            prop_assert!(adm.release(id));
        }
        prop_assert!(adm.is_empty_state());
        prop_assert_eq!(adm.established(), 0);
    }
}
