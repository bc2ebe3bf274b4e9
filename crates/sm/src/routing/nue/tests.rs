use super::*;
use crate::analysis::CdgReport;
use crate::hops::SwitchHops;
use crate::routing::build_engine;
use crate::routing::testfab::{self, check_routes, RouteSls};
use ibnetsim_fabric::gen::{FatTreeParams, IrregularParams, MeshParams, RingParams};
use proptest::prelude::*;

fn engine(max_vls: u8) -> Nue {
    Nue { max_vls }
}

/// The credit-loop check of the CA-to-CA routes, SL `i` on VL `i`, each
/// route on the SL the engine gave it (SL 0 where it gave none).
fn cdg(f: &Fabric, lids: &LidMap, r: &Routing) -> CdgReport {
    testfab::credit_loops(f, lids, r, RouteSls::GivenOrZero, false)
}

/// Switch-to-CA routes longer than the fewest hops.
fn detours(f: &Fabric, lids: &LidMap, r: &Routing) -> Vec<(String, Lid, u16, u16)> {
    let hops = SwitchHops::compute(f);
    let mut out = Vec::new();
    for sw in f.switches() {
        for p in lids.ca_ports(f) {
            let want = hops.end_hops(f, sw, p.end).unwrap();
            let (mut at, mut got) = (sw, 1u16);
            while let Some(peer) = f.peer(at, r.tables.get(at, p.base).unwrap()) {
                if f.node(peer.node).kind.is_ca() {
                    break;
                }
                at = peer.node;
                got += 1;
                assert!(got < 64, "loop");
            }
            if got != want {
                out.push((f.node(sw).name.clone(), p.base, got, want));
            }
        }
    }
    out
}

#[test]
fn registered_with_max_vls_checked() {
    testfab::assert_max_vls_checked(NAME);
    let o = RoutingOptions { max_vls: Some(4), ..RoutingOptions::default() };
    assert!(build_engine(NAME, &o).is_ok());
}

#[test]
fn two_switches_with_two_cables_by_hand() {
    // a and b joined on ports 1 and 2, host a0 on a:3, b0 on b:3. LIDs: a0 1,
    // b0 2, a 3, b 4. P = 4 LIDs, so every link weighs 16; each switch
    // counts 2 LIDs (its own and its host's).
    //
    // Layer 0 holds a0 and b0. Betweenness (each host a leaf of its switch):
    // from a, b has two shortest paths (sigma 2) and a gets 1/2 * (1 + 1)
    // over each; with the host of a as a second source both end at 2, and the
    // same from b: a tie, so the root is a, first in LID order. Its tree takes
    // a:1 -> b:1 (port 1 first; port 2 is not cheaper).
    //
    // a0: b is reached over that link (weight 16; the one over port 2 ties
    // and loses), so b sends LID 1 out of port 1; the link a:1 -> b:1 then
    // weighs 16 + 2. b0: a is reached over b:1 -> a:1 (16; not yet grown),
    // so a sends LID 2 out of port 1; b:1 -> a:1 weighs 18.
    // Switch LIDs, plain trees: LID 3 (a): b's cheapest way in is a:2 -> b:2
    // (16 < 18), so b sends LID 3 out of port 2, and that link weighs 18;
    // LID 4 (b): likewise a sends it out of port 2.
    let f = testfab::two_switch_parallel(2, 1);
    let (lids, r) = testfab::routed(&engine(1), &f, 0);
    let (a, b) = (f.node_by_name("a").unwrap(), f.node_by_name("b").unwrap());
    let row = |sw| (1..=4).map(|lid| r.tables.get(sw, lid).unwrap()).collect::<Vec<_>>();
    assert_eq!(row(a), vec![3, 1, 0, 2]);
    assert_eq!(row(b), vec![1, 3, 2, 0]);
    assert!(r.path_sl.is_none());
    let (_, plan) = engine(1).route_plan(&f, &lids).unwrap();
    assert_eq!(plan.roots, vec![Some(a)]);
    assert_eq!(plan.layers, vec![vec![1, 2]]);
}

#[test]
fn ring_of_five_at_one_vl_needs_detours() {
    // On a ring of five switches every pair two hops apart has one shortest
    // path. The five clockwise ones give five clockwise turns, one at every
    // switch: a cycle. So with one VL at least one of them must go the long
    // way round (three hops), and likewise counter-clockwise: at least two
    // detours, and the CA-to-CA dependencies stay acyclic.
    let f = RingParams { switches: 5, hosts_per_switch: 1, link: Default::default() }.build().unwrap();
    let (lids, r) = testfab::routed(&engine(1), &f, 0);
    check_routes(&f, &lids, &r.tables).unwrap();
    let d = detours(&f, &lids, &r);
    assert!(d.len() >= 2, "{d:?}");
    assert!(d.iter().all(|&(_, _, got, want)| (want, got) == (3, 4)), "{d:?}");
    assert!(!cdg(&f, &lids, &r).has_cycle());
    // minhop's shortest paths close the cycle.
    let m = testfab::routed(&crate::routing::minhop::MinHop, &f, 0).1;
    assert!(detours(&f, &lids, &m).is_empty());
    assert!(cdg(&f, &lids, &m).has_cycle());
}

#[test]
fn layers_deal_the_hosts_round_robin() {
    // ring4: hosts h0..h3 (LIDs 1..4) in port-GUID order, switches 5..8.
    // Two layers: h0, h2 in layer 0 and h1, h3 in layer 1; every path toward
    // a LID gets its layer as SL, whatever its source; switch LIDs layer 0.
    let f = testfab::ring4();
    let (lids, r) = testfab::routed(&engine(2), &f, 0);
    for src in lids.ports() {
        let sls: Vec<u8> = (1..=8).map(|d| r.path_sl.get(src.base, d).unwrap()).collect();
        assert_eq!(sls, vec![0, 1, 0, 1, 0, 0, 0, 0]);
    }
    // Three layers: h0 0, h1 1, h2 2, h3 0 again.
    let r = testfab::routed(&engine(3), &f, 0).1;
    assert_eq!((1..=4).map(|d| r.path_sl.get(1, d).unwrap()).collect::<Vec<_>>(), vec![0, 1, 2, 0]);
    // More layers than hosts: the last ones stay empty, with no escape tree.
    let (_, plan) = engine(6).route_plan(&f, &lids).unwrap();
    assert_eq!(plan.layers, vec![vec![1], vec![2], vec![3], vec![4], vec![], vec![]]);
    assert_eq!(plan.roots[4], None);
    assert!(r.notes.iter().any(|n| n.contains("--vls 3")), "{:?}", r.notes);
}

#[test]
fn every_lid_of_a_port_is_routed_and_spread() {
    // LMC 1 on two switches with two cables: the second LID of each host
    // is routed after the first has grown its links, so it takes the other
    // cable.
    let f = testfab::two_switch_parallel(2, 1);
    let (lids, r) = testfab::routed(&engine(1), &f, 1);
    check_routes(&f, &lids, &r.tables).unwrap();
    let b = f.node_by_name("b").unwrap();
    let a0 = lids.of_port(testfab::host(&f, "a", 0), 1).unwrap().base;
    assert_eq!((r.tables.get(b, a0), r.tables.get(b, a0 + 1)), (Some(1), Some(2)));
}

#[test]
fn regular_fabrics_are_credit_loop_free_at_one_vl() {
    let fabrics = [
        MeshParams { dims: vec![4, 4], torus: true, hosts_per_switch: 1, link: Default::default() }.build().unwrap(),
        FatTreeParams { k: 4, n: 3, link: Default::default() }.build().unwrap(),
        IrregularParams { switches: 16, switch_ports: 8, hosts_per_switch: 2, links_per_switch: Some(4), total_links: None, independent_cycles: None, seed: 3, link: Default::default() }.build().unwrap(),
    ];
    for f in &fabrics {
        for vls in [1, 2] {
            let (lids, r) = testfab::routed(&engine(vls), f, 0);
            check_routes(f, &lids, &r.tables).unwrap();
            assert!(!cdg(f, &lids, &r).has_cycle());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_fabrics_are_complete_and_credit_loop_free(
        seed in any::<u64>(), switches in 1usize..30, extra in 0usize..40, lmc in 0u8..2, vls in prop::sample::select(vec![1u8, 2, 4]),
    ) {
        let f = testfab::random_connected(seed, switches, extra, 3);
        let lids = LidMap::assign(&f, lmc).unwrap();
        let r = engine(vls).route(&f, &lids).unwrap();
        check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
        let report = cdg(&f, &lids, &r);
        prop_assert!(!report.has_cycle(), "{:?}", report.cycle);
        prop_assert_eq!(r.path_sl.is_none(), vls == 1);
    }
}

#[test]
fn small_and_broken_fabrics_route_or_say_why() {
    // One switch: every host one hop away, nothing to order.
    let mut f = Fabric::new();
    let s = f.add_switch("s", 4).unwrap();
    for i in 0..3 {
        let h = f.add_hca(format!("h{i}"), 1).unwrap();
        f.connect(s, i + 1, h, 1, Default::default()).unwrap();
    }
    for vls in [1, 4] {
        let (lids, r) = testfab::routed(&engine(vls), &f, 1);
        check_routes(&f, &lids, &r.tables).unwrap();
    }
    // Two islands: an error naming a switch that cannot be reached.
    let mut f = testfab::two_switch_parallel(1, 1);
    let c = f.add_switch("c", 4).unwrap();
    let h = f.add_hca("c0", 1).unwrap();
    f.connect(c, 1, h, 1, Default::default()).unwrap();
    let lids = LidMap::assign(&f, 0).unwrap();
    // The escape root is a or b (betweenness 4 each, c 0: from c nothing is
    // reached), so c is the switch named.
    let e = engine(1).route(&f, &lids).err().unwrap().to_string();
    assert_eq!(e, "routing engine 'nue' cannot route this fabric: switches [\"c\"] cannot be reached from the others; cable the fabric together or route its parts apart");
    // Two hosts cabled to each other, no switch: no switch to start from.
    let mut f = Fabric::new();
    let a = f.add_hca("a", 1).unwrap();
    let b = f.add_hca("b", 1).unwrap();
    f.connect(a, 1, b, 1, Default::default()).unwrap();
    let lids = LidMap::assign(&f, 0).unwrap();
    let e = engine(1).route(&f, &lids).err().unwrap().to_string();
    assert_eq!(e, "routing engine 'nue' cannot route this fabric: a port 1 (LID 1) is cabled to no switch, and nue routes from a destination's switch; cable it to a switch");
}

/// A generated fabric as OpenSM sees it: written as an ibsim net file and
/// read back, so that its GUIDs follow ibsim's rule.
fn as_ibsim(f: &Fabric) -> Fabric {
    let mut text = Vec::new();
    ibnetsim_fabric::io::write_netfile(f, None, &mut text).unwrap();
    ibnetsim_fabric::io::parse_netfile(std::str::from_utf8(&text).unwrap(), None).unwrap().fabric
}

/// The entries where nue's tables, on the LIDs OpenSM gives
/// (`LidMap::assign_opensm`), differ from `dump`: one line per switch, its
/// name and the output port of each LID from 1 in base 36 (`.`: none).
fn differences_from(f: &Fabric, vls: u8, dump: &str) -> Vec<(String, Lid, Option<u8>, Option<u8>)> {
    let lids = LidMap::assign_opensm(f, 0).unwrap();
    let r = engine(vls).route(f, &lids).unwrap();
    let mut out = Vec::new();
    let mut rows = 0;
    for line in dump.lines() {
        let (name, ports) = line.split_once(' ').unwrap();
        let sw = f.node_by_name(name).unwrap();
        assert_eq!(ports.len(), lids.top_lid() as usize, "{name}");
        for (i, c) in ports.chars().enumerate() {
            let want = c.to_digit(36).map(|p| p as u8);
            let got = r.tables.get(sw, i as Lid + 1);
            if want != got {
                out.push((name.to_string(), i as Lid + 1, want, got));
            }
        }
        rows += 1;
    }
    assert_eq!(rows, f.switches().count());
    out
}

// Real OpenSM 3.3.23's tables: the fabric written by `ibnetsim.topology`
// as an ibsim net file, routed once with `run_opensm` of
// scripts/opensm_crosscheck.py (`opensm -o -R nue`; with more than one layer
// also `-Q --nue_max_num_vls N`), its opensm-lfts.dump rewritten one line per
// switch. Its guid2lid numbers the ports as LidMap::assign_opensm does.

/// `torus([5, 5], hosts_per_switch=2)`, 3 layers: searches
/// that get stuck, backtrack (3 times), take a shortcut (once) and fall back
/// to the escape paths (once).
const OPENSM_TORUS5X5H2_3VLS: &str = "\
sw0 011223113331123411244112256111122223331122323333121323334434424424444424424
sw1 201123313233112441444411422561111223333312323343343412342444444442442414442
sw2 220113333132311244412241422225611112323333112343343313142444444144444444144
sw3 122013333333331422444224411212256111333323314334334334341444444444314444444
sw4 112203133311223412241122411112222561311223333331131331341444444441411444444
sw5 414240112231123311334112444111124425611121222333321323334331343344344322244
sw6 244122011233112331124414444441411222256111122323313312334333333334334332324
sw7 424142201133313333114444444424441112222561112233333333334333333333333332313
sw8 444441220133331333314224444224244411122225611333333333114113113111143113111
sw9 112241122031223313234444411112142441111122256333133333311313343341111344344
sw10 441444412401122311333112344414144224414114244561111222233133142243343144244
sw11 441444414220112331123311224444114244244414122225611212232333333232232334234
sw12 444414241122011333112333124444444112224441411222256111132333333132332332132
sw13 442444244112201332313333114444444441444444441112222561131333333333333333333
sw14 142244122411220312233132341144144441144144444111122225631333333331331134334
sw15 311224442241422011223132233133123233443142222444144224456111122223333132232
sw16 333334444224412201123333333333313234244414222224444214222561111222233133233
sw17 223334441424411220112331133233413132224444414242244414112225611112233333133
sw18 332334444114241122013323111223433114122424444142242444411222256111123233311
sw19 312234422411224112203133333133323334444124444444144424413111122563133123233
sw20 333233112241122411220112233133322223333143333444144434444144122425611122122
sw21 233323331244112241122011233333311223233111123444441144422444111442256111122
sw22 333333333122441224112201133323313312333333334244444444422244411412222561111
sw23 333331333112241122411220133313333311332333334412234434411212444411112225611
sw24 313331133341444112241122011333333331311231231411131431441444224441111222256";

/// `irregular(switches=16, switch_ports=8, links_per_switch=4,
/// hosts_per_switch=1, seed=3)`, 4 layers of 4 destinations: escape trees rooted in convex hulls smaller than
/// the fabric.
const OPENSM_IRREGULAR16H1_4VLS: &str = "\
sw0 03111333212242438311323331224243
sw1 40311144132234344831114422223433
sw2 43041122343311414382312224331111
sw3 21301133124324242138143332414424
sw4 12310423314224142231842331322414
sw5 32122041133143343212284113314344
sw6 43113201144332424311328114432242
sw7 11234410423223111123341843322331
sw8 43133244011122121143324481114212
sw9 14422214201432311442221448343233
sw10 24433323410413132443432441841313
sw11 42331121134024424231112313482441
sw12 34234112433201313424414222348131
sw13 23413341312240242411134131224824
sw14 42332243131121024233314413112182
sw15 21143322314114102214332234411418";

#[test]
fn tables_match_real_opensm_where_searches_backtrack_and_fall_back() {
    let f = as_ibsim(&MeshParams { dims: vec![5, 5], torus: true, hosts_per_switch: 2, link: Default::default() }.build().unwrap());
    assert_eq!(differences_from(&f, 3, OPENSM_TORUS5X5H2_3VLS), vec![]);
}

#[test]
fn tables_match_real_opensm_with_small_layers() {
    let p = IrregularParams { switches: 16, switch_ports: 8, hosts_per_switch: 1, links_per_switch: Some(4), total_links: None, independent_cycles: None, seed: 3, link: Default::default() };
    let f = as_ibsim(&p.build().unwrap());
    assert_eq!(differences_from(&f, 4, OPENSM_IRREGULAR16H1_4VLS), vec![]);
}

/// `torus([3, 3, 4], hosts_per_switch=1)`, 3 layers: convex hulls that take
/// in switches without destinations, and a backtracking step that must check
/// the neighbour's dependants for escape-path colours.
const OPENSM_TORUS3X3X4_3VLS: &str = "\
sw0 012333444555355542666316662612313412712313412512333545566565556616333444
sw1 201333444555355245266361641661331241271331441551533544651366455666336446
sw2 120333124125123155166126625166123124127133144155333444555635655666336164
sw3 442012333554515355466612613414612312412712333455552313454165356414616333
sw4 441201333255551351666661263244261331441271331555555533441615345661261331
sw5 144120323125125123166166126124126323144127333444555333664666365446166663
sw6 333442012535555512666614566313644612312412712333545512533555555333444612
sw7 333441201555554551663664266233241261331441271555544551335636615336441266
sw8 323424120135125125123126126133126126133144127333444555663464661363666166
sw9 616312412012332412515555512516363612612313444712333444515555514655663646
sw10 666231241201331241555551251251363661661233444271333444555553554665666644
sw11 126123124120133144155525125125133626166333444127333444555353545666326446
sw12 666612333412012332552515315554562636412612313444712333555555533565555366
sw13 664261333241201331551555331554551536261661333444271333555555535565656666
sw14 426626133424120333555155153155155123644166333124127333454555555454551356
sw15 363664612332412012355515512353544512312414612333444712355514515353455656
sw16 363646261331241201553555551233255256261441661333444271555541555553646661
sw17 326424126333124120555155555155144125333144166333444127533555555635555655
sw18 516536416612336642012313414512333415515653455612633414712313414555253245
sw19 656661261261331241201333241251233245561656255266661441271333444555355555
sw20 525123125626133144120333144555133125656365165166333444127333444555355455
sw21 545616316644612312414012333455512513412615333416666613412712333554555235
sw22 564265236246661231241201333545551233441551261661666331241271333555255535
sw23 555555126126166123444120333154525133666166366444666333124127333445555355
sw24 653546655336416612313412012553544512312515656316412612313414712555555515
sw25 256446256266461261333241201533554551331541251663441661333244271553545555
sw26 333525125326626126333424120153555555333446166333664666133144127535455555
sw27 555355414665632516612313412012332412512313445655333456616663414712333444
sw28 555233241666651265261331241201331441551231445251355655666363441271333444
sw29 525135524666665126126333124120133144155333455166555564666336444127333444
sw30 455515313666566615414612312442012312414512333456655536614616313414712333
sw31 255251231664655661241261331441201231451551333265665365461266633441271333
sw32 125125123126165626424126123144120133524155333654556556446666333444127333
sw33 553555512636666656312416612312412012312512515635444556633644612333414712
sw34 235455251266664666233241661231241201351251551633466661363641266333441271
sw35 335525155133126126133124126133124120135444555353655555136446666333124127";

/// `irregular(switches=24, switch_ports=12, links_per_switch=5,
/// hosts_per_switch=2, seed=2)`, one layer: after a backtracking step,
/// switches found before it are moved only by a shortcut, and keep their
/// alternatives.
const OPENSM_IRREGULAR24_1VL: &str = "\
sw0 054451423515222444353113bc5544512511552233551155222222323322335533113113
sw1 30114255432144415523324533bc11514422535544132211444444454455443344554455
sw2 5403251313545552132455435544bc232211113111332444441211231133224412334422
sw3 232034251343354112134455413321bc5544235251331133555555121122113344445555
sw4 55410523215152544141335354554413bc23413322115511552222444411331133332533
sw5 1312401451314441515152321133112242bc454455223333444444545322553355223322
sw6 141551023451332551543312412411553223bc2233444444223322222222224433222222
sw7 15243120245551122455135311552444331122bc22445555111111334444442233331133
sw8 2534123304235154442322512255334415223333bc454415551155434444443322441155
sw9 255412231055112433522451225235441144223333bc2255333333333333332244443333
sw10 42431452420211455352431344221533134455221112bc12111111525533552233331133
sw11 1245514225202314443112351422445555331122335533bc333333323322331133533333
sw12 424334525312014353125113442251333344554455331122bc4144345533553355111133
sw13 42412431325520423255315144343511224433143351115543bc44141111113333115511
sw14 2524341152425302514244532215221133441111111111355533bc111111111111113311
sw15 444154412134554024343131443544115533221122553355555555bc2211331133113315
sw16 43421342325433310254555134242112115344223322115411332212bc22554435115511
sw17 4542144531241154303142424455442211553555331155555533555533bc333322223355
sw18 132221531434441255011143113322222211555355443344225222255555bc3311224422
sw19 43422453523134415240441244335122223355555522331155555555555555bc55225555
sw20 3334252423532251131304143312334424552242224414112222221412441122bc441144
sw21 323513414525313525244021342255551133111111552222221111512255222244bc2211
sw22 32335132231325244343410523123351521142552533113322552545444444114411bc55
sw23 2335423315254115352322102233555544223333115533151111114455555533222211bc";

#[test]
fn tables_match_real_opensm_on_a_3d_torus_in_layers() {
    let f = as_ibsim(&MeshParams { dims: vec![3, 3, 4], torus: true, hosts_per_switch: 1, link: Default::default() }.build().unwrap());
    assert_eq!(differences_from(&f, 3, OPENSM_TORUS3X3X4_3VLS), vec![]);
}

#[test]
fn tables_match_real_opensm_after_backtracking_at_one_vl() {
    let p = IrregularParams { switches: 24, switch_ports: 12, hosts_per_switch: 2, links_per_switch: Some(5), total_links: None, independent_cycles: None, seed: 2, link: Default::default() };
    let f = as_ibsim(&p.build().unwrap());
    assert_eq!(differences_from(&f, 1, OPENSM_IRREGULAR24_1VL), vec![]);
}

#[test]
fn switches_are_ordered_by_lid_as_opensm_compares_network_byte_order() {
    // The fabric of two_switches_with_two_cables_by_hand, whose escape root
    // is a tie won by the first switch in OpenSM's LID order, with b at LID
    // 256. OpenSM compares ib_net16_t LIDs as host integers: on x86, LID 3
    // (bytes 00 03) reads 0x0300 and LID 256 (bytes 01 00) 0x0001, so b
    // comes first and is the root, though its LID is the larger.
    let f = testfab::two_switch_parallel(2, 1);
    let id = |n: &str| f.node_by_name(n).unwrap();
    let at = |n: &str, port: u8, base: Lid| PortLid { end: ibnetsim_fabric::LinkEnd { node: id(n), port }, base, lmc: 0 };
    let lids = LidMap::from_entries(&f, 0, vec![at("a0", 1, 1), at("b0", 1, 2), at("a", 0, 3), at("b", 0, 256)]).unwrap();
    let (_, plan) = engine(1).route_plan(&f, &lids).unwrap();
    assert_eq!(plan.roots, vec![Some(id("b"))]);
    // With b at LID 4 instead, a comes first (0x0300 < 0x0400).
    let lids = LidMap::from_entries(&f, 0, vec![at("a0", 1, 1), at("b0", 1, 2), at("a", 0, 3), at("b", 0, 4)]).unwrap();
    assert_eq!(engine(1).route_plan(&f, &lids).unwrap().1.roots, vec![Some(id("a"))]);
}
