//! A hand-written Rust playout of Platoon's Protecting the Flank (7.d) between two random
//! policies: the speed reference `sandtable sim --reference platoon-flank` measures the engine
//! against. It spells out the same rules the encoding says (chip cup, the actions and their
//! preconditions, fire, grenades, melee, exits, the 7.d.4 victory) on plain arrays, and draws
//! from the same streams in the same order as the engine, so its games are the engine's
//! games, which a test checks.
//!
//! Only the numbers come from the ruleset (fire modifiers, terrain, deployment areas), read
//! once by [`Flank::new`]; nothing but the benchmark and its test calls this module.

use sandtable_ir::SideId;

use sandtable_runtime::board::{HexCoord, HexGrid};
use sandtable_runtime::engine::setup::{Activation, BoardSpec, Chips, DeployArea, Ground, Rules};
use sandtable_runtime::engine::state::Winner;
use sandtable_runtime::engine::{GameResult, stream_seed};
use sandtable_runtime::interp::Interp;
use sandtable_runtime::rng::Dice;
use sandtable_runtime::value::Val;

const NONE: u32 = u32::MAX;

#[derive(Clone)]
struct Spec {
    side: SideId,
    soldier: bool,
    fire_modifier: i64,
    movement: u32,
    fire_radius: i64,
    leader: bool,
}

/// The scenario as plain data.
pub struct Flank {
    grid: HexGrid,
    cube: Vec<(i32, i32, i32)>,
    cost: Vec<u32>,
    target_modifier: Vec<i64>,
    jungle: Vec<bool>,
    max_jungle: i64,
    /// Path hexes, and the bonus of a move kept entirely to them (5.b.1).
    path: Vec<bool>,
    path_bonus: u32,
    adjacent: Vec<Vec<u32>>,
    /// `within[r][h]`: the hexes within `r` of `h`, in the engine's order.
    within: Vec<Vec<Vec<u32>>>,
    pieces: Vec<Spec>,
    deploy: Vec<Vec<u32>>,
    exits: Vec<u32>,
    cup: Vec<SideId>,
    turns: u32,
    us: SideId,
    nva: SideId,
    grenade: i64,
}

struct Play {
    pos: Vec<u32>,
    alive: Vec<bool>,
    exited_at: Vec<u32>,
    pinned: Vec<bool>,
    dice: Dice,
    policy: Vec<Dice>,
    decisions: u32,
}

#[derive(Clone, PartialEq)]
enum Choice {
    Move(usize, u32),
    Leave(usize, u32),
    Fire(usize, u32),
    Grenade(usize, u32),
    Pass,
    /// 3.b: the side's units in this hex are activated.
    Activate(u32),
    /// 4.d exception: these unused units of the hex move together to the hex.
    Together(Vec<usize>, u32),
    Done,
}

fn roll10(d: &mut Dice) -> i64 {
    i64::from(d.index(10)) + 1
}

impl Flank {
    /// Read the numbers of the scenario from compiled rules (with their assumptions).
    pub fn new(rules: &Rules) -> Result<Flank, String> {
        let p = rules.program;
        let interp = Interp::new(p, rules.assumptions);
        let BoardSpec::Hex { grid, terrain, .. } = &rules.board else {
            return Err("Protecting the Flank is played on a hex board".into());
        };
        let ent = |name: &str| {
            p.entities
                .iter()
                .position(|e| e.name == name)
                .ok_or(format!("no `{name}`"))
        };
        let field = |e: usize, f: &str| -> Result<i64, String> {
            interp
                .field(&Val::Entity(e as u32), f)
                .map_err(|x| x.to_string())?
                .as_int()
                .ok_or(format!("{f} is not a number"))
        };
        let side = |n: &str| {
            p.sides
                .iter()
                .position(|s| s.name == n)
                .map(|s| s as SideId)
                .ok_or(format!("no side {n}"))
        };
        let (us, nva) = (side("us")?, side("nva")?);
        let jungle_e = ent("jungle")?;
        let path_e = ent("path")?;
        let n = grid.hex_count() as usize;
        let mut tm = vec![0; n];
        let mut jungle = vec![false; n];
        let mut path = vec![false; n];
        for h in grid.hexes() {
            let i = BoardSpec::hex_index(grid, h);
            let t = match terrain[i] {
                Some(Ground::Entity(t)) => t as usize,
                _ => return Err("a hex without a terrain entity".into()),
            };
            tm[i] = field(t, "target_modifier")?;
            jungle[i] = t == jungle_e;
            path[i] = t == path_e;
        }
        let mut within = Vec::new();
        for r in 0..=6u32 {
            within.push(
                grid.hexes()
                    .map(|h| {
                        grid.hexes_within(h, r)
                            .into_iter()
                            .map(|x| BoardSpec::hex_index(grid, x) as u32)
                            .collect()
                    })
                    .collect(),
            );
        }
        let kind_of = |e: usize| {
            p.entities[e]
                .kind
                .map(|k| p.kinds[k as usize].name.as_str())
        };
        let mut pieces = Vec::new();
        let mut deploy = vec![Vec::new(); p.sides.len()];
        let mut exits = Vec::new();
        for f in &rules.forces {
            for &e in &f.units {
                let e = e as usize;
                let soldier = kind_of(e) == Some("soldier");
                pieces.push(Spec {
                    side: f.side,
                    soldier,
                    fire_modifier: if soldier {
                        field(e, "fire_modifier")?
                    } else {
                        0
                    },
                    movement: field(e, "movement_factor")? as u32,
                    fire_radius: if soldier { field(e, "fire_radius")? } else { 0 },
                    leader: soldier
                        && interp
                            .field(&Val::Entity(e as u32), "leader")
                            .map_err(|x| x.to_string())?
                            == Val::Bool(true),
                });
            }
            let DeployArea::Hexes(hs) = &f.area else {
                return Err("deployment by hexes".into());
            };
            deploy[f.side as usize] = hs
                .iter()
                .map(|h| BoardSpec::hex_index(grid, *h) as u32)
                .collect();
            exits.extend(
                f.exits
                    .iter()
                    .map(|h| BoardSpec::hex_index(grid, *h) as u32),
            );
        }
        let cup = rules
            .phases
            .iter()
            .find_map(|ph| match &ph.activation {
                Activation::ChipCup(c) => Some(
                    c.iter()
                        .map(|(s, k)| match k {
                            Chips::Fixed(k) => Ok(std::iter::repeat_n(*s, *k as usize)),
                            Chips::PerUnit(_) => {
                                Err("the reference plays fixed chip counts".to_string())
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map(|v| v.into_iter().flatten().collect::<Vec<_>>()),
                ),
                _ => None,
            })
            .ok_or("no chip cup")??;
        Ok(Flank {
            grid: *grid,
            cube: grid
                .hexes()
                .map(|h| {
                    let c = grid.to_cube(h);
                    (c.q, c.r, c.s)
                })
                .collect(),
            cost: rules.hex_cost.iter().map(|c| c.unwrap_or(NONE)).collect(),
            target_modifier: tm,
            jungle,
            max_jungle: field(jungle_e, "max_in_fire_route")?,
            path,
            path_bonus: field(path_e, "movement_bonus")? as u32,
            adjacent: rules.hex_adjacent.clone(),
            within,
            pieces,
            deploy,
            exits,
            cup,
            turns: rules.turns,
            us,
            nva,
            grenade: field(ent("grenade")?, "fire_modifier")?,
        })
    }

    fn distance(&self, a: u32, b: u32) -> u32 {
        let (x, y) = (self.cube[a as usize], self.cube[b as usize]);
        (x.0.abs_diff(y.0))
            .max(x.1.abs_diff(y.1))
            .max(x.2.abs_diff(y.2))
    }

    fn hex(&self, i: u32) -> HexCoord {
        let rows = self.grid.rows();
        HexCoord::new(i / rows + 1, i % rows + 1).unwrap_or_else(|_| HexCoord::new(1, 1).unwrap())
    }

    fn enemy_at(&self, s: &Play, side: SideId, h: u32) -> bool {
        (0..self.pieces.len()).any(|i| s.alive[i] && s.pos[i] == h && self.pieces[i].side != side)
    }

    /// Movement costs from piece `i`, searched only up to `bound` (its movement factor).
    fn reach(&self, s: &Play, i: usize, bound: u32) -> Vec<u32> {
        self.reach_on(s, i, bound, None)
    }

    /// Movement costs along path hexes only, the start included (5.b.1).
    fn reach_path(&self, s: &Play, i: usize, bound: u32) -> Vec<u32> {
        self.reach_on(s, i, bound, Some(&self.path))
    }

    fn reach_on(&self, s: &Play, i: usize, bound: u32, only: Option<&[bool]>) -> Vec<u32> {
        let n = self.cube.len();
        let side = self.pieces[i].side;
        let mut enemy = vec![false; n];
        for j in 0..self.pieces.len() {
            if s.alive[j] && self.pieces[j].side != side {
                enemy[s.pos[j] as usize] = true;
            }
        }
        let start = s.pos[i] as usize;
        let mut dist = vec![u32::MAX; n];
        if only.is_some_and(|o| !o[start]) {
            return dist;
        }
        dist[start] = 0;
        let mut heap = std::collections::BinaryHeap::new();
        heap.push(std::cmp::Reverse((0u32, start)));
        while let Some(std::cmp::Reverse((d, at))) = heap.pop() {
            if d > dist[at] || (enemy[at] && at != start) {
                continue;
            }
            for &nb in &self.adjacent[at] {
                let nb = nb as usize;
                if only.is_some_and(|o| !o[nb]) {
                    continue;
                }
                let nd = d.saturating_add(self.cost[nb]);
                if nd > bound {
                    continue;
                }
                if nd < dist[nb] {
                    dist[nb] = nd;
                    heap.push(std::cmp::Reverse((nd, nb)));
                }
            }
        }
        dist
    }

    /// Fire may take any shortest route with no unit strictly between and at most
    /// `max_jungle` jungle hexes there (7.a.1).
    fn line_ok(&self, s: &Play, a: u32, b: u32) -> bool {
        let index = |h: HexCoord| BoardSpec::hex_index(&self.grid, h);
        let fewest = self.grid.fewest_on_open_route(
            self.hex(a),
            self.hex(b),
            |h| {
                let k = index(h) as u32;
                (0..self.pieces.len()).any(|j| s.alive[j] && s.pos[j] == k)
            },
            |h| u32::from(self.jungle[index(h)]),
        );
        matches!(fewest, Ok(Some(n)) if i64::from(n) <= self.max_jungle)
    }

    /// The hexes next to `h` that piece `i`'s move could enter it from (5.c.3), in the
    /// grid's order: reached and `h` entered within the factor of the slowest soldier moving
    /// with it (those already in `h`), or along connected path hexes within it and the bonus
    /// (5.b.1); never a hex holding an enemy unit.
    fn entry_hexes(&self, s: &Play, i: usize, h: u32) -> Vec<u32> {
        let side = self.pieces[i].side;
        let budget = (0..self.pieces.len())
            .filter(|&j| {
                s.alive[j] && s.pos[j] == h && self.pieces[j].soldier && self.pieces[j].side == side
            })
            .map(|j| self.pieces[j].movement)
            .fold(self.pieces[i].movement, u32::min);
        let enter = self.cost[h as usize];
        let plain = self.reach(s, i, budget);
        let along = if self.path[h as usize] {
            self.reach_path(s, i, budget + self.path_bonus)
        } else {
            Vec::new()
        };
        let within = |m: &[u32], k: u32, b: u32| {
            m.get(k as usize)
                .is_some_and(|&c| c != u32::MAX && c.saturating_add(enter) <= b)
        };
        self.grid
            .neighbours(self.hex(h))
            .into_iter()
            .map(|nb| BoardSpec::hex_index(&self.grid, nb) as u32)
            .filter(|&k| within(&plain, k, budget) || within(&along, k, budget + self.path_bonus))
            .filter(|&k| !self.enemy_at(s, side, k))
            .collect()
    }

    /// The actions of piece `i` (of `side`), in the order of the phase's `actions:` (the
    /// engine lists one actor's choices action by action).
    fn legal_piece(&self, s: &Play, side: SideId, i: usize) -> Vec<Choice> {
        self.listed(s, side, i, false)
    }

    /// Whether piece `i` has a legal action: the listing stops at the first, as the
    /// engine's does when a unit to activate is picked.
    fn has_legal(&self, s: &Play, side: SideId, i: usize) -> bool {
        !self.listed(s, side, i, true).is_empty()
    }

    /// [`Flank::legal_piece`]; with `first`, only up to the first choice found.
    fn listed(&self, s: &Play, side: SideId, i: usize, first: bool) -> Vec<Choice> {
        let mut out = Vec::new();
        if !s.alive[i] || self.pieces[i].side != side || s.pinned[i] {
            return out;
        }
        let soldier = self.pieces[i].soldier;
        // move_piece or move_decoy (4.a, 4.e, 5).
        let mf = self.pieces[i].movement;
        let reach = self.reach(s, i, mf);
        // 5.b.1: a soldier's move kept to connected path hexes goes one further.
        let (far, along) = if soldier {
            let far = mf + self.path_bonus;
            (far, self.reach_path(s, i, far))
        } else {
            (mf, Vec::new())
        };
        for &h in &self.within[far.min(6) as usize][s.pos[i] as usize] {
            let k = h as usize;
            let can = reach[k] <= mf || along.get(k).is_some_and(|&c| c <= far);
            if can && h != s.pos[i] && (soldier || !self.enemy_at(s, side, h)) {
                out.push(Choice::Move(i, h));
                if first {
                    return out;
                }
            }
        }
        // leave_board, leave_board_decoy (5.e, 1.b.1): a move through an exit hex of the
        // force and one step beyond.
        if side == self.nva
            && let Some(r) = self.pieces[i].movement.checked_sub(1)
        {
            let reach = self.reach(s, i, r);
            for &h in &self.within[r.min(6) as usize][s.pos[i] as usize] {
                if reach[h as usize] <= r && self.exits.contains(&h) && !self.enemy_at(s, side, h) {
                    out.push(Choice::Leave(i, h));
                    if first {
                        return out;
                    }
                }
            }
        }
        if !soldier {
            return out;
        }
        // fire_at (7.a): occupied hexes in board order.
        let mut occupied: Vec<u32> = (0..self.pieces.len())
            .filter(|&j| s.alive[j])
            .map(|j| s.pos[j])
            .collect();
        occupied.sort_unstable();
        occupied.dedup();
        for &h in &occupied {
            if self.enemy_at(s, side, h)
                && i64::from(self.distance(s.pos[i], h)) <= self.pieces[i].fire_radius
                && self.line_ok(s, s.pos[i], h)
            {
                out.push(Choice::Fire(i, h));
                if first {
                    return out;
                }
            }
        }
        // throw_grenade (7.c): adjacent hexes with enemies.
        for &h in &self.within[1][s.pos[i] as usize] {
            let adjacent = self.distance(s.pos[i], h) == 1;
            if adjacent && self.enemy_at(s, side, h) {
                out.push(Choice::Grenade(i, h));
                if first {
                    return out;
                }
            }
        }
        out
    }

    fn shoot(&self, s: &mut Play, side: SideId, h: u32, modifier: i64) {
        let targets: Vec<usize> = (0..self.pieces.len())
            .filter(|&j| s.alive[j] && s.pos[j] == h && self.pieces[j].side != side)
            .collect();
        for u in targets {
            let attack = roll10(&mut s.dice) + modifier;
            let defence = roll10(&mut s.dice) + self.target_modifier[h as usize];
            match attack - defence {
                ..=0 => {}
                1..=4 => s.pinned[u] = true,
                _ => {
                    s.alive[u] = false;
                    s.pinned[u] = false;
                }
            }
        }
    }

    fn apply(&self, s: &mut Play, c: Choice) {
        match c {
            Choice::Pass | Choice::Activate(_) | Choice::Done => {}
            Choice::Together(ps, h) => {
                // One after another; a unit the earlier ones made unable to go stays.
                for (n, &i) in ps.iter().enumerate() {
                    let side = self.pieces[i].side;
                    if n == 0 || self.legal_piece(s, side, i).contains(&Choice::Move(i, h)) {
                        // One melee for the group, when its last unit has arrived (5.c.3).
                        let left = ps[n + 1..]
                            .iter()
                            .filter(|&&j| {
                                self.legal_piece(s, side, j).contains(&Choice::Move(j, h))
                            })
                            .count();
                        self.enter(s, i, h, left == 0);
                    }
                }
            }
            Choice::Leave(i, h) => {
                s.pos[i] = h;
                s.alive[i] = false;
                s.exited_at[i] = h;
            }
            Choice::Fire(i, h) => {
                self.shoot(s, self.pieces[i].side, h, self.pieces[i].fire_modifier)
            }
            Choice::Grenade(i, h) => self.shoot(s, self.pieces[i].side, h, self.grenade),
            Choice::Move(i, h) => self.enter(s, i, h, true),
        }
    }

    /// Piece `i` moves to `h`; with `fight`, a melee there is resolved (the last of a group).
    fn enter(&self, s: &mut Play, i: usize, h: u32, fight: bool) {
        {
            {
                let from = if self.pieces[i].soldier {
                    self.entry_hexes(s, i, h)
                } else {
                    Vec::new()
                };
                s.pos[i] = h;
                if !self.pieces[i].soldier {
                    return;
                }
                // 5.c.2 enemy decoys go; 5.c.3 melee between unpinned soldiers.
                let side = self.pieces[i].side;
                for j in 0..self.pieces.len() {
                    if s.alive[j]
                        && s.pos[j] == h
                        && self.pieces[j].side != side
                        && !self.pieces[j].soldier
                    {
                        s.alive[j] = false;
                        s.pinned[j] = false;
                    }
                }
                let count = |s: &Play, mine: bool, pinned_ok: bool| {
                    (0..self.pieces.len())
                        .filter(|&j| {
                            s.alive[j]
                                && s.pos[j] == h
                                && self.pieces[j].soldier
                                && (self.pieces[j].side == side) == mine
                                && (pinned_ok || !s.pinned[j])
                        })
                        .count() as i64
                };
                if fight && count(s, false, true) > 0 {
                    let (att, def) = (count(s, true, false), count(s, false, false));
                    let attack = roll10(&mut s.dice) + 2 * att;
                    let defence = roll10(&mut s.dice) + 2 * def;
                    let losers_mine = match attack - defence {
                        5.. => Some(false),
                        -4..=4 => None,
                        _ => Some(true),
                    };
                    match losers_mine {
                        // Every soldier that just entered goes back (5.c.3), into the hex
                        // the side picks when more than one qualifies.
                        None => {
                            let k = if from.len() > 1 {
                                s.decisions += 1;
                                s.policy[side as usize].index(from.len() as u32) as usize
                            } else {
                                0
                            };
                            let from = from[k];
                            for j in 0..self.pieces.len() {
                                if s.alive[j]
                                    && s.pos[j] == h
                                    && self.pieces[j].soldier
                                    && self.pieces[j].side == side
                                {
                                    s.pos[j] = from;
                                }
                            }
                        }
                        Some(mine) => {
                            for j in 0..self.pieces.len() {
                                if s.alive[j]
                                    && s.pos[j] == h
                                    && self.pieces[j].soldier
                                    && (self.pieces[j].side == side) == mine
                                {
                                    s.alive[j] = false;
                                    s.pinned[j] = false;
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn pick(&self, s: &mut Play, side: SideId, choices: Vec<Choice>) -> Choice {
        let k = s.policy[side as usize].index(choices.len() as u32) as usize;
        s.decisions += 1;
        choices.into_iter().nth(k).unwrap_or(Choice::Done)
    }

    /// One chip (or the free action): 3.b, the side picks a hex of its units with something
    /// to do (or passes); 4.d, every unit that started there acts once, in the order the side
    /// chooses, when one of them is an unpinned leader, else one does; units may move
    /// together; the side may end the activation at any time.
    fn decide(&self, s: &mut Play, side: SideId) {
        let mut places: Vec<u32> = Vec::new();
        for i in 0..self.pieces.len() {
            if s.alive[i] && self.pieces[i].side == side && !places.contains(&s.pos[i]) {
                places.push(s.pos[i]);
            }
        }
        let mut choices: Vec<Choice> = places
            .into_iter()
            .filter(|&h| {
                (0..self.pieces.len())
                    .any(|i| s.alive[i] && s.pos[i] == h && self.has_legal(s, side, i))
            })
            .map(Choice::Activate)
            .collect();
        choices.push(Choice::Pass);
        let Choice::Activate(h) = self.pick(s, side, choices) else {
            return;
        };
        let unit: Vec<usize> = (0..self.pieces.len())
            .filter(|&i| s.alive[i] && self.pieces[i].side == side && s.pos[i] == h)
            .collect();
        let all = unit.iter().any(|&i| self.pieces[i].leader && !s.pinned[i]);
        let mut used = vec![false; unit.len()];
        loop {
            let none_yet = !used.contains(&true);
            let mut choices = Vec::new();
            let mut fresh: Vec<(usize, usize, usize)> = Vec::new();
            for (k, &i) in unit.iter().enumerate() {
                if used[k] || !s.alive[i] || !(all || none_yet) {
                    continue;
                }
                let from = choices.len();
                choices.extend(self.legal_piece(s, side, i));
                fresh.push((i, from, choices.len()));
            }
            // move_piece, then move_decoy: same destination, two or more units.
            let mut together = Vec::new();
            for soldiers in [true, false] {
                let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
                for &(i, from, to) in &fresh {
                    if self.pieces[i].soldier != soldiers {
                        continue;
                    }
                    for c in &choices[from..to] {
                        if let Choice::Move(_, d) = *c {
                            match groups.iter_mut().find(|(g, _)| *g == d) {
                                Some((_, ps)) => ps.push(i),
                                None => groups.push((d, vec![i])),
                            }
                        }
                    }
                }
                together.extend(
                    groups
                        .into_iter()
                        .filter(|(_, ps)| ps.len() >= 2)
                        .map(|(d, ps)| Choice::Together(ps, d)),
                );
            }
            choices.extend(together);
            if choices.is_empty() {
                return;
            }
            choices.push(Choice::Done);
            let c = self.pick(s, side, choices);
            match &c {
                Choice::Done => return,
                Choice::Together(ps, _) => {
                    for p in ps {
                        if let Some(k) = unit.iter().position(|u| u == p) {
                            used[k] = true;
                        }
                    }
                }
                Choice::Move(i, _)
                | Choice::Leave(i, _)
                | Choice::Fire(i, _)
                | Choice::Grenade(i, _) => {
                    if let Some(k) = unit.iter().position(|u| u == i) {
                        used[k] = true;
                    }
                }
                _ => {}
            }
            self.apply(s, c);
        }
    }

    /// One game between random policies, as the engine plays it with the same seed.
    pub fn playout(&self, seed: u64) -> GameResult {
        let n = self.pieces.len();
        let sides = self.deploy.len();
        let mut s = Play {
            pos: vec![NONE; n],
            alive: vec![true; n],
            exited_at: vec![NONE; n],
            pinned: vec![false; n],
            dice: Dice::new(stream_seed(seed, 0)),
            policy: (0..sides as u64)
                .map(|x| Dice::new(stream_seed(seed, 1 + x)))
                .collect(),
            decisions: 0,
        };
        for i in 0..n {
            let side = self.pieces[i].side;
            let spots: Vec<u32> = self.deploy[side as usize]
                .iter()
                .copied()
                .filter(|&h| !(0..n).any(|j| s.pos[j] == h && self.pieces[j].side != side))
                .collect();
            let k = s.policy[side as usize].index(spots.len() as u32) as usize;
            s.pos[i] = spots[k];
            s.decisions += 1;
        }
        // 7.d.3: the free American action.
        self.decide(&mut s, self.us);
        for _ in 0..self.turns {
            let mut cup = self.cup.clone();
            while !cup.is_empty() {
                let k = s.dice.index(cup.len() as u32) as usize;
                let side = cup.remove(k);
                self.decide(&mut s, side);
            }
            s.pinned.iter_mut().for_each(|p| *p = false);
        }
        // 7.d.4.
        let lost = |side: SideId, soldiers_only: bool| {
            (0..n)
                .filter(|&j| {
                    !s.alive[j]
                        && s.exited_at[j] == NONE
                        && self.pieces[j].side == side
                        && (!soldiers_only || self.pieces[j].soldier)
                })
                .count() as i64
        };
        let out = (0..n)
            .filter(|&j| {
                self.pieces[j].side == self.nva
                    && self.pieces[j].soldier
                    && self.exits.contains(&s.exited_at[j])
            })
            .count() as i64;
        let points = lost(self.us, true) + out;
        let others = lost(self.us, true) > lost(self.nva, true) || lost(self.us, true) == 4;
        let nva_wins = points >= 6 || others;
        // Without the exits (those pieces back on the board) the NVA would not have won.
        let won_by_exits = nva_wins && out > 0 && !(points - out >= 6 || others);
        let mut scores = vec![0; sides];
        scores[self.nva as usize] = points;
        GameResult {
            winner: Winner::Side(if nva_wins { self.nva } else { self.us }),
            turns: self.turns,
            scores,
            losses: (0..sides as SideId)
                .map(|x| lost(x, false) as u32)
                .collect(),
            decisions: s.decisions,
            exits: (0..sides as SideId)
                .map(|x| {
                    (0..n)
                        .filter(|&j| s.exited_at[j] != NONE && self.pieces[j].side == x)
                        .count() as u32
                })
                .collect(),
            won_by_exits,
        }
    }
}
