//! Link width, speed and cable length for fabrics read from files that do not
//! give them (`ReadOptions`), and the per-cable length file.

use std::path::PathBuf;

use ibnetsim_fabric::io::{read_topology_with, ReadOptions};
use ibnetsim_fabric::{Fabric, LinkSpeed, LinkWidth};

/// Two switches, a host on each; the HCA cable says `w=4`, the rest nothing.
const NET: &str = "Switch\t8 \"s1\"\n[1]\t\"h1\"[1]\tw=4\n[3]\t\"s2\"[3]\n\n\
Switch 8 \"s2\"\n[3]\t\"s1\"[3]\n[1]\t\"h2\"[1]\n\n\
Hca\t1 \"h1\"\n[1]\t\"s1\"[1]\tw=4\n\n\
Hca\t1 \"h2\"\n[1]\t\"s2\"[1]\n";

/// A `.topo` with one tagged cable (4X, 10G = QDR lanes) and one without tags.
const TOPO: &str = "MTS800 SW-1\n   P1 -> Cougar H-1 P1\n   P2 -4X-10G-> Cougar H-1 P2\n\n";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn spec_at(f: &Fabric, node: &str, port: u8) -> (LinkWidth, LinkSpeed, f64) {
    let s = f.link(f.link_at(f.node_by_name(node).unwrap(), port).unwrap()).spec;
    (s.width, s.speed, s.length_m)
}

#[test]
fn a_net_file_takes_the_defaults_where_its_lines_say_nothing() {
    let d = tempfile::tempdir().unwrap();
    let net = write(&d, "f.net", NET);
    let plain = read_topology_with(&net, &ReadOptions::default()).unwrap().fabric;
    assert_eq!(spec_at(&plain, "s1", 3), (LinkWidth::X1, LinkSpeed::Sdr, 1.0));
    let opts = ReadOptions { link_width: Some(LinkWidth::X12), link_speed: Some(LinkSpeed::Qdr), cable_length_m: Some(0.0), ..Default::default() };
    let f = read_topology_with(&net, &opts).unwrap().fabric;
    assert_eq!(spec_at(&f, "s1", 3), (LinkWidth::X12, LinkSpeed::Qdr, 0.0));
    // The file's own width wins; the speed it does not give is the default.
    assert_eq!(spec_at(&f, "s1", 1), (LinkWidth::X4, LinkSpeed::Qdr, 0.0));
}

#[test]
fn an_ibdm_file_takes_the_defaults_where_neither_cable_nor_system_tags() {
    let d = tempfile::tempdir().unwrap();
    let topo = write(&d, "f.topo", TOPO);
    let plain = read_topology_with(&topo, &ReadOptions::default()).unwrap().fabric;
    assert_eq!(spec_at(&plain, "SW-1/U1", 1), (LinkWidth::X4, LinkSpeed::Sdr, 1.0));
    let opts = ReadOptions { link_speed: Some(LinkSpeed::Fdr), ..Default::default() };
    let f = read_topology_with(&topo, &opts).unwrap().fabric;
    assert_eq!(spec_at(&f, "SW-1/U1", 1), (LinkWidth::X4, LinkSpeed::Fdr, 1.0));
    assert_eq!(spec_at(&f, "SW-1/U1", 2), (LinkWidth::X4, LinkSpeed::Qdr, 1.0));
}

#[test]
fn a_cable_length_file_sets_the_cables_it_names_by_either_end() {
    let d = tempfile::tempdir().unwrap();
    let net = write(&d, "f.net", NET);
    let lengths = write(&d, "len.txt", "# node port metres\ns1 3 20   # the switch link\nh2 1 2.5\n\n");
    let opts = ReadOptions { cable_length_m: Some(3.0), cable_lengths: Some(lengths), ..Default::default() };
    let f = read_topology_with(&net, &opts).unwrap().fabric;
    assert_eq!(spec_at(&f, "s2", 3).2, 20.0, "named by its other end");
    assert_eq!(spec_at(&f, "s2", 1).2, 2.5);
    assert_eq!(spec_at(&f, "s1", 1).2, 3.0, "not named: the default length");
}

#[test]
fn cable_length_file_errors_name_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let net = write(&d, "f.net", NET);
    for (text, want) in [
        ("s1 3\n", "len.txt:1: expected `NODE PORT LENGTH_M`, got 2 fields"),
        ("\ns9 3 1\n", "len.txt:2:"),
        ("s1 5 1\n", "len.txt:1: s1 port 5 has no cable"),
        ("s1 x 1\n", "len.txt:1: port 'x' is not a port number"),
        ("s1 3 far\n", "len.txt:1: length 'far' is not a number of metres"),
        ("s1 3 -1\n", "len.txt:1: -1 m: a cable length is a finite number of metres, 0 or more"),
        ("s1 3 1\ns2 3 2\n", "len.txt:2: this cable's length is already given at line 1"),
    ] {
        let lengths = write(&d, "len.txt", text);
        let opts = ReadOptions { cable_lengths: Some(lengths), ..Default::default() };
        let e = read_topology_with(&net, &opts).unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let opts = ReadOptions { cable_length_m: Some(f64::NAN), ..Default::default() };
    let e = read_topology_with(&net, &opts).unwrap_err().to_string();
    assert!(e.contains("cable_length_m") && e.contains("NaN m"), "{e}");
}
