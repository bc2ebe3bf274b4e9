//! Random irregular networks: N switches of P ports, H hosts on every switch,
//! and randomly chosen switch-to-switch links, at most one between two switches,
//! never a switch to itself, always connected.
//!
//! # The papers' networks
//!
//! * Paper 001 (Alfaro, Sánchez, Duato 2001, §5.1 "Network Model"): randomly
//!   generated, "always having four ports for interconnection between switches"
//!   and four hosts per switch on 8-port switches, 8 to 64 switches, results
//!   for 16: `switches = 16, switch_ports = 8, links_per_switch = 4,
//!   hosts_per_switch = 4`.
//! * Paper 002 (Martínez et al. 2003, §5.1 and Table 1): 8, 16, 32 and 64
//!   switches "with the same number of ports (8 or 10)", 4 hosts each, 4 or 6
//!   links between switches (column LS of Table 1), one link between
//!   neighbours, ten topologies per size: `switch_ports = 8, links_per_switch
//!   = 4` or `switch_ports = 10, links_per_switch = 6`, `hosts_per_switch = 4`,
//!   seeds 0..10.
//! * Paper 003 (Martínez et al. 2005, §4.1 "The IBA Subnet Model"): 16 and 64
//!   switches of 8 ports with 4 hosts each (so 4 links), ten topologies per
//!   size, and a 32-switch network with 4 workstations per switch for the I/O
//!   traces: `switch_ports = 8, links_per_switch = 4, hosts_per_switch = 4`.
//! * Paper 000 (Kim et al., TPDS 2007, §4 and Table 1): "15-node and 30-node
//!   irregular networks designed using 5-port switches and HCAs". A node is a
//!   switch with one HCA: the forwarding tables of §5.1 have 15 × 2^k entries
//!   and the multicast table of §5.2 has 3 × 15 entries, one per HCA. So
//!   `switch_ports = 5, hosts_per_switch = 1`, leaving at most 4 links per
//!   switch, and the degree varies from switch to switch. The 15-switch network
//!   of Fig. 6 "has nine cycles" (§5.1; cycles counted as back edges of a BFS
//!   tree by Algorithm 1, i.e. independent cycles E − N + 1):
//!   `switches = 15, independent_cycles = 9`, which is 23 links. The text does
//!   not give the 30-switch network's cycle count (Fig. 9's drawing is lost), so
//!   an experiment must choose `independent_cycles` for it and say so.
//!
//! # Parameters
//!
//! Exactly one of `links_per_switch` (every switch uses exactly L ports for
//! switch links: an L-regular graph), `total_links` (E links, any degree up to
//! P − H) or `independent_cycles` (C, meaning E = N − 1 + C).
//!
//! # How the graph is drawn
//!
//! Rejection sampling (random pairings retried until simple and connected)
//! succeeds with probability about e^{-(L²-1)/4}, 2·10⁻⁴ for L = 6, so instead:
//!
//! 1. Start from a simple graph with the target degrees (all L, or as even as
//!    possible for E links), built by Havel–Hakimi.
//! 2. Mix it with many random moves that keep it simple: double-edge swaps
//!    (`ab, cd → ad, cb`), which keep every degree, for `links_per_switch`;
//!    rewires (move one link to a random free pair) within the degree limit
//!    for `total_links`. These chains have the uniform distribution over such
//!    graphs as their limit.
//! 3. Join the components, if any, with swaps that cut one cycle edge on each
//!    side and cross-connect the ends; each join removes one component, so this
//!    ends after at most N − 1 joins. It always succeeds for valid parameters
//!    because E ≥ N − 1 guarantees enough cycle edges.
//! 4. If step 3 joined anything, mix again with moves that are undone when
//!    they disconnect the graph, to blur the joins. A graph that step 2 left
//!    connected is kept: it is a draw of the chain conditioned on
//!    connectivity, which is what we want (for L ≥ 3 this is the usual case).
//!
//! The number of moves is a fixed multiple of E, so generation never loops and
//! takes O(E) moves. Switch-link ports are numbered from 1 in random order;
//! hosts sit on the highest ports `P−H+1..=P` (switch ports in between stay
//! empty when a switch has fewer than P − H links).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{add_switches, attach_hosts, check_ports, check_size};
use crate::error::FabricError;
use crate::fabric::Fabric;
use crate::rate::LinkSpec;

/// Unconstrained mixing moves tried per link (step 2).
const MIX_MOVES_PER_LINK: u64 = 30;
/// Connectivity-preserving mixing moves tried per link (step 4).
const CONNECTED_MOVES_PER_LINK: u64 = 5;

/// Parameters of a random irregular network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrregularParams {
    /// Number of switches N.
    pub switches: u32,
    /// Ports per switch P, not counting management port 0.
    pub switch_ports: u8,
    /// Hosts H on every switch, cabled to its highest ports `P−H+1..=P`.
    pub hosts_per_switch: u8,
    /// L: every switch has exactly this many links to other switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_per_switch: Option<u32>,
    /// E: the number of switch-to-switch links; switch degrees vary up to P − H.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_links: Option<u32>,
    /// C: independent cycles (E − N + 1, as paper 000 counts them); the same as
    /// `total_links = N − 1 + C`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub independent_cycles: Option<u32>,
    /// Seed of the random generator (ChaCha8); default 0.
    #[serde(default)]
    pub seed: u64,
    /// Every link, host links included.
    #[serde(default)]
    pub link: LinkSpec,
}

/// How the switch links were asked for, after validation.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// Every switch has exactly this degree.
    Regular(u32),
    /// This many links, degree at most `max_degree`.
    Total { links: u32, max_degree: u32 },
}

impl IrregularParams {
    /// Switches with exactly `links_per_switch` switch links each, as papers
    /// 001/002/003 build them; default link, seed `seed`.
    pub fn with_links_per_switch(
        switches: u32,
        switch_ports: u8,
        links_per_switch: u32,
        hosts_per_switch: u8,
        seed: u64,
    ) -> Self {
        IrregularParams {
            switches,
            switch_ports,
            hosts_per_switch,
            links_per_switch: Some(links_per_switch),
            total_links: None,
            independent_cycles: None,
            seed,
            link: LinkSpec::default(),
        }
    }

    /// Exactly `total_links` switch links, any degree up to P − H.
    pub fn with_total_links(
        switches: u32,
        switch_ports: u8,
        total_links: u32,
        hosts_per_switch: u8,
        seed: u64,
    ) -> Self {
        IrregularParams {
            total_links: Some(total_links),
            links_per_switch: None,
            ..Self::with_links_per_switch(switches, switch_ports, 0, hosts_per_switch, seed)
        }
    }

    /// `independent_cycles` independent cycles (total_links = N − 1 + C), as
    /// paper 000 describes its networks.
    pub fn with_independent_cycles(
        switches: u32,
        switch_ports: u8,
        independent_cycles: u32,
        hosts_per_switch: u8,
        seed: u64,
    ) -> Self {
        IrregularParams {
            independent_cycles: Some(independent_cycles),
            links_per_switch: None,
            ..Self::with_links_per_switch(switches, switch_ports, 0, hosts_per_switch, seed)
        }
    }

    /// Uses `link` for every link.
    pub fn link(mut self, link: LinkSpec) -> Self {
        self.link = link;
        self
    }

    /// Checks the parameters and says how to draw the graph.
    fn plan(&self) -> Result<Plan, FabricError> {
        let n = self.switches as u64;
        let p = self.switch_ports as u32;
        let h = self.hosts_per_switch as u32;
        if n == 0 {
            return Err(FabricError::param("switches", "at least one switch is needed"));
        }
        check_ports("switch_ports", p, "switch_ports")?;
        if h > p {
            return Err(FabricError::param(
                "hosts_per_switch",
                format!("{h} hosts do not fit on a switch of {p} ports (switch_ports)"),
            ));
        }
        check_size("switches", n, n * h as u64)?;
        let free = p - h;
        let given: Vec<&str> = [
            ("links_per_switch", self.links_per_switch.is_some()),
            ("total_links", self.total_links.is_some()),
            ("independent_cycles", self.independent_cycles.is_some()),
        ]
        .iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| *k)
        .collect();
        match given.as_slice() {
            [] => {
                return Err(FabricError::param(
                    "links_per_switch",
                    "give exactly one of links_per_switch, total_links or independent_cycles",
                ))
            }
            [_] => {}
            [first, second, ..] => {
                return Err(FabricError::param(
                    *second,
                    format!(
                    "conflicts with '{first}': give exactly one of links_per_switch, total_links or independent_cycles"
                ),
                ))
            }
        }

        if let Some(l) = self.links_per_switch {
            let key = "links_per_switch";
            if l + h > p {
                return Err(FabricError::param(
                    key,
                    format!(
                        "{l} switch links + {h} hosts (hosts_per_switch) need {} ports, but switches have {p} (switch_ports)",
                        l + h
                    ),
                ));
            }
            if l as u64 >= n {
                return Err(FabricError::param(
                    key,
                    format!(
                        "{l} links per switch need {l} distinct neighbours, but there are only {} other switches \
                         (at most one link joins two switches)",
                        n - 1
                    ),
                ));
            }
            if (n * l as u64) % 2 == 1 {
                return Err(FabricError::param(
                    key,
                    format!(
                        "{n} switches × {l} links is {} link ends, an odd number; every link has two ends, \
                         so switches × links_per_switch must be even",
                        n * l as u64
                    ),
                ));
            }
            if n > 1 && l == 0 {
                return Err(FabricError::param(key, format!("with no switch links the {n} switches are disconnected")));
            }
            if n > 2 && l == 1 {
                return Err(FabricError::param(
                    key,
                    format!(
                        "one link per switch pairs the switches off, which cannot connect {n} switches; use at least 2"
                    ),
                ));
            }
            return Ok(Plan::Regular(l));
        }

        let (key, links) = match self.total_links {
            Some(e) => ("total_links", e as u64),
            None => ("independent_cycles", n - 1 + self.independent_cycles.unwrap_or(0) as u64),
        };
        let why = if key == "independent_cycles" {
            format!(" (independent_cycles = C means N − 1 + C = {links} links)")
        } else {
            String::new()
        };
        if links < n - 1 {
            return Err(FabricError::param(
                key,
                format!("{links} links cannot connect {n} switches; at least {} are needed", n - 1),
            ));
        }
        let simple_max = n * (n - 1) / 2;
        if links > simple_max {
            return Err(FabricError::param(
                key,
                format!(
                    "{links} links{why} exceed the {simple_max} pairs of {n} switches (at most one link joins two switches)"
                ),
            ));
        }
        let port_max = n * free as u64 / 2;
        if links > port_max {
            return Err(FabricError::param(
                key,
                format!(
                    "{links} links{why} do not fit: each switch has {free} ports left for switch links \
                     (switch_ports {p} − hosts_per_switch {h}), so {n} switches hold at most {port_max} links"
                ),
            ));
        }
        Ok(Plan::Total { links: links as u32, max_degree: free })
    }

    /// Generates the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        let plan = self.plan()?;
        let n = self.switches as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let degrees = match plan {
            Plan::Regular(l) => vec![l; n],
            Plan::Total { links, .. } => even_degrees(n as u32, links),
        };
        let internal = |what: &'static str| {
            FabricError::param("switches", format!("internal error: {what} for valid parameters {self:?}"))
        };
        let mut g = Graph::havel_hakimi(&degrees).ok_or_else(|| internal("Havel–Hakimi failed"))?;
        let links = g.edges.len() as u64;
        match plan {
            Plan::Regular(_) => g.mix_swaps(&mut rng, MIX_MOVES_PER_LINK * links, false),
            Plan::Total { max_degree, .. } => g.mix_rewires(&mut rng, MIX_MOVES_PER_LINK * links, max_degree, false),
        }
        // A graph that came out of the mixing connected is a sample of the
        // chain conditioned on connectivity, so it is kept as is; only joined
        // graphs are mixed again.
        if g.join_components(&mut rng).map_err(internal)? {
            match plan {
                Plan::Regular(_) => g.mix_swaps(&mut rng, CONNECTED_MOVES_PER_LINK * links, true),
                Plan::Total { max_degree, .. } => {
                    g.mix_rewires(&mut rng, CONNECTED_MOVES_PER_LINK * links, max_degree, true)
                }
            }
        }

        let mut f = Fabric::new();
        let sws = add_switches(&mut f, self.switches, self.switch_ports)?;
        let mut order: Vec<usize> = (0..g.edges.len()).collect();
        order.shuffle(&mut rng);
        let mut next_port = vec![1u32; n];
        for e in order {
            let (a, b) = (g.edges[e].0 as usize, g.edges[e].1 as usize);
            f.connect(sws[a], next_port[a], sws[b], next_port[b], self.link)?;
            next_port[a] += 1;
            next_port[b] += 1;
        }
        let h = self.hosts_per_switch;
        attach_hosts(&mut f, &sws, h, self.switch_ports as u32 - h as u32 + 1, self.link)?;
        Ok(f)
    }
}

/// Degrees summing to `2·links` that differ by at most one.
fn even_degrees(n: u32, links: u32) -> Vec<u32> {
    let ends = 2 * links as u64;
    let q = (ends / n as u64) as u32;
    let r = (ends % n as u64) as u32;
    (0..n).map(|v| q + u32::from(v < r)).collect()
}

/// A simple undirected graph on switches `0..n`, as an edge array (whose
/// indices never change; moves overwrite entries) and adjacency lists of
/// `(neighbour, edge index)`.
struct Graph {
    adj: Vec<Vec<(u32, u32)>>,
    edges: Vec<(u32, u32)>,
    /// BFS visit stamps, so that no search has to clear an array.
    stamp: Vec<u64>,
    epoch: u64,
    queue_a: Vec<u32>,
    queue_b: Vec<u32>,
}

impl Graph {
    fn empty(n: usize) -> Self {
        Graph {
            adj: vec![Vec::new(); n],
            edges: Vec::new(),
            stamp: vec![0; n],
            epoch: 0,
            queue_a: Vec::new(),
            queue_b: Vec::new(),
        }
    }

    /// A simple graph with exactly these degrees, or None if there is none.
    /// Havel–Hakimi: join a vertex of highest remaining degree d to the d next
    /// highest. Vertices are kept in buckets by remaining degree, so this is
    /// O(E + N·max degree).
    fn havel_hakimi(degrees: &[u32]) -> Option<Self> {
        let n = degrees.len();
        let mut g = Graph::empty(n);
        let top_degree = degrees.iter().copied().max().unwrap_or(0) as usize;
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); top_degree + 1];
        for v in (0..n as u32).rev() {
            buckets[degrees[v as usize] as usize].push(v);
        }
        let mut top = top_degree;
        let mut chosen: Vec<(u32, usize)> = Vec::new();
        loop {
            while top > 0 && buckets[top].is_empty() {
                top -= 1;
            }
            if top == 0 {
                return Some(g);
            }
            let v = buckets[top].pop()?;
            chosen.clear();
            let mut level = top;
            while chosen.len() < top && level > 0 {
                match buckets[level].pop() {
                    Some(u) => chosen.push((u, level)),
                    None => level -= 1,
                }
            }
            if chosen.len() < top {
                return None;
            }
            for &(u, level) in &chosen {
                g.push_edge(v, u);
                buckets[level - 1].push(u);
            }
        }
    }

    fn push_edge(&mut self, a: u32, b: u32) {
        let e = self.edges.len() as u32;
        self.edges.push((a, b));
        self.adj[a as usize].push((b, e));
        self.adj[b as usize].push((a, e));
    }

    fn degree(&self, v: u32) -> u32 {
        self.adj[v as usize].len() as u32
    }

    fn has_edge(&self, a: u32, b: u32) -> bool {
        let (x, y) = if self.adj[a as usize].len() <= self.adj[b as usize].len() { (a, b) } else { (b, a) };
        self.adj[x as usize].iter().any(|&(w, _)| w == y)
    }

    fn unlink_half(&mut self, from: u32, to: u32) {
        let list = &mut self.adj[from as usize];
        if let Some(pos) = list.iter().position(|&(w, _)| w == to) {
            list.swap_remove(pos);
        }
    }

    /// Replaces edge `e` by `a–b`.
    fn replace(&mut self, e: usize, a: u32, b: u32) {
        let (x, y) = self.edges[e];
        self.unlink_half(x, y);
        self.unlink_half(y, x);
        self.edges[e] = (a, b);
        self.adj[a as usize].push((b, e as u32));
        self.adj[b as usize].push((a, e as u32));
    }

    /// Whether `s` and `t` are in one component: BFS from both ends at once,
    /// always growing the smaller side, so a short detour is found after
    /// visiting few vertices and a cut is found after exhausting the smaller side.
    fn linked(&mut self, s: u32, t: u32) -> bool {
        if s == t {
            return true;
        }
        self.epoch += 2;
        let (mark_a, mark_b) = (self.epoch, self.epoch + 1);
        let Graph { adj, stamp, queue_a, queue_b, .. } = self;
        stamp[s as usize] = mark_a;
        stamp[t as usize] = mark_b;
        queue_a.clear();
        queue_a.push(s);
        queue_b.clear();
        queue_b.push(t);
        let (mut head_a, mut head_b) = (0, 0);
        loop {
            let left_a = queue_a.len() - head_a;
            let left_b = queue_b.len() - head_b;
            if left_a == 0 || left_b == 0 {
                return false;
            }
            let (queue, head, mine, theirs) = if left_a <= left_b {
                (&mut *queue_a, &mut head_a, mark_a, mark_b)
            } else {
                (&mut *queue_b, &mut head_b, mark_b, mark_a)
            };
            let u = queue[*head];
            *head += 1;
            for &(w, _) in &adj[u as usize] {
                let sw = &mut stamp[w as usize];
                if *sw == theirs {
                    return true;
                }
                if *sw != mine {
                    *sw = mine;
                    queue.push(w);
                }
            }
        }
    }

    fn random_edge(&self, rng: &mut ChaCha8Rng) -> usize {
        rng.random_range(0..self.edges.len() as u32) as usize
    }

    /// Double-edge swaps `ab, cd → ad, cb`, rejected when they would make a
    /// self-link or a second link between two switches, and (if
    /// `keep_connected`) undone when they disconnect the graph. Every degree
    /// is preserved.
    fn mix_swaps(&mut self, rng: &mut ChaCha8Rng, attempts: u64, keep_connected: bool) {
        if self.edges.len() < 2 {
            return;
        }
        for _ in 0..attempts {
            let i = self.random_edge(rng);
            let j = self.random_edge(rng);
            if i == j {
                continue;
            }
            let (a, b) = self.edges[i];
            let (mut c, mut d) = self.edges[j];
            if rng.random_bool(0.5) {
                std::mem::swap(&mut c, &mut d);
            }
            if a == d || c == b || self.has_edge(a, d) || self.has_edge(c, b) {
                continue;
            }
            self.replace(i, a, d);
            self.replace(j, c, b);
            // Only a–b and c–d lost a direct link; if both pairs are still
            // linked, every former path can be rerouted.
            if keep_connected && !(self.linked(a, b) && self.linked(c, d)) {
                self.replace(i, a, b);
                self.replace(j, c, d);
            }
        }
    }

    /// Rewires: move a random link to a random pair of unlinked switches that
    /// both have a free port (degree below `max_degree` once the link is gone).
    /// The link count is preserved, degrees change.
    fn mix_rewires(&mut self, rng: &mut ChaCha8Rng, attempts: u64, max_degree: u32, keep_connected: bool) {
        let n = self.adj.len() as u32;
        if self.edges.is_empty() || n < 2 {
            return;
        }
        for _ in 0..attempts {
            let i = self.random_edge(rng);
            let (a, b) = self.edges[i];
            let x = rng.random_range(0..n);
            let mut y = rng.random_range(0..n - 1);
            if y >= x {
                y += 1;
            }
            if self.has_edge(x, y) {
                continue;
            }
            let freed = |v: u32| u32::from(v == a || v == b);
            if self.degree(x) - freed(x) >= max_degree || self.degree(y) - freed(y) >= max_degree {
                continue;
            }
            self.replace(i, x, y);
            if keep_connected && !self.linked(a, b) {
                self.replace(i, a, b);
            }
        }
    }

    /// Joins all components into one.
    ///
    /// Take a BFS spanning forest; its non-tree edges each close a cycle. To
    /// join component C to the growing component M, cut a non-tree edge a–b of
    /// M and an edge c–d of C (a non-tree one if C has a cycle) and cable a–c,
    /// b–d: M minus a–b is still connected, each end of C minus c–d now hangs
    /// off a or b, degrees are unchanged, and the new links join different
    /// components so they are neither duplicates nor self-links. An isolated
    /// switch v (possible only with `total_links`) is joined by moving a–b to
    /// a–v instead. Components with cycles are joined first, so that M never
    /// runs out of non-tree edges: there are E − N + k of them for k
    /// components, and k − 1 joins consume at most one each.
    /// Returns whether there was anything to join.
    fn join_components(&mut self, rng: &mut ChaCha8Rng) -> Result<bool, &'static str> {
        let n = self.adj.len();
        const NONE: u32 = u32::MAX;
        let mut label = vec![NONE; n];
        let mut is_tree = vec![false; self.edges.len()];
        let mut roots: Vec<u32> = Vec::new();
        let mut queue: Vec<u32> = Vec::new();
        for s in 0..n {
            if label[s] != NONE {
                continue;
            }
            let c = roots.len() as u32;
            roots.push(s as u32);
            label[s] = c;
            queue.clear();
            queue.push(s as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head];
                head += 1;
                for &(w, e) in &self.adj[u as usize] {
                    if label[w as usize] == NONE {
                        label[w as usize] = c;
                        is_tree[e as usize] = true;
                        queue.push(w);
                    }
                }
            }
        }
        let k = roots.len();
        if k <= 1 {
            return Ok(false);
        }
        let mut tree: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut cyclic: Vec<Vec<u32>> = vec![Vec::new(); k];
        for (e, &(a, _)) in self.edges.iter().enumerate() {
            let c = label[a as usize] as usize;
            let list = if is_tree[e] { &mut tree[c] } else { &mut cyclic[c] };
            list.push(e as u32);
        }
        let mut order: Vec<usize> = (0..k).collect();
        order.shuffle(rng);
        // 0: has a cycle, 1: a tree with links, 2: an isolated switch.
        let class: Vec<u8> = (0..k)
            .map(|c| {
                if !cyclic[c].is_empty() {
                    0
                } else if !tree[c].is_empty() {
                    1
                } else {
                    2
                }
            })
            .collect();
        order.sort_by_key(|&c| class[c]);
        let first = order[0];
        if cyclic[first].is_empty() {
            return Err("no component has a cycle to join the others with");
        }
        let mut pool = std::mem::take(&mut cyclic[first]);
        for &c in &order[1..] {
            if pool.is_empty() {
                return Err("ran out of cycle edges while joining components");
            }
            let i = pool.swap_remove(rng.random_range(0..pool.len() as u32) as usize) as usize;
            let (mut a, mut b) = self.edges[i];
            if rng.random_bool(0.5) {
                std::mem::swap(&mut a, &mut b);
            }
            match class[c] {
                2 => self.replace(i, a, roots[c]),
                cls => {
                    let candidates = if cls == 0 { &mut cyclic[c] } else { &mut tree[c] };
                    let j = candidates.swap_remove(rng.random_range(0..candidates.len() as u32) as usize) as usize;
                    let (c_end, d_end) = self.edges[j];
                    self.replace(i, a, c_end);
                    self.replace(j, b, d_end);
                    if cls == 0 {
                        // a–c is now a tree edge of the joined component and b–d closes a cycle.
                        pool.push(j as u32);
                        pool.append(&mut cyclic[c]);
                    }
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    /// Switch-to-switch adjacency of a generated fabric as sorted pairs, and
    /// checks of the invariants every irregular fabric must meet.
    fn switch_pairs(f: &Fabric, p: &IrregularParams) -> Vec<(u32, u32)> {
        let n = p.switches;
        let h = p.hosts_per_switch as u32;
        let ports = p.switch_ports as u32;
        let mut pairs = Vec::new();
        for s in 0..n {
            let node = f.node(NodeId(s));
            assert_eq!(node.name, format!("sw{s}"));
            assert_eq!(node.num_ports as u32, ports);
            for (port, _) in node.connected_ports() {
                let peer = f.peer(NodeId(s), port).unwrap();
                if f.node(peer.node).kind.is_switch() {
                    assert!((port as u32) <= ports - h, "switch link on host port {port} of sw{s}");
                    assert_ne!(peer.node, NodeId(s), "self-link at sw{s}");
                    if s < peer.node.0 {
                        pairs.push((s, peer.node.0));
                    }
                } else {
                    let j = s * h + (port as u32 - (ports - h + 1));
                    assert_eq!(f.node(peer.node).name, format!("h{j}"));
                }
            }
            let hosts = node.connected_ports().filter(|&(pt, _)| pt as u32 > ports - h).count() as u32;
            assert_eq!(hosts, h, "sw{s} hosts");
        }
        let before = pairs.len();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(before, pairs.len(), "two links between one pair of switches");
        f.check_connected().unwrap();
        pairs
    }

    fn degrees(n: u32, pairs: &[(u32, u32)]) -> Vec<u32> {
        let mut d = vec![0; n as usize];
        for &(a, b) in pairs {
            d[a as usize] += 1;
            d[b as usize] += 1;
        }
        d
    }

    #[test]
    fn kim_15_switch_network_has_nine_independent_cycles() {
        let p = IrregularParams::with_independent_cycles(15, 5, 9, 1, 2007);
        let f = p.build().unwrap();
        let pairs = switch_pairs(&f, &p);
        assert_eq!(pairs.len(), 23);
        // Algorithm 1 of paper 000: the cycles are the edges left out of a BFS (or DFS) tree.
        let mut seen = [false; 15];
        let mut tree_edges = 0;
        let mut queue = vec![0u32];
        seen[0] = true;
        while let Some(u) = queue.pop() {
            for (_, peer) in f.switch_neighbors(NodeId(u)) {
                if !seen[peer.node.index()] {
                    seen[peer.node.index()] = true;
                    tree_edges += 1;
                    queue.push(peer.node.0);
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(pairs.len() - tree_edges, 9);
        assert!(degrees(15, &pairs).iter().all(|&d| (1..=4).contains(&d)));
        assert_eq!(f.cas().count(), 15);
        assert_eq!(f.links().len(), 23 + 15);
        // total_links = 23 is the same request.
        let q = IrregularParams::with_total_links(15, 5, 23, 1, 2007);
        assert_eq!(switch_pairs(&q.build().unwrap(), &q), pairs);
    }

    #[test]
    fn paper_002_networks() {
        for (n, ports, l) in [(8, 8, 4), (16, 8, 4), (32, 10, 6), (64, 10, 6)] {
            let p = IrregularParams::with_links_per_switch(n, ports, l, 4, 1);
            let f = p.build().unwrap();
            let pairs = switch_pairs(&f, &p);
            assert_eq!(pairs.len() as u32, n * l / 2);
            assert!(degrees(n, &pairs).iter().all(|&d| d == l));
            assert_eq!(f.cas().count() as u32, 4 * n);
        }
    }

    #[test]
    fn same_seed_same_fabric_other_seed_other_fabric() {
        let dump = |seed| {
            let f = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed).build().unwrap();
            f.links()
                .iter()
                .map(|l| {
                    let e = l.ends.map(|e| (f.node(e.node).name.clone(), e.port));
                    format!("{e:?}")
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(dump(1), dump(1));
        assert_ne!(dump(1), dump(2));
        let pairs = |seed| {
            let p = IrregularParams::with_links_per_switch(16, 8, 4, 4, seed);
            switch_pairs(&p.build().unwrap(), &p)
        };
        assert_ne!(pairs(1), pairs(2), "different seeds must give different graphs, not just other ports");
    }

    #[test]
    fn two_switches_one_link_and_a_lone_switch() {
        let p = IrregularParams::with_links_per_switch(2, 3, 1, 2, 0);
        assert_eq!(switch_pairs(&p.build().unwrap(), &p), vec![(0, 1)]);
        let p = IrregularParams::with_links_per_switch(1, 4, 0, 4, 0);
        let f = p.build().unwrap();
        assert!(switch_pairs(&f, &p).is_empty());
        assert_eq!(f.links().len(), 4);
    }

    #[test]
    fn ring_is_the_only_two_regular_graph() {
        let p = IrregularParams::with_links_per_switch(12, 3, 2, 1, 5);
        let pairs = switch_pairs(&p.build().unwrap(), &p);
        assert_eq!(pairs.len(), 12);
        assert!(degrees(12, &pairs).iter().all(|&d| d == 2));
    }

    #[test]
    fn trees_and_dense_graphs_via_total_links() {
        // E = N − 1 forces a spanning tree; E = N·D/2 forces every port in use.
        let p = IrregularParams::with_total_links(20, 4, 19, 1, 3);
        assert_eq!(switch_pairs(&p.build().unwrap(), &p).len(), 19);
        let p = IrregularParams::with_total_links(21, 6, 42, 2, 3);
        let pairs = switch_pairs(&p.build().unwrap(), &p);
        assert!(degrees(21, &pairs).iter().all(|&d| d == 4));
        // The complete graph.
        let p = IrregularParams::with_total_links(6, 5, 15, 0, 3);
        assert_eq!(switch_pairs(&p.build().unwrap(), &p).len(), 15);
    }

    fn err(p: &IrregularParams) -> String {
        p.build().unwrap_err().to_string()
    }

    #[test]
    fn impossible_parameters_name_the_key() {
        let e = err(&IrregularParams::with_links_per_switch(15, 8, 3, 4, 0));
        assert!(e.starts_with("invalid parameter 'links_per_switch'") && e.contains("odd"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(4, 8, 4, 4, 0));
        assert!(e.contains("'links_per_switch'") && e.contains("only 3 other switches"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(16, 8, 5, 4, 0));
        assert!(e.contains("'links_per_switch'") && e.contains("need 9 ports"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(6, 8, 1, 4, 0));
        assert!(e.contains("'links_per_switch'") && e.contains("at least 2"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(6, 8, 0, 4, 0));
        assert!(e.contains("disconnected"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(6, 3, 0, 4, 0));
        assert!(e.starts_with("invalid parameter 'hosts_per_switch'"), "{e}");
        let e = err(&IrregularParams::with_links_per_switch(0, 3, 0, 1, 0));
        assert!(e.starts_with("invalid parameter 'switches'"), "{e}");

        let e = err(&IrregularParams::with_total_links(15, 5, 13, 1, 0));
        assert!(e.starts_with("invalid parameter 'total_links'") && e.contains("at least 14"), "{e}");
        let e = err(&IrregularParams::with_total_links(15, 5, 31, 1, 0));
        assert!(e.contains("'total_links'") && e.contains("at most 30 links"), "{e}");
        let e = err(&IrregularParams::with_independent_cycles(15, 5, 17, 1, 0));
        assert!(e.starts_with("invalid parameter 'independent_cycles'") && e.contains("31 links"), "{e}");
        let e = err(&IrregularParams::with_total_links(5, 8, 11, 0, 0));
        assert!(e.contains("exceed the 10 pairs"), "{e}");
        let e = err(&IrregularParams::with_total_links(3, 2, 2, 1, 0));
        assert!(e.contains("at most 1 links"), "{e}");

        let mut both = IrregularParams::with_total_links(15, 5, 23, 1, 0);
        both.independent_cycles = Some(9);
        let e = err(&both);
        assert!(
            e.starts_with("invalid parameter 'independent_cycles'") && e.contains("conflicts with 'total_links'"),
            "{e}"
        );
        both.total_links = None;
        both.independent_cycles = None;
        assert!(err(&both).contains("exactly one of"));
    }

    #[test]
    fn toml_keys() {
        let p: IrregularParams =
            toml::from_str("switches = 15\nswitch_ports = 5\nhosts_per_switch = 1\nindependent_cycles = 9\nseed = 4")
                .unwrap();
        assert_eq!(p, IrregularParams::with_independent_cycles(15, 5, 9, 1, 4));
        let e = toml::from_str::<IrregularParams>("switches = 15\nswitch_ports = 5\nhosts_per_switch = 1\nlinks = 4")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `links`"), "{e}");
    }

    #[test]
    fn havel_hakimi_realizes_or_refuses() {
        let g = Graph::havel_hakimi(&[3, 3, 2, 2, 2]).unwrap();
        let mut d = vec![0; 5];
        for &(a, b) in &g.edges {
            assert_ne!(a, b);
            d[a as usize] += 1;
            d[b as usize] += 1;
        }
        assert_eq!(d, vec![3, 3, 2, 2, 2]);
        assert!(Graph::havel_hakimi(&[3, 3, 1, 1]).is_none());
        assert!(Graph::havel_hakimi(&[4, 1, 1, 1]).is_none());
    }

    #[test]
    fn join_components_keeps_degrees() {
        // Havel–Hakimi on all-3 degrees builds disjoint K4s: 5 components.
        let mut g = Graph::havel_hakimi(&[3; 20]).unwrap();
        assert!(!(1..20).all(|v| g.linked(0, v)), "the test needs a disconnected start");
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        assert!(g.join_components(&mut rng).unwrap());
        assert!(g.adj.iter().all(|a| a.len() == 3));
        assert!((1..20).all(|v| g.linked(0, v)));
        let mut pairs: Vec<_> = g.edges.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), 30);
    }
}
