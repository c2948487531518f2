//! Exact outcome distributions of resolutions.
//!
//! Every textual die occurrence is an independent roll, so expressions combine by
//! convolution. A `let` whose value is random and is read more than once would correlate its
//! readers, so the evaluator branches on its value (enumeration); a random `let` read at most
//! once stays a distribution. Pools have closed forms: sums by convolution, successes and
//! counts as binomials, keep-highest/lowest by a dynamic programme over faces.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use sandtable_ir::{self as ir, BinOp, Builtin, Expr, Program, Stmt, UnOp, Value};

use crate::dist::{Dist, Weight, binomial, mixture, product};
use crate::error::RunError;
use crate::interp::{Assumptions, Interp, binary, div_up, matches, normalize};
use crate::value::{EffectRec, OutcomeKey, ScoreOpRec, Val};

/// Default bound on enumeration work (value pairs combined plus paths explored).
pub const DEFAULT_LIMIT: u64 = 50_000_000;

#[derive(Debug, Clone)]
enum Slot<W: Weight> {
    Fixed(Val),
    /// A random value read at most once: kept as a distribution.
    Lazy(Dist<Val, W>),
}

/// A pool as the evaluator sees it: the distribution of its size, and its die.
type PoolParts<W> = (Dist<Val, W>, u32);

#[derive(Debug, Clone)]
struct Env<W: Weight> {
    slots: Vec<Slot<W>>,
    effects: Vec<EffectRec>,
}

enum Cont<'a> {
    Stmts(&'a [Stmt]),
    ArmEnd(&'a ir::Arm),
    Set(ir::Slot, Val),
}

/// The exact outcome distribution of `proc` with `args`: computed with `u128` weights when
/// they suffice, else with big integers.
pub fn distribution(
    program: &Program,
    assumptions: &Assumptions,
    limit: u64,
    proc: u32,
    args: Vec<Val>,
) -> Result<Dist<OutcomeKey, BigUint>, RunError> {
    match Exact::<u128>::new(program, assumptions, limit).run(proc, args.clone()) {
        Ok(d) => Ok(d.to_big()),
        Err(RunError::WeightOverflow) => {
            Exact::<BigUint>::new(program, assumptions, limit).run(proc, args)
        }
        Err(e) => Err(e),
    }
}

pub struct Exact<'p, W: Weight> {
    interp: Interp<'p>,
    program: &'p Program,
    limit: u64,
    work: std::cell::Cell<u64>,
    /// Per procedure: how often each slot is read (loops count twice).
    reads: Vec<Vec<u32>>,
    /// Calls in progress: the compiler refuses recursion, this guards programs built by hand.
    depth: std::cell::Cell<usize>,
    /// Address of the statement being run, to name its line in an error.
    current: std::cell::Cell<usize>,
    weight: std::marker::PhantomData<W>,
}

impl<'p, W: Weight> Exact<'p, W> {
    pub fn new(program: &'p Program, assumptions: &'p Assumptions, limit: u64) -> Self {
        let reads = program
            .procs
            .iter()
            .map(|p| slot_reads(&p.body, p.n_slots as usize))
            .collect();
        Exact {
            interp: Interp::new(program, assumptions),
            program,
            limit,
            work: std::cell::Cell::new(0),
            reads,
            depth: std::cell::Cell::new(0),
            current: std::cell::Cell::new(0),
            weight: std::marker::PhantomData,
        }
    }

    fn charge(&self, n: u64) -> Result<(), RunError> {
        let w = self.work.get().saturating_add(n);
        self.work.set(w);
        if w > self.limit {
            return Err(RunError::TooLarge {
                estimate: format!("{w} or more"),
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// Refuse before combining two distributions whose product would blow the budget.
    fn charge_product(&self, a: usize, b: usize) -> Result<(), RunError> {
        let n = (a as u64).saturating_mul(b as u64);
        if n > self.limit {
            return Err(RunError::TooLarge {
                estimate: n.to_string(),
                limit: self.limit,
            });
        }
        self.charge(n)
    }

    /// The outcome distribution of a procedure for fixed arguments.
    pub fn run(&self, proc: u32, args: Vec<Val>) -> Result<Dist<OutcomeKey, W>, RunError> {
        if self.depth.get() >= crate::interp::MAX_CALL_DEPTH {
            return Err(RunError::Limit {
                what: "call depth".into(),
                // The depth the call would reach: the resolution itself is depth 1.
                size: self.depth.get() as u64 + 1,
                limit: crate::interp::MAX_CALL_DEPTH as u64,
            });
        }
        self.depth.set(self.depth.get() + 1);
        let r = self
            .run_inner(proc, args)
            .map_err(|e| e.at_addr(self.program, proc, self.current.get()));
        self.depth.set(self.depth.get() - 1);
        r
    }

    fn run_inner(&self, proc: u32, args: Vec<Val>) -> Result<Dist<OutcomeKey, W>, RunError> {
        let p = &self.program.procs[proc as usize];
        let mut slots: Vec<Slot<W>> = args.into_iter().map(Slot::Fixed).collect();
        slots.resize(
            p.n_slots.max(p.params.len() as u32) as usize,
            Slot::Fixed(Val::Unit),
        );
        let env = Env {
            slots,
            effects: Vec::new(),
        };
        // Not reduced: a pure sum keeps its natural denominator (6^100 for 100d6), which
        // callers may show beside the reduced fractions.
        self.exec(proc, vec![Cont::Stmts(&p.body)], env, 1)
    }

    fn exec<'a>(
        &'a self,
        proc: u32,
        mut stack: Vec<Cont<'a>>,
        mut env: Env<W>,
        paths: u128,
    ) -> Result<Dist<OutcomeKey, W>, RunError> {
        self.charge(1)?;
        if paths > u128::from(self.limit) {
            return Err(RunError::TooLarge {
                estimate: format!("{paths} paths"),
                limit: self.limit,
            });
        }
        loop {
            let Some(top) = stack.pop() else {
                let key = if env.effects.is_empty() {
                    OutcomeKey::Nothing
                } else {
                    OutcomeKey::Effects(env.effects.iter().map(|e| e.show(self.program)).collect())
                };
                return Ok(Dist::point(key));
            };
            let stmts = match top {
                Cont::Set(slot, v) => {
                    env.slots[slot as usize] = Slot::Fixed(v);
                    continue;
                }
                Cont::ArmEnd(arm) => {
                    if let Some(o) = &arm.outcome {
                        return Ok(Dist::point(OutcomeKey::Named(o.clone())));
                    }
                    if let Some(e) = &arm.value {
                        let d = self.eval(e, &env)?;
                        for v in d.weights.keys() {
                            crate::interp::applies(v.clone())?;
                        }
                        return Ok(d.map(|v| OutcomeKey::of_value(normalize(v.clone()))));
                    }
                    continue;
                }
                Cont::Stmts(s) => s,
            };
            let Some((first, rest)) = stmts.split_first() else {
                continue;
            };
            stack.push(Cont::Stmts(rest));
            self.current.set(std::ptr::from_ref(first).addr());
            match first {
                Stmt::Let { slot, value } => {
                    let d = self.eval(value, &env)?.map(|v| normalize(v.clone()));
                    if let Some(v) = d.as_point() {
                        env.slots[*slot as usize] = Slot::Fixed(v.clone());
                    } else if self.reads[proc as usize]
                        .get(*slot as usize)
                        .copied()
                        .unwrap_or(2)
                        <= 1
                    {
                        env.slots[*slot as usize] = Slot::Lazy(d);
                    } else {
                        return self.branch(proc, stack, env, paths, &d, |env, v| {
                            env.slots[*slot as usize] = Slot::Fixed(v.clone());
                            None
                        });
                    }
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let d = self.eval(cond, &env)?;
                    return self.branch(proc, stack, env, paths, &d, |_, v| {
                        Some(Cont::Stmts(if matches!(v, Val::Bool(true)) {
                            then
                        } else {
                            otherwise
                        }))
                    });
                }
                Stmt::Bands {
                    scrutinee, arms, ..
                } => {
                    let d = self.eval(scrutinee, &env)?.map(|v| normalize(v.clone()));
                    let by_arm = d.try_map(|v| {
                        arms.iter()
                            .position(|a| a.patterns.iter().any(|p| matches(p, v)))
                            .ok_or_else(|| RunError::NoBand {
                                value: v.show(self.program),
                                proc: self.program.procs[proc as usize].name.clone(),
                            })
                    })?;
                    let mut branches = Vec::new();
                    for (i, w) in &by_arm.weights {
                        let arm = &arms[*i];
                        let mut st: Vec<Cont> = stack.iter().map(clone_cont).collect();
                        st.push(Cont::ArmEnd(arm));
                        st.push(Cont::Stmts(&arm.body));
                        let sub = self.exec(
                            proc,
                            st,
                            env.clone(),
                            paths.saturating_mul(by_arm.weights.len() as u128),
                        )?;
                        branches.push((w.clone(), sub));
                    }
                    return Ok(mixture(branches, &by_arm.total)?);
                }
                Stmt::Result(e) => {
                    let d = self.eval(e, &env)?;
                    for v in d.weights.keys() {
                        crate::interp::applies(v.clone())?;
                    }
                    return Ok(d.map(|v| OutcomeKey::of_value(normalize(v.clone()))));
                }
                Stmt::Outcome(o) => return Ok(Dist::point(OutcomeKey::Named(o.clone()))),
                Stmt::Effect(e) => {
                    let d = self.effect(e, &env)?;
                    return self.branch_effect(proc, stack, env, paths, d);
                }
                Stmt::Choose { .. } => return Err(RunError::NeedsDecision),
                Stmt::For { slot, iter, body } => {
                    let d = self.eval(iter, &env)?;
                    let unroll = |set: &Val, st: &mut Vec<Cont<'a>>| -> Result<(), RunError> {
                        let items = self.point_items(&Dist::point(set.clone()), "iterate")?;
                        if items.len() as i64 > crate::interp::MAX_LOOP {
                            return Err(RunError::Limit {
                                what: "`for` iterations".into(),
                                size: items.len() as u64,
                                limit: crate::interp::MAX_LOOP as u64,
                            });
                        }
                        for it in items.into_iter().rev() {
                            st.push(Cont::Stmts(body));
                            st.push(Cont::Set(*slot, it));
                        }
                        Ok(())
                    };
                    match d.as_point() {
                        Some(set) => unroll(set, &mut stack)?,
                        // A set that depends on the dice (`for i in 1..=d3`).
                        None => return self.loop_branches(proc, &stack, &env, paths, &d, unroll),
                    }
                }
                Stmt::Repeat { count, body } => {
                    let d = self.eval(count, &env)?;
                    return self.loop_branches(proc, &stack, &env, paths, &d, |v, st| {
                        let n = self.int(v)?;
                        if n > crate::interp::MAX_LOOP {
                            return Err(RunError::Limit {
                                what: "`repeat` count".into(),
                                size: n as u64,
                                limit: crate::interp::MAX_LOOP as u64,
                            });
                        }
                        for _ in 0..n.max(0) {
                            st.push(Cont::Stmts(body));
                        }
                        Ok(())
                    });
                }
                Stmt::Require(c) => {
                    let d = self.eval(c, &env)?;
                    return self.branch(proc, stack, env, paths, &d, |_, v| {
                        if matches!(v, Val::Bool(true)) {
                            None
                        } else {
                            Some(Cont::ArmEnd(illegal_arm()))
                        }
                    });
                }
                Stmt::Expr(e) => {
                    self.eval(e, &env)?;
                }
            }
        }
    }

    /// A loop whose runs depend on a value with distribution `d` (`repeat d3`, `for i in
    /// 1..=d3`): each value is its own branch, weighted by its chance, with its runs pushed by
    /// `unroll` onto a copy of the rest of the procedure.
    fn loop_branches<'a>(
        &'a self,
        proc: u32,
        stack: &[Cont<'a>],
        env: &Env<W>,
        paths: u128,
        d: &Dist<Val, W>,
        unroll: impl Fn(&Val, &mut Vec<Cont<'a>>) -> Result<(), RunError>,
    ) -> Result<Dist<OutcomeKey, W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        for (v, w) in &d.weights {
            let mut st: Vec<Cont<'a>> = stack.iter().map(clone_cont).collect();
            unroll(v, &mut st)?;
            let more = paths.saturating_mul(d.len() as u128);
            branches.push((w.clone(), self.exec(proc, st, env.clone(), more)?));
        }
        Ok(mixture(branches, &d.total)?)
    }

    /// Continue once per value of `d`; `step` adjusts the environment and may push a block.
    fn branch<'a>(
        &'a self,
        proc: u32,
        stack: Vec<Cont<'a>>,
        env: Env<W>,
        paths: u128,
        d: &Dist<Val, W>,
        step: impl Fn(&mut Env<W>, &Val) -> Option<Cont<'a>>,
    ) -> Result<Dist<OutcomeKey, W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        let more = paths.saturating_mul(d.len() as u128);
        for (v, w) in &d.weights {
            let mut e = env.clone();
            let mut st: Vec<Cont> = stack.iter().map(clone_cont).collect();
            if let Some(c) = step(&mut e, v) {
                st.push(c);
            }
            branches.push((w.clone(), self.exec(proc, st, e, more)?));
        }
        Ok(mixture(branches, &d.total)?)
    }

    fn branch_effect<'a>(
        &'a self,
        proc: u32,
        stack: Vec<Cont<'a>>,
        env: Env<W>,
        paths: u128,
        d: Dist<EffectRec, W>,
    ) -> Result<Dist<OutcomeKey, W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        let more = paths.saturating_mul(d.len() as u128);
        for (rec, w) in &d.weights {
            let mut e = env.clone();
            e.effects.push(rec.clone());
            let st: Vec<Cont> = stack.iter().map(clone_cont).collect();
            branches.push((w.clone(), self.exec(proc, st, e, more)?));
        }
        Ok(mixture(branches, &d.total)?)
    }

    fn effect(&self, e: &ir::Effect, env: &Env<W>) -> Result<Dist<EffectRec, W>, RunError> {
        Ok(match e {
            ir::Effect::Eliminate(x) => self.eval(x, env)?.map(|v| EffectRec::Eliminate(v.clone())),
            ir::Effect::Place { marker, target } => {
                self.eval(target, env)?.map(|v| EffectRec::Place {
                    marker: *marker,
                    target: v.clone(),
                })
            }
            ir::Effect::Remove { marker, target } => {
                self.eval(target, env)?.map(|v| EffectRec::Remove {
                    marker: *marker,
                    target: v.clone(),
                })
            }
            ir::Effect::Move { what, to } => {
                let a = self.eval(what, env)?;
                let b = self.eval(to, env)?;
                self.charge_product(a.len(), b.len())?;
                product(&a, &b, |x, y| {
                    Ok::<_, RunError>(EffectRec::Move {
                        what: x.clone(),
                        to: y.clone(),
                    })
                })?
            }
            ir::Effect::Score { side, op, value } => {
                let op = match op {
                    ir::ScoreOp::Add => ScoreOpRec::Add,
                    ir::ScoreOp::Sub => ScoreOpRec::Sub,
                    ir::ScoreOp::Set => ScoreOpRec::Set,
                };
                self.eval(value, env)?.try_map(|v| {
                    Ok::<_, RunError>(EffectRec::Score {
                        side: *side,
                        op,
                        value: self.int(v)?,
                    })
                })?
            }
            ir::Effect::Win(s) => Dist::point(EffectRec::Win(*s)),
            ir::Effect::Undecided(u) => {
                return Err(self
                    .interp
                    .constant(&Value::Unknown(*u))
                    .err()
                    .unwrap_or(RunError::NeedsDecision));
            }
        })
    }

    fn int(&self, v: &Val) -> Result<i64, RunError> {
        v.as_int().ok_or_else(|| {
            RunError::Type(format!("expected a number, found {}", v.show(self.program)))
        })
    }

    fn die_dist(&self, die: u32) -> Result<Dist<i64, W>, RunError> {
        let faces = &self.program.dice[die as usize].faces;
        if faces.is_empty() {
            let mut dummy = crate::rng::Dice::new(0);
            let mut host = crate::interp::NoGame;
            let mut ctx = crate::interp::Ctx::new(&mut dummy, &mut host);
            return Err(self
                .interp
                .roll(die, &mut ctx)
                .err()
                .unwrap_or(RunError::Type("die without faces".into())));
        }
        Ok(Dist::uniform(faces.iter().copied()))
    }

    /// Sum of `n` dice. A die whose faces run consecutively with one weight each (every
    /// `dN`) convolves by a sliding window: each step is additions only.
    fn sum_dist(&self, n: i64, die: u32) -> Result<Dist<i64, W>, RunError> {
        crate::interp::pool_size(n)?;
        let one = self.die_dist(die)?;
        // The total first: when it cannot be represented, give up before any work.
        let total = one.total.pow(n as u64)?;
        let (Some(&lo), Some(&hi)) = (one.weights.keys().next(), one.weights.keys().next_back())
        else {
            return Ok(Dist::point(0));
        };
        let consecutive =
            one.weights.len() as i64 == hi - lo + 1 && one.weights.values().all(Weight::is_one);
        let width = (hi - lo) as usize;
        // Dense counts of (sum - k * lo) after k dice.
        let mut acc: Vec<W> = vec![W::one()];
        // Two buffers swapped each step: big weights keep their allocations across steps.
        let mut next: Vec<W> = Vec::new();
        for _ in 0..n {
            self.charge_product(acc.len(), width + 1)?;
            next.resize(acc.len() + width, W::zero());
            if consecutive {
                let mut window = W::zero();
                for (i, slot) in next.iter_mut().enumerate() {
                    if i < acc.len() {
                        window.add_assign(&acc[i])?;
                    }
                    if i > width {
                        window.sub_assign(&acc[i - width - 1]);
                    }
                    slot.assign(&window);
                }
            } else {
                for slot in next.iter_mut() {
                    slot.assign(&W::zero());
                }
                for (i, a) in acc.iter().enumerate() {
                    if a.is_zero() {
                        continue;
                    }
                    for (face, w) in &one.weights {
                        next[i + (face - lo) as usize].add_assign(&a.mul(w)?)?;
                    }
                }
            }
            std::mem::swap(&mut acc, &mut next);
        }
        let base = lo.checked_mul(n).ok_or(RunError::Overflow)?;
        let weights = acc
            .into_iter()
            .enumerate()
            .filter(|(_, w)| !w.is_zero())
            .map(|(i, w)| (base + i as i64, w))
            .collect();
        Ok(Dist::from_weights(weights, total))
    }

    /// How many of `n` dice land in `[lo, hi]`: a binomial.
    fn count_dist(
        &self,
        n: i64,
        die: u32,
        lo: Option<i64>,
        hi: Option<i64>,
    ) -> Result<Dist<i64, W>, RunError> {
        crate::interp::pool_size(n)?;
        self.charge(n as u64 + 1)?;
        let faces = &self.program.dice[die as usize].faces;
        let f = faces.len() as u64;
        let s = faces
            .iter()
            .filter(|x| lo.is_none_or(|l| **x >= l) && hi.is_none_or(|h| **x <= h))
            .count() as u64;
        let n = n as u64;
        let (ws, wf) = (W::from_u64(s), W::from_u64(f - s));
        let mut w = BTreeMap::new();
        for k in 0..=n {
            let ways = binomial::<W>(n, k)?
                .mul(&ws.pow(k)?)?
                .mul(&wf.pow(n - k)?)?;
            w.insert(k as i64, ways);
        }
        Ok(Dist::from_weights(w, W::from_u64(f).pow(n)?))
    }

    /// Sum of the `k` highest (or lowest) of `n` dice: walk the distinct faces from the kept
    /// end, choosing how many dice show each.
    fn keep_dist(&self, k: i64, n: i64, die: u32, highest: bool) -> Result<Dist<i64, W>, RunError> {
        crate::interp::pool_size(n)?;
        let n = n as u64;
        let k = k.clamp(0, n as i64) as u64;
        let mut faces: BTreeMap<i64, u64> = BTreeMap::new();
        for f in &self.program.dice[die as usize].faces {
            *faces.entry(*f).or_default() += 1;
        }
        let order: Vec<(i64, u64)> = if highest {
            faces.into_iter().rev().collect()
        } else {
            faces.into_iter().collect()
        };
        // The walk below combines every count of dice placed with every count of dice showing
        // the next face: (n + 1) pairs for the first face, (n + 1)(n + 2) / 2 for each later
        // one, each charged at least once. Refuse before any work (and before the triangle's
        // memory) when that alone is over the budget.
        let pairs = (n + 1).saturating_add(
            (order.len() as u64)
                .saturating_sub(1)
                .saturating_mul((n + 1).saturating_mul(n + 2) / 2),
        );
        let ahead = self.work.get().saturating_add(pairs);
        if ahead > self.limit {
            return Err(RunError::TooLarge {
                estimate: format!("{ahead} or more"),
                limit: self.limit,
            });
        }
        // The total first: when it cannot be represented, give up before any work.
        let total = W::from_u64(self.program.dice[die as usize].faces.len() as u64).pow(n)?;
        // Pascal's triangle up to n, built once by additions.
        self.charge(n.saturating_mul(n) / 2 + 1)?;
        let mut pascal: Vec<Vec<W>> = Vec::with_capacity(n as usize + 1);
        for i in 0..=n as usize {
            let mut row = vec![W::one(); i + 1];
            for j in 1..i {
                row[j] = pascal[i - 1][j - 1].add(&pascal[i - 1][j])?;
            }
            pascal.push(row);
        }
        // state: dice placed so far → (kept sum → ways)
        let mut states: BTreeMap<u64, BTreeMap<i64, W>> = BTreeMap::new();
        states.entry(0).or_default().insert(0, W::one());
        for (value, mult) in order {
            let mut next: BTreeMap<u64, BTreeMap<i64, W>> = BTreeMap::new();
            let m = W::from_u64(mult);
            let mut powers = vec![W::one()];
            for c in 1..=n as usize {
                let p = powers[c - 1].mul(&m)?;
                powers.push(p);
            }
            for (placed, sums) in &states {
                for c in 0..=(n - placed) {
                    let ways =
                        pascal[(n - placed) as usize][c as usize].mul(&powers[c as usize])?;
                    let kept_before = (*placed).min(k);
                    let kept_after = (placed + c).min(k);
                    let add = value * (kept_after - kept_before) as i64;
                    self.charge(sums.len() as u64)?;
                    let slot = next.entry(placed + c).or_default();
                    for (s, w) in sums {
                        crate::dist::bump(slot, s + add, ways.mul(w)?)?;
                    }
                }
            }
            states = next;
        }
        Ok(Dist::from_weights(
            states.remove(&n).unwrap_or_default(),
            total,
        ))
    }

    /// The pool an expression denotes: `(count distribution, die)`.
    fn pool_parts(&self, e: &Expr, env: &Env<W>) -> Result<Option<PoolParts<W>>, RunError> {
        match e {
            Expr::Dice { count, die } => Ok(Some((self.eval(count, env)?, *die))),
            Expr::Roll(d) => Ok(Some((Dist::point(Val::Int(1)), *d))),
            _ => Ok(None),
        }
    }

    fn over_counts(
        &self,
        counts: &Dist<Val, W>,
        mut f: impl FnMut(i64) -> Result<Dist<i64, W>, RunError>,
    ) -> Result<Dist<Val, W>, RunError> {
        let mut branches = Vec::new();
        for (n, w) in &counts.weights {
            let d = f(self.int(n)?)?;
            branches.push((w.clone(), d.map(|x| Val::Int(*x))));
        }
        Ok(mixture(branches, &counts.total)?)
    }

    /// The items of a list that must be certain (`for`, `count`, `any`, `all`): a random list
    /// cannot be enumerated item by item, so `doing` names what was refused.
    fn point_items(&self, d: &Dist<Val, W>, doing: &str) -> Result<Vec<Val>, RunError> {
        let Some(list) = d.as_point() else {
            return Err(RunError::Type(format!("exact evaluation cannot {doing}")));
        };
        match list {
            Val::List(v) => Ok(v.clone()),
            // As the interpreter refuses it, with the same figure.
            Val::Range(Some(a), Some(b)) if b.saturating_sub(*a) > crate::interp::MAX_LOOP => {
                Err(RunError::Limit {
                    what: "range length".into(),
                    size: b.saturating_sub(*a) as u64,
                    limit: crate::interp::MAX_LOOP as u64,
                })
            }
            Val::Range(Some(a), Some(b)) => Ok((*a..=*b).map(Val::Int).collect()),
            other => Err(RunError::Type(format!(
                "expected a list, found {}",
                other.show(self.program)
            ))),
        }
    }

    fn eval(&self, e: &Expr, env: &Env<W>) -> Result<Dist<Val, W>, RunError> {
        Ok(match e {
            Expr::Const(v) => Dist::point(self.interp.constant(v)?),
            Expr::Local(s) => match &env.slots[*s as usize] {
                Slot::Fixed(v) => Dist::point(v.clone()),
                Slot::Lazy(d) => d.clone(),
            },
            Expr::Roll(d) => self.die_dist(*d)?.map(|x| Val::Int(*x)),
            Expr::Dice { count, die } => {
                let counts = self.eval(count, env)?;
                self.over_counts(&counts, |n| self.sum_dist(n, *die))?
            }
            Expr::Unary { op, operand } => {
                let d = self.eval(operand, env)?;
                match op {
                    UnOp::Neg => d.try_map(|v| {
                        Ok::<_, RunError>(Val::Int(
                            self.int(v)?.checked_neg().ok_or(RunError::Overflow)?,
                        ))
                    })?,
                    UnOp::Not => d.try_map(|v| match v {
                        Val::Bool(b) => Ok(Val::Bool(!b)),
                        other => Err(RunError::Type(format!(
                            "`not` needs a condition, found {}",
                            other.show(self.program)
                        ))),
                    })?,
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.eval(lhs, env)?;
                let b = self.eval(rhs, env)?;
                self.charge_product(a.len(), b.len())?;
                match op {
                    BinOp::And => product(&a, &b, |x, y| {
                        Ok::<_, RunError>(Val::Bool(
                            x.as_bool().unwrap_or(false) && y.as_bool().unwrap_or(false),
                        ))
                    })?,
                    BinOp::Or => product(&a, &b, |x, y| {
                        Ok::<_, RunError>(Val::Bool(
                            x.as_bool().unwrap_or(false) || y.as_bool().unwrap_or(false),
                        ))
                    })?,
                    _ => match int_product(*op, &a, &b)? {
                        Some(d) => d,
                        None => product(&a, &b, |x, y| {
                            binary(*op, &normalize(x.clone()), &normalize(y.clone()))
                        })?,
                    },
                }
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.eval(cond, env)?;
                let mut branches = Vec::new();
                for (v, w) in &c.weights {
                    let d = if matches!(v, Val::Bool(true)) {
                        self.eval(then, env)?
                    } else {
                        self.eval(otherwise, env)?
                    };
                    branches.push((w.clone(), d));
                }
                mixture(branches, &c.total)?
            }
            Expr::Builtin { func, args } => self.builtin(*func, args, env)?,
            Expr::Host { func, .. } => return Err(RunError::NeedsGame(func.name().to_string())),
            Expr::Call { proc, args } => {
                let tuples = self.tuples(args, env)?;
                let mut branches = Vec::new();
                for (vals, w) in &tuples.weights {
                    let d = self.run(*proc, vals.clone())?;
                    branches.push((
                        w.clone(),
                        d.map(|k| match k {
                            OutcomeKey::Named(n) => Val::Sym(n.clone()),
                            OutcomeKey::Value(v) => v.clone(),
                            _ => Val::Unit,
                        }),
                    ));
                }
                mixture(branches, &tuples.total)?
            }
            Expr::Stack { stack, args } => {
                let tuples = self.tuples(args, env)?;
                let mut branches = Vec::new();
                for (vals, w) in &tuples.weights {
                    branches.push((w.clone(), self.stack(*stack, vals)?));
                }
                mixture(branches, &tuples.total)?
            }
            Expr::Lookup { table, keys } => {
                let tuples = self.tuples(keys, env)?;
                tuples.try_map(|vals| {
                    let keys: Vec<Val> = vals.iter().cloned().map(normalize).collect();
                    self.interp.lookup(*table, &keys)
                })?
            }
            Expr::Field { base, field } => self
                .eval(base, env)?
                .try_map(|b| self.interp.field(b, field))?,
            Expr::List(items) => self.tuples(items, env)?.map(|v| Val::List(v.clone())),
            Expr::Quant {
                quant,
                slot,
                list,
                cond,
            } => {
                let d = self.eval(list, env)?;
                // A list that depends on the dice (`1..=d3`): each list is its own branch.
                let mut branches = Vec::new();
                for (set, w) in &d.weights {
                    let items = self.point_items(&Dist::point(set.clone()), "count over a list")?;
                    // Each item's condition draws its own dice: the items are independent, so
                    // the result is their product, combined by count, or, and.
                    let mut acc: Dist<Val, W> = Dist::point(match quant {
                        ir::Quant::Count => Val::Int(0),
                        ir::Quant::Any => Val::Bool(false),
                        ir::Quant::All => Val::Bool(true),
                    });
                    let mut local = env.clone();
                    for it in items {
                        local.slots[*slot as usize] = Slot::Fixed(it);
                        let c = self.eval(cond, &local)?;
                        self.charge_product(acc.len(), c.len())?;
                        acc = product(&acc, &c, |a, b| {
                            let yes = matches!(b, Val::Bool(true));
                            Ok::<_, RunError>(match (quant, a) {
                                (ir::Quant::Count, Val::Int(n)) => Val::Int(n + i64::from(yes)),
                                (ir::Quant::Any, Val::Bool(x)) => Val::Bool(*x || yes),
                                (_, Val::Bool(x)) => Val::Bool(*x && yes),
                                (_, other) => other.clone(),
                            })
                        })?;
                    }
                    branches.push((w.clone(), acc));
                }
                mixture(branches, &d.total)?
            }
        })
    }

    /// The joint distribution of independent argument expressions.
    fn tuples(&self, args: &[Expr], env: &Env<W>) -> Result<Dist<Vec<Val>, W>, RunError> {
        let mut acc: Dist<Vec<Val>, W> = Dist::point(Vec::new());
        for a in args {
            let d = self.eval(a, env)?;
            self.charge_product(acc.len(), d.len())?;
            acc = product(&acc, &d, |xs, y| {
                let mut v = xs.clone();
                v.push(y.clone());
                Ok::<_, RunError>(v)
            })?;
        }
        Ok(acc)
    }

    /// A stack's total for fixed arguments: its entries are independent given the arguments.
    fn stack(&self, stack: u32, args: &[Val]) -> Result<Dist<Val, W>, RunError> {
        let st = &self.program.stacks[stack as usize];
        let mut slots: Vec<Slot<W>> = args.iter().cloned().map(Slot::Fixed).collect();
        slots.resize(
            (st.n_slots as usize).max(st.params.len()),
            Slot::Fixed(Val::Unit),
        );
        let env = Env {
            slots,
            effects: Vec::new(),
        };
        let mut total: Dist<i64, W> = Dist::point(0);
        for en in &st.entries {
            let applies = match &en.when {
                Some(w) => self.eval(w, &env)?,
                None => Dist::point(Val::Bool(true)),
            };
            let mut branches = Vec::new();
            for (a, w) in &applies.weights {
                let d = if matches!(a, Val::Bool(true)) {
                    let v = self.eval(&en.value, &env)?;
                    let per = match &en.per {
                        Some(p) => self.eval(p, &env)?,
                        None => Dist::point(Val::Int(1)),
                    };
                    self.charge_product(v.len(), per.len())?;
                    product(&v, &per, |x, y| {
                        self.int(x)?
                            .checked_mul(self.int(y)?)
                            .ok_or(RunError::Overflow)
                    })?
                } else {
                    Dist::point(0)
                };
                branches.push((w.clone(), d));
            }
            let contribution = mixture(branches, &applies.total)?;
            self.charge_product(total.len(), contribution.len())?;
            total = product(&total, &contribution, |x, y| {
                x.checked_add(*y).ok_or(RunError::Overflow)
            })?;
        }
        Ok(total.map(|t| {
            let mut t = *t;
            if let Some(lo) = st.clamp.0 {
                t = t.max(lo);
            }
            if let Some(hi) = st.clamp.1 {
                t = t.min(hi);
            }
            Val::Int(t)
        }))
    }

    fn builtin(
        &self,
        func: Builtin,
        args: &[Expr],
        env: &Env<W>,
    ) -> Result<Dist<Val, W>, RunError> {
        let ints2 = |this: &Self,
                     f: &dyn Fn(i64, i64) -> Result<i64, RunError>|
         -> Result<Dist<Val, W>, RunError> {
            let mut acc = this.eval(&args[0], env)?.map(|v| normalize(v.clone()));
            for a in &args[1..] {
                let d = this.eval(a, env)?;
                this.charge_product(acc.len(), d.len())?;
                acc = product(&acc, &d, |x, y| {
                    Ok::<_, RunError>(Val::Int(f(this.int(x)?, this.int(&normalize(y.clone()))?)?))
                })?;
            }
            Ok(acc)
        };
        Ok(match func {
            Builtin::Min => ints2(self, &|a, b| Ok(a.min(b)))?,
            Builtin::Max => ints2(self, &|a, b| Ok(a.max(b)))?,
            Builtin::Abs => self.eval(&args[0], env)?.try_map(|v| {
                Ok::<_, RunError>(Val::Int(
                    self.int(v)?.checked_abs().ok_or(RunError::Overflow)?,
                ))
            })?,
            Builtin::DivUp => ints2(self, &div_up)?,
            Builtin::Clamp => {
                let t = self.tuples(args, env)?;
                t.try_map(|v| {
                    let (x, lo, hi) = (self.int(&v[0])?, self.int(&v[1])?, self.int(&v[2])?);
                    Ok::<_, RunError>(Val::Int(x.max(lo).min(hi)))
                })?
            }
            Builtin::Pool => unreachable!("pools are lowered to Expr::Dice"),
            Builtin::Sum => match self.pool_parts(&args[0], env)? {
                Some((counts, die)) => self.over_counts(&counts, |n| self.sum_dist(n, die))?,
                None => self.eval(&args[0], env)?.map(|v| normalize(v.clone())),
            },
            Builtin::Highest | Builtin::Lowest => {
                let ks = self.eval(&args[0], env)?;
                match self.pool_parts(&args[1], env)? {
                    Some((counts, die)) => {
                        let mut branches = Vec::new();
                        for (k, w) in &ks.weights {
                            let k = self.int(k)?;
                            branches.push((
                                w.clone(),
                                self.over_counts(&counts, |n| {
                                    self.keep_dist(k, n, die, func == Builtin::Highest)
                                })?,
                            ));
                        }
                        mixture(branches, &ks.total)?
                    }
                    None => {
                        let v = self.eval(&args[1], env)?;
                        self.charge_product(ks.len(), v.len())?;
                        product(&ks, &v, |k, x| {
                            Ok::<_, RunError>(Val::Int(if self.int(k)? >= 1 {
                                self.int(&normalize(x.clone()))?
                            } else {
                                0
                            }))
                        })?
                    }
                }
            }
            Builtin::Successes | Builtin::Count => {
                let ranges = self.eval(&args[1], env)?;
                match self.pool_parts(&args[0], env)? {
                    Some((counts, die)) => {
                        let mut branches = Vec::new();
                        for (r, w) in &ranges.weights {
                            let (lo, hi) = match (func, r) {
                                (Builtin::Successes, v) => (Some(self.int(v)?), None),
                                (_, Val::Range(lo, hi)) => (*lo, *hi),
                                (_, Val::Int(n)) => (Some(*n), Some(*n)),
                                (_, other) => {
                                    return Err(RunError::Type(format!(
                                        "`count` needs a range, found {}",
                                        other.show(self.program)
                                    )));
                                }
                            };
                            branches.push((
                                w.clone(),
                                self.over_counts(&counts, |n| self.count_dist(n, die, lo, hi))?,
                            ));
                        }
                        mixture(branches, &ranges.total)?
                    }
                    None => {
                        let v = self.eval(&args[0], env)?;
                        self.charge_product(v.len(), ranges.len())?;
                        product(&v, &ranges, |x, r| {
                            let x = self.int(&normalize(x.clone()))?;
                            let hit = match (func, r) {
                                (Builtin::Successes, t) => x >= self.int(t)?,
                                (_, Val::Range(lo, hi)) => {
                                    lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h)
                                }
                                (_, t) => x == self.int(t)?,
                            };
                            Ok::<_, RunError>(Val::Int(i64::from(hit)))
                        })?
                    }
                }
            }
            Builtin::Range => {
                let lo = self.eval(&args[0], env)?;
                let hi = self.eval(&args[1], env)?;
                self.charge_product(lo.len(), hi.len())?;
                product(&lo, &hi, |a, b| {
                    Ok::<_, RunError>(Val::Range(Some(self.int(a)?), Some(self.int(b)?)))
                })?
            }
            Builtin::Reroll => {
                let Expr::Const(Value::Die(die)) = &args[0] else {
                    return Err(RunError::Type("`reroll` needs a die".into()));
                };
                let ranges = self.eval(&args[1], env)?;
                let one = self.die_dist(*die)?;
                let mut branches = Vec::new();
                for (r, w) in &ranges.weights {
                    let (lo, hi) = match r {
                        Val::Range(lo, hi) => (*lo, *hi),
                        Val::Int(n) => (Some(*n), Some(*n)),
                        _ => (Some(1), Some(0)),
                    };
                    let inside = |x: i64| lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h);
                    let mut again = W::zero();
                    for (f, w) in &one.weights {
                        if inside(*f) {
                            again.add_assign(w)?;
                        }
                    }
                    let mut weights: BTreeMap<Val, W> = BTreeMap::new();
                    for (f, fw) in &one.weights {
                        let mut x = again.mul(fw)?;
                        if !inside(*f) {
                            x.add_assign(&fw.mul(&one.total)?)?;
                        }
                        weights.insert(Val::Int(*f), x);
                    }
                    branches.push((
                        w.clone(),
                        Dist::from_weights(weights, one.total.mul(&one.total)?),
                    ));
                }
                mixture(branches, &ranges.total)?
            }
        })
    }
}

/// Integer arithmetic and comparisons of two integer distributions, on plain `i64`s: the
/// hot path of opposed rolls. `None` when either side holds anything but integers.
fn int_product<W: Weight>(
    op: BinOp,
    a: &Dist<Val, W>,
    b: &Dist<Val, W>,
) -> Result<Option<Dist<Val, W>>, RunError> {
    let ints = |d: &Dist<Val, W>| -> Option<Vec<(i64, W)>> {
        d.weights
            .iter()
            .map(|(k, w)| {
                if let Val::Int(n) = k {
                    Some((*n, w.clone()))
                } else {
                    None
                }
            })
            .collect()
    };
    let (Some(xs), Some(ys)) = (ints(a), ints(b)) else {
        return Ok(None);
    };
    let compare = matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    );
    if !compare && !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
        return Ok(None);
    }
    let mut out: std::collections::HashMap<i64, W> =
        std::collections::HashMap::with_capacity(xs.len() + ys.len());
    for (x, wx) in &xs {
        for (y, wy) in &ys {
            let v = match op {
                BinOp::Add => x.checked_add(*y).ok_or(RunError::Overflow)?,
                BinOp::Sub => x.checked_sub(*y).ok_or(RunError::Overflow)?,
                BinOp::Mul => x.checked_mul(*y).ok_or(RunError::Overflow)?,
                BinOp::Lt => i64::from(x < y),
                BinOp::Le => i64::from(x <= y),
                BinOp::Gt => i64::from(x > y),
                BinOp::Ge => i64::from(x >= y),
                BinOp::Eq => i64::from(x == y),
                _ => i64::from(x != y),
            };
            let w = wx.mul(wy)?;
            match out.entry(v) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(w);
                }
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().add_assign(&w)?,
            }
        }
    }
    let weights = out
        .into_iter()
        .map(|(v, w)| {
            (
                if compare {
                    Val::Bool(v != 0)
                } else {
                    Val::Int(v)
                },
                w,
            )
        })
        .collect();
    Ok(Some(Dist::from_weights(weights, a.total.mul(&b.total)?)))
}

fn clone_cont<'a>(c: &Cont<'a>) -> Cont<'a> {
    match c {
        Cont::Stmts(s) => Cont::Stmts(s),
        Cont::ArmEnd(a) => Cont::ArmEnd(a),
        Cont::Set(s, v) => Cont::Set(*s, v.clone()),
    }
}

/// The outcome a failed `require` leads to, as a band arm with that name.
fn illegal_arm() -> &'static ir::Arm {
    static ARM: std::sync::OnceLock<ir::Arm> = std::sync::OnceLock::new();
    ARM.get_or_init(|| ir::Arm {
        patterns: Vec::new(),
        outcome: Some("(requirement not met)".into()),
        value: None,
        body: Vec::new(),
        cite: ir::Cite::default(),
    })
}

/// How many times each slot is read; reads inside loops and quantifiers count double (read
/// repeatedly).
fn slot_reads(body: &[Stmt], n: usize) -> Vec<u32> {
    fn go(e: &Expr, looped: bool, reads: &mut [u32]) {
        match e {
            Expr::Local(s) => {
                if let Some(r) = reads.get_mut(*s as usize) {
                    *r += if looped { 2 } else { 1 };
                }
            }
            Expr::Quant { list, cond, .. } => {
                go(list, looped, reads);
                go(cond, true, reads);
            }
            _ => {
                for c in e.children() {
                    go(c, looped, reads);
                }
            }
        }
    }
    let mut reads = vec![0u32; n];
    ir::visit_stmts(body, false, &mut |e, looped| go(e, looped, &mut reads));
    reads
}
