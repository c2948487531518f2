//! Exact outcome distributions of resolutions.
//!
//! Every textual die occurrence is an independent roll, so expressions combine by
//! convolution. A `let` whose value is random and is read more than once would correlate its
//! readers, so the evaluator branches on its value (enumeration); a random `let` read at most
//! once stays a distribution. Pools have closed forms: sums by convolution, successes and
//! counts as binomials, keep-highest/lowest by the order-statistics walk over faces.
//!
//! Integer distributions over a contiguous range travel as dense arrays ([`crate::dense`]):
//! sums, differences, comparisons and extremes of them are array kernels; everything else
//! (symbols, lists, values spread far apart) stays an ordered map of values. Weights are the
//! narrowest of `u64`, `u128` and big integers that holds the query ([`distribution`] retries
//! wider on overflow). A [`Session`] keeps, for one program, the results of the queries it was
//! asked and of the pool kernels it computed, so a repeated query costs a look-up.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use num_bigint::BigUint;
use sandtable_ir::{self as ir, BinOp, Builtin, Expr, Program, Stmt, UnOp, Value};

use crate::dense::{self, Cmp, Dense, Fail};
use crate::dist::{Dist, Weight, mixture, product};
use crate::error::RunError;
use crate::interp::{Assumptions, Interp, binary, div_up, matches, normalize};
use crate::outcomes::{Outcomes, Weights};
use crate::value::{EffectRec, OutcomeKey, ScoreOpRec, Val};

/// Default bound on enumeration work (value pairs combined plus paths explored).
pub const DEFAULT_LIMIT: u64 = 50_000_000;

#[derive(Debug, Clone)]
enum Slot<W: Weight> {
    Fixed(Val),
    /// A random value read at most once: kept as a distribution.
    Lazy(ValDist<W>),
}

/// A pool as the evaluator sees it: the distribution of its size, and its die.
type PoolParts<W> = (ValDist<W>, u32);

impl From<Fail> for RunError {
    fn from(f: Fail) -> Self {
        match f {
            Fail::Weight => RunError::WeightOverflow,
            Fail::Value => RunError::Overflow,
        }
    }
}

/// The distribution of a value: a dense array when the values are integers close together,
/// else an ordered map of values.
#[derive(Debug, Clone)]
enum ValDist<W: Weight> {
    Ints(Dense<W>),
    Vals(Dist<Val, W>),
}

/// The values of a [`ValDist`] in ascending order with their weights.
enum ValDistIter<'a, W> {
    Ints(i64, std::iter::Enumerate<std::slice::Iter<'a, W>>),
    Vals(std::collections::btree_map::Iter<'a, Val, W>),
}

impl<'a, W: Weight> Iterator for ValDistIter<'a, W> {
    type Item = (Cow<'a, Val>, &'a W);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            ValDistIter::Ints(lo, it) => it
                .find(|(_, w)| !w.is_zero())
                .map(|(i, w)| (Cow::Owned(Val::Int(*lo + i as i64)), w)),
            ValDistIter::Vals(it) => it.next().map(|(v, w)| (Cow::Borrowed(v), w)),
        }
    }
}

impl<W: Weight> ValDist<W> {
    fn point(v: Val) -> Self {
        match v {
            Val::Int(n) => ValDist::Ints(Dense::point(n)),
            v => ValDist::Vals(Dist::point(v)),
        }
    }

    /// The dense form when every value is an integer and they lie close together.
    fn from_vals(d: Dist<Val, W>) -> Self {
        let (Some((Val::Int(lo), _)), Some((Val::Int(hi), _))) =
            (d.weights.first_key_value(), d.weights.last_key_value())
        else {
            return ValDist::Vals(d);
        };
        // Integers sort before every other value, so the first and last keys bound them all;
        // every key is an integer when the last one is.
        let width = hi.checked_sub(*lo).and_then(|x| u64::try_from(x).ok());
        match width {
            Some(w) if dense::worth_dense(d.weights.len(), w.saturating_add(1)) => {
                let lo = *lo;
                let mut arr = vec![W::zero(); w as usize + 1];
                for (v, x) in d.weights {
                    if let Val::Int(n) = v {
                        arr[(n - lo) as usize] = x;
                    }
                }
                ValDist::Ints(Dense::new(lo, arr, d.total))
            }
            _ => ValDist::Vals(d),
        }
    }

    /// An integer distribution: kept dense when it is worth it.
    fn from_dense(d: Dense<W>) -> Self {
        if dense::worth_dense(d.nnz(), d.w.len() as u64) {
            ValDist::Ints(d)
        } else {
            ValDist::Vals(d.to_dist().map(|x| Val::Int(*x)))
        }
    }

    fn to_vals(&self) -> Cow<'_, Dist<Val, W>> {
        match self {
            ValDist::Ints(d) => Cow::Owned(Dist {
                weights: d.iter().map(|(v, w)| (Val::Int(v), w.clone())).collect(),
                total: d.total.clone(),
            }),
            ValDist::Vals(d) => Cow::Borrowed(d),
        }
    }

    fn len(&self) -> usize {
        match self {
            ValDist::Ints(d) => d.nnz(),
            ValDist::Vals(d) => d.len(),
        }
    }

    fn total(&self) -> &W {
        match self {
            ValDist::Ints(d) => &d.total,
            ValDist::Vals(d) => &d.total,
        }
    }

    fn as_point(&self) -> Option<Cow<'_, Val>> {
        match self {
            ValDist::Ints(d) => d.as_point().map(|n| Cow::Owned(Val::Int(n))),
            ValDist::Vals(d) => d.as_point().map(Cow::Borrowed),
        }
    }

    fn iter(&self) -> ValDistIter<'_, W> {
        match self {
            ValDist::Ints(d) => ValDistIter::Ints(d.lo, d.w.iter().enumerate()),
            ValDist::Vals(d) => ValDistIter::Vals(d.weights.iter()),
        }
    }

    /// Relabel outcomes into any ordered key (outcomes, effects).
    fn map_to<K: Ord + Clone>(&self, mut f: impl FnMut(&Val) -> K) -> Dist<K, W> {
        match self {
            ValDist::Vals(d) => d.map(f),
            ValDist::Ints(d) => {
                // Values come in ascending order; when their keys do too (outcomes of integers
                // do), the map is built in one pass instead of a search per value.
                let pairs: Vec<(K, W)> = d
                    .iter()
                    .map(|(v, w)| (f(&Val::Int(v)), w.clone()))
                    .collect();
                let weights: BTreeMap<K, W> = if pairs.windows(2).all(|p| p[0].0 < p[1].0) {
                    pairs.into_iter().collect()
                } else {
                    let mut weights = BTreeMap::new();
                    for (k, w) in pairs {
                        let _ = crate::dist::bump(&mut weights, k, w);
                    }
                    weights
                };
                Dist {
                    weights,
                    total: d.total.clone(),
                }
            }
        }
    }

    fn try_map<E: From<crate::dist::Overflow>>(
        &self,
        mut f: impl FnMut(&Val) -> Result<Val, E>,
    ) -> Result<Self, E> {
        let mut weights: BTreeMap<Val, W> = BTreeMap::new();
        for (v, w) in self.iter() {
            let _ = crate::dist::bump(&mut weights, f(&v)?, w.clone());
        }
        Ok(ValDist::from_vals(Dist {
            weights,
            total: self.total().clone(),
        }))
    }

    /// Pools read as their sums (the only values [`normalize`] changes).
    fn normalized(self) -> Self {
        match self {
            ValDist::Vals(d) if d.weights.keys().any(|v| matches!(v, Val::Pool(_))) => {
                ValDist::from_vals(d.map(|v| normalize(v.clone())))
            }
            d => d,
        }
    }
}

/// `Σ (w_i / T) · D_i` over value distributions: on arrays when every branch is dense and their
/// ranges together are worth an array, else on maps. Both give the same weights and total.
fn mix<W: Weight>(branches: Vec<(W, ValDist<W>)>, total: &W) -> Result<ValDist<W>, RunError> {
    if branches.len() == 1 && branches[0].0 == *total {
        return Ok(branches
            .into_iter()
            .next()
            .map(|(_, d)| d)
            .expect("one branch"));
    }
    let all_dense = branches.iter().all(|(_, d)| matches!(d, ValDist::Ints(_)));
    if all_dense
        && worth_one_array(branches.iter().filter_map(|(_, d)| match d {
            ValDist::Ints(d) => Some(d),
            ValDist::Vals(_) => None,
        }))
    {
        let bs = branches
            .into_iter()
            .map(|(w, d)| match d {
                ValDist::Ints(d) => (w, d),
                ValDist::Vals(_) => unreachable!("all branches are dense"),
            })
            .collect();
        return Ok(ValDist::Ints(dense::mixture(bs, total)?));
    }
    let bs = branches
        .into_iter()
        .map(|(w, d)| match d {
            ValDist::Vals(d) => (w, d),
            d => (w, d.to_vals().into_owned()),
        })
        .collect();
    Ok(ValDist::from_vals(mixture(bs, total)?))
}

/// What a resolution (or a branch of one) gives: integer outcomes close together as an array,
/// anything else as a map of outcomes. Branches of arrays mix as arrays; the map is built once,
/// when the answer leaves the evaluator, and only for outcomes that are not an array.
#[derive(Debug, Clone)]
enum Answer<W: Weight> {
    Ints(Dense<W>),
    /// A sum of dice given as the result, as its kernel left it: a flat die's counts stay in
    /// 64-bit words to the [`Outcomes`], whose weights become big integers only when read.
    Sum(dense::Counts<W>),
    Keys(Dist<OutcomeKey, W>),
}

impl<W: Weight> Answer<W> {
    /// A sum's counts made weights: for everything but handing the answer out.
    fn settled(self) -> Result<Self, Fail> {
        match self {
            Answer::Sum(c) => Ok(Answer::Ints(c.into_dense()?)),
            a => Ok(a),
        }
    }

    /// The map of outcomes (a sum settled first).
    fn into_dist(self) -> Result<Dist<OutcomeKey, W>, Fail> {
        Ok(self.settled()?.into_map())
    }

    /// The map of outcomes of a settled answer.
    fn into_map(self) -> Dist<OutcomeKey, W> {
        match self {
            Answer::Keys(d) => d,
            Answer::Ints(a) => {
                let lo = a.lo;
                // Values in ascending order: the map is built from a sorted run.
                let mut pairs = Vec::with_capacity(a.w.len());
                pairs.extend(
                    a.w.into_iter()
                        .enumerate()
                        .filter(|(_, w)| !w.is_zero())
                        .map(|(i, w)| (OutcomeKey::Value(Val::Int(lo + i as i64)), w)),
                );
                Dist {
                    weights: BTreeMap::from_iter(pairs),
                    total: a.total,
                }
            }
            Answer::Sum(_) => unreachable!("a sum is settled before it is made a map"),
        }
    }

    /// The answer handed out: arrays moved as they are (`column` wraps the evaluator's weights),
    /// maps with their weights made big integers by `big`.
    fn into_outcomes(
        self,
        column: impl FnOnce(Vec<W>) -> Weights,
        big: impl Fn(W) -> BigUint,
    ) -> Outcomes {
        match self {
            Answer::Ints(a) => Outcomes::from_ints(a.lo, column(a.w), big(a.total)),
            Answer::Sum(dense::Counts::Words {
                lo,
                limbs,
                words,
                total,
            }) => Outcomes::from_ints(lo, Weights::words(limbs, words), big(total)),
            Answer::Sum(dense::Counts::Weights(a)) => {
                Outcomes::from_ints(a.lo, column(a.w), big(a.total))
            }
            Answer::Keys(d) => Outcomes::from_map(Dist {
                weights: d.weights.into_iter().map(|(k, w)| (k, big(w))).collect(),
                total: big(d.total),
            }),
        }
    }
}

/// Whether the branches' arrays, mixed, are worth one array: their values together span
/// few more integers than they hold.
fn worth_one_array<'a, W: Weight + 'a>(branches: impl Iterator<Item = &'a Dense<W>>) -> bool {
    let (mut lo, mut hi, mut n) = (i64::MAX, i64::MIN, 0usize);
    for d in branches.filter(|d| !d.w.is_empty()) {
        lo = lo.min(d.lo);
        hi = hi.max(d.hi());
        n += d.w.len();
    }
    let width = hi.checked_sub(lo).and_then(|x| u64::try_from(x).ok());
    width.is_some_and(|w| dense::worth_dense(n, w.saturating_add(1)))
}

/// `Σ (w_i / T) · A_i` over answers: on arrays when every branch is one and their ranges
/// together are worth an array, else on maps. Both give the same weights and total.
fn mix_answers<W: Weight>(branches: Vec<(W, Answer<W>)>, total: &W) -> Result<Answer<W>, RunError> {
    if branches.len() == 1 && branches[0].0 == *total {
        return Ok(branches
            .into_iter()
            .next()
            .map(|(_, d)| d)
            .expect("one branch"));
    }
    // A sum handed out as it is (`Answer::Sum`) mixes as the array it stands for. Settled in
    // place, and only when there is one: most mixes have none, and a new vector costs them.
    let mut branches = branches;
    if branches.iter().any(|(_, d)| matches!(d, Answer::Sum(_))) {
        for (_, d) in &mut branches {
            if let Answer::Sum(c) = d {
                *d = Answer::Ints(
                    std::mem::replace(c, dense::Counts::Weights(Dense::empty())).into_dense()?,
                );
            }
        }
    }
    if branches.iter().all(|(_, d)| matches!(d, Answer::Ints(_)))
        && worth_one_array(branches.iter().filter_map(|(_, d)| match d {
            Answer::Ints(d) => Some(d),
            _ => None,
        }))
    {
        let bs = branches
            .into_iter()
            .map(|(w, d)| match d {
                Answer::Ints(d) => (w, d),
                _ => unreachable!("all branches are arrays"),
            })
            .collect();
        return Ok(Answer::Ints(dense::mixture(bs, total)?));
    }
    let bs = branches
        .into_iter()
        .map(|(w, d)| (w, d.into_map()))
        .collect();
    Ok(Answer::Keys(mixture(bs, total)?))
}

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

/// The exact outcome distribution of `proc` with `args`: computed with `u64` weights when
/// they suffice, else `u128`, else big integers.
pub fn distribution(
    program: &Program,
    assumptions: &Assumptions,
    limit: u64,
    proc: u32,
    args: Vec<Val>,
) -> Result<Outcomes, RunError> {
    // Asked once: nothing to remember the answer for.
    Session::new(program, assumptions, limit).compute(proc, args)
}

/// Exact evaluation of one program, remembering what it computed: the answer to each query
/// (resolution and arguments) and each pool kernel (sums, counts and keeps of `n` dice), so a
/// repeated query, or one that shares pools with an earlier one, does not compute them again.
///
/// A remembered kernel is charged the work it took when it was computed, so whether a query
/// fits `limit` does not depend on what was asked before.
pub struct Session<'p> {
    program: &'p Program,
    assumptions: &'p Assumptions,
    limit: u64,
    small: Exact<'p, u64>,
    /// The wider evaluators, made when a query first overflows the narrower one.
    mid: OnceCell<Exact<'p, u128>>,
    big: OnceCell<Exact<'p, BigUint>>,
    answers: RefCell<HashMap<Query, Rc<Outcomes>>>,
}

/// The memos' hash (keys are the program's own values): [`crate::hash::WordHasher`].
type HashMap<K, V> = crate::hash::WordMap<K, V>;

/// A procedure and its arguments.
type Query = (u32, Vec<Val>);

/// A count of `n` dice of a die landing in a range.
type CountKey = (i64, u32, Option<i64>, Option<i64>);

/// Remembered results by key, each with the work it took.
type Memo<K, D> = RefCell<HashMap<K, (D, u64)>>;

impl<'p> Session<'p> {
    pub fn new(program: &'p Program, assumptions: &'p Assumptions, limit: u64) -> Self {
        Session {
            program,
            assumptions,
            limit,
            small: Exact::new(program, assumptions, limit),
            mid: OnceCell::new(),
            big: OnceCell::new(),
            answers: RefCell::new(HashMap::default()),
        }
    }

    fn mid(&self) -> &Exact<'p, u128> {
        self.mid
            .get_or_init(|| Exact::new(self.program, self.assumptions, self.limit))
    }

    fn big(&self) -> &Exact<'p, BigUint> {
        self.big
            .get_or_init(|| Exact::new(self.program, self.assumptions, self.limit))
    }

    /// The exact outcome distribution of `proc` with `args`, as [`distribution`] gives it.
    pub fn distribution(&self, proc: u32, args: Vec<Val>) -> Result<Rc<Outcomes>, RunError> {
        let key = (proc, args);
        if let Some(d) = self.answers.borrow().get(&key) {
            return Ok(Rc::clone(d));
        }
        let d = Rc::new(self.compute(proc, key.1.clone())?);
        self.answers.borrow_mut().insert(key, Rc::clone(&d));
        Ok(d)
    }

    /// The answer to a query, not remembered (its kernels and nested calls are), from
    /// whichever width held it: an array moved as it is, a map made once with big integers.
    fn compute(&self, proc: u32, args: Vec<Val>) -> Result<Outcomes, RunError> {
        match self.small.answer(proc, args.clone()) {
            Ok(d) => Ok(d.into_outcomes(Weights::U64, BigUint::from)),
            Err(RunError::WeightOverflow) => match self.mid().answer(proc, args.clone()) {
                Ok(d) => Ok(d.into_outcomes(Weights::U128, BigUint::from)),
                Err(RunError::WeightOverflow) => Ok(self
                    .big()
                    .answer(proc, args)?
                    .into_outcomes(Weights::Big, |w| w)),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

pub struct Exact<'p, W: Weight> {
    interp: Interp<'p>,
    program: &'p Program,
    limit: u64,
    work: Cell<u64>,
    /// Per procedure, worked out on first use: how often each slot is read (loops count
    /// twice).
    reads: Vec<OnceCell<Vec<u32>>>,
    /// Calls in progress: the compiler refuses recursion, this guards programs built by hand.
    depth: Cell<usize>,
    /// Address of the statement being run, to name its line in an error.
    current: Cell<usize>,
    /// Whether integer distributions may travel as arrays; off, every value is a map (the
    /// sparse evaluator, which tests compare the dense one with).
    dense: bool,
    /// Finished procedure calls: (procedure, arguments) → (distribution, work).
    calls: Memo<Query, Answer<W>>,
    /// Pool kernels: sums (`n`, die), counts (`n`, die, range) and keeps (`k`, `n`, die,
    /// highest) → (distribution, work).
    sums: Memo<(i64, u32), dense::Counts<W>>,
    counts: Memo<CountKey, Dense<W>>,
    keeps: Memo<(i64, i64, u32, bool), Dense<W>>,
}

impl<'p, W: Weight> Exact<'p, W> {
    pub fn new(program: &'p Program, assumptions: &'p Assumptions, limit: u64) -> Self {
        Exact {
            interp: Interp::new(program, assumptions),
            program,
            limit,
            work: Cell::new(0),
            reads: (0..program.procs.len()).map(|_| OnceCell::new()).collect(),
            depth: Cell::new(0),
            current: Cell::new(0),
            dense: true,
            calls: RefCell::new(HashMap::default()),
            sums: RefCell::new(HashMap::default()),
            counts: RefCell::new(HashMap::default()),
            keeps: RefCell::new(HashMap::default()),
        }
    }

    /// The same evaluator with every distribution kept as a map of values: slower, and the
    /// reference the dense evaluator is tested against.
    pub fn sparse(program: &'p Program, assumptions: &'p Assumptions, limit: u64) -> Self {
        Exact {
            dense: false,
            ..Exact::new(program, assumptions, limit)
        }
    }

    /// A whole query: its own work budget, whatever earlier queries used.
    pub fn query(&self, proc: u32, args: Vec<Val>) -> Result<Dist<OutcomeKey, W>, RunError> {
        Ok(self.answer(proc, args)?.into_dist()?)
    }

    /// [`Exact::query`] before its outcomes are made a map.
    fn answer(&self, proc: u32, args: Vec<Val>) -> Result<Answer<W>, RunError> {
        self.work.set(0);
        self.call(proc, args)
    }

    fn reads(&self, proc: u32) -> &[u32] {
        self.reads[proc as usize].get_or_init(|| {
            let p = &self.program.procs[proc as usize];
            slot_reads(&p.body, p.n_slots as usize)
        })
    }

    /// A remembered kernel result: charged the work it took, as if computed again.
    fn recall<K: std::hash::Hash + Eq, D: Clone>(
        &self,
        cache: &Memo<K, D>,
        key: K,
        compute: impl FnOnce() -> Result<D, RunError>,
    ) -> Result<D, RunError> {
        if let Some((d, work)) = cache.borrow().get(&key) {
            self.charge(*work)?;
            return Ok(d.clone());
        }
        let before = self.work.get();
        let d = compute()?;
        let work = self.work.get().saturating_sub(before);
        cache.borrow_mut().insert(key, (d.clone(), work));
        Ok(d)
    }

    fn charge(&self, n: u64) -> Result<(), RunError> {
        let w = self.work.get().saturating_add(n);
        self.work.set(w);
        // (A remembered kernel charges all of its work at once.)
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
        Ok(self.call(proc, args)?.into_dist()?)
    }

    /// [`Exact::run`], its integer outcomes still an array.
    fn call(&self, proc: u32, args: Vec<Val>) -> Result<Answer<W>, RunError> {
        if self.depth.get() >= crate::interp::MAX_CALL_DEPTH {
            return Err(RunError::Limit {
                what: "call depth".into(),
                // The depth the call would reach: the resolution itself is depth 1.
                size: self.depth.get() as u64 + 1,
                limit: crate::interp::MAX_CALL_DEPTH as u64,
            });
        }
        let key = (proc, args);
        if let Some((d, work)) = self.calls.borrow().get(&key) {
            self.charge(*work)?;
            return Ok(d.clone());
        }
        let before = self.work.get();
        self.depth.set(self.depth.get() + 1);
        let r = self
            .run_inner(proc, key.1.clone())
            .map_err(|e| e.at_addr(self.program, proc, self.current.get()));
        self.depth.set(self.depth.get() - 1);
        let d = r?;
        // Only calls from inside a resolution are kept: a whole query is kept by its
        // `Session`, and copying a large answer here would cost as much as it saves.
        if self.depth.get() > 0 {
            let work = self.work.get().saturating_sub(before);
            self.calls.borrow_mut().insert(key, (d.clone(), work));
        }
        Ok(d)
    }

    fn run_inner(&self, proc: u32, args: Vec<Val>) -> Result<Answer<W>, RunError> {
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

    /// The work of starting a path (`exec`), and the refusal of one path too many.
    fn enter(&self, paths: u128) -> Result<(), RunError> {
        self.charge(1)?;
        if paths > u128::from(self.limit) {
            return Err(RunError::TooLarge {
                estimate: format!("{paths} paths"),
                limit: self.limit,
            });
        }
        Ok(())
    }

    fn exec<'a>(
        &'a self,
        proc: u32,
        mut stack: Vec<Cont<'a>>,
        mut env: Env<W>,
        paths: u128,
    ) -> Result<Answer<W>, RunError> {
        self.enter(paths)?;
        loop {
            let Some(top) = stack.pop() else {
                let key = if env.effects.is_empty() {
                    OutcomeKey::Nothing
                } else {
                    OutcomeKey::Effects(env.effects.iter().map(|e| e.show(self.program)).collect())
                };
                return Ok(Answer::Keys(Dist::point(key)));
            };
            let stmts = match top {
                Cont::Set(slot, v) => {
                    env.slots[slot as usize] = Slot::Fixed(v);
                    continue;
                }
                Cont::ArmEnd(arm) => {
                    if let Some(o) = &arm.outcome {
                        return Ok(Answer::Keys(Dist::point(OutcomeKey::Named(o.clone()))));
                    }
                    if let Some(e) = &arm.value {
                        return self.result(e, &env);
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
                    let d = self.eval(value, &env)?.normalized();
                    if let Some(v) = d.as_point() {
                        env.slots[*slot as usize] = Slot::Fixed(v.into_owned());
                    } else if self.reads(proc).get(*slot as usize).copied().unwrap_or(2) <= 1 {
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
                    let d = self.eval(scrutinee, &env)?.normalized();
                    let mut by_arm: Dist<usize, W> = Dist {
                        weights: BTreeMap::new(),
                        total: d.total().clone(),
                    };
                    for (v, w) in d.iter() {
                        let arm = arms
                            .iter()
                            .position(|a| a.patterns.iter().any(|p| matches(p, &v)))
                            .ok_or_else(|| RunError::NoBand {
                                value: v.show(self.program),
                                proc: self.program.procs[proc as usize].name.clone(),
                            })?;
                        crate::dist::bump(&mut by_arm.weights, arm, w.clone())?;
                    }
                    let mut branches = Vec::with_capacity(by_arm.weights.len());
                    let more = paths.saturating_mul(by_arm.weights.len() as u128);
                    for (i, w) in &by_arm.weights {
                        let arm = &arms[*i];
                        // An arm that only names its outcome ends there: its branch is that
                        // outcome, charged as the path it is, without copying the rest.
                        if arm.body.is_empty()
                            && let Some(o) = &arm.outcome
                        {
                            self.enter(more)?;
                            let point = Dist::point(OutcomeKey::Named(o.clone()));
                            branches.push((w.clone(), Answer::Keys(point)));
                            continue;
                        }
                        let mut st: Vec<Cont> = stack.iter().map(clone_cont).collect();
                        st.push(Cont::ArmEnd(arm));
                        st.push(Cont::Stmts(&arm.body));
                        let sub = self.exec(proc, st, env.clone(), more)?;
                        branches.push((w.clone(), sub));
                    }
                    return mix_answers(branches, &by_arm.total);
                }
                Stmt::Result(e) => return self.result(e, &env),
                Stmt::Outcome(o) => {
                    return Ok(Answer::Keys(Dist::point(OutcomeKey::Named(o.clone()))));
                }
                Stmt::Effect(e) => {
                    let d = self.effect(e, &env)?;
                    return self.branch_effect(proc, stack, env, paths, d);
                }
                Stmt::Choose { .. } => return Err(RunError::NeedsDecision),
                Stmt::For { slot, iter, body } => {
                    let d = self.eval(iter, &env)?;
                    let unroll = |set: &Val, st: &mut Vec<Cont<'a>>| -> Result<(), RunError> {
                        let items = self.point_items(Some(set), "iterate")?;
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
                        Some(set) => unroll(&set, &mut stack)?,
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
        d: &ValDist<W>,
        unroll: impl Fn(&Val, &mut Vec<Cont<'a>>) -> Result<(), RunError>,
    ) -> Result<Answer<W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        let more = paths.saturating_mul(d.len() as u128);
        for (v, w) in d.iter() {
            let mut st: Vec<Cont<'a>> = stack.iter().map(clone_cont).collect();
            unroll(&v, &mut st)?;
            branches.push((w.clone(), self.exec(proc, st, env.clone(), more)?));
        }
        mix_answers(branches, d.total())
    }

    /// Continue once per value of `d`; `step` adjusts the environment and may push a block.
    fn branch<'a>(
        &'a self,
        proc: u32,
        stack: Vec<Cont<'a>>,
        env: Env<W>,
        paths: u128,
        d: &ValDist<W>,
        step: impl Fn(&mut Env<W>, &Val) -> Option<Cont<'a>>,
    ) -> Result<Answer<W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        let more = paths.saturating_mul(d.len() as u128);
        for (v, w) in d.iter() {
            let mut e = env.clone();
            let mut st: Vec<Cont> = stack.iter().map(clone_cont).collect();
            if let Some(c) = step(&mut e, &v) {
                st.push(c);
            }
            branches.push((w.clone(), self.exec(proc, st, e, more)?));
        }
        mix_answers(branches, d.total())
    }

    fn branch_effect<'a>(
        &'a self,
        proc: u32,
        stack: Vec<Cont<'a>>,
        env: Env<W>,
        paths: u128,
        d: Dist<EffectRec, W>,
    ) -> Result<Answer<W>, RunError> {
        let mut branches = Vec::with_capacity(d.len());
        let more = paths.saturating_mul(d.len() as u128);
        for (rec, w) in &d.weights {
            let mut e = env.clone();
            e.effects.push(rec.clone());
            let st: Vec<Cont> = stack.iter().map(clone_cont).collect();
            branches.push((w.clone(), self.exec(proc, st, e, more)?));
        }
        mix_answers(branches, &d.total)
    }

    fn effect(&self, e: &ir::Effect, env: &Env<W>) -> Result<Dist<EffectRec, W>, RunError> {
        Ok(match e {
            ir::Effect::Eliminate(x) => self
                .eval(x, env)?
                .map_to(|v| EffectRec::Eliminate(v.clone())),
            ir::Effect::Place { marker, target } => {
                self.eval(target, env)?.map_to(|v| EffectRec::Place {
                    marker: *marker,
                    target: v.clone(),
                })
            }
            ir::Effect::Remove { marker, target } => {
                self.eval(target, env)?.map_to(|v| EffectRec::Remove {
                    marker: *marker,
                    target: v.clone(),
                })
            }
            ir::Effect::Move { what, to } => {
                let a = self.eval(what, env)?.to_vals().into_owned();
                let b = self.eval(to, env)?.to_vals().into_owned();
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
                self.eval(value, env)?.to_vals().try_map(|v| {
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

    /// The faces of a die, or the interpreter's error for a die the book never describes.
    fn faces(&self, die: u32) -> Result<&'p [i64], RunError> {
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
        Ok(faces)
    }

    fn die_dist(&self, die: u32) -> Result<Dist<i64, W>, RunError> {
        Ok(Dist::uniform(self.faces(die)?.iter().copied()))
    }

    /// One die as an array over its whole span, however far apart its faces lie (the sum
    /// kernel walks that span anyway).
    fn die_dense(&self, die: u32) -> Result<Dense<W>, RunError> {
        let faces = self.faces(die)?;
        let (lo, hi) = faces
            .iter()
            .fold((i64::MAX, i64::MIN), |(l, h), f| (l.min(*f), h.max(*f)));
        let width = hi
            .checked_sub(lo)
            .and_then(|x| usize::try_from(x).ok())
            .and_then(|x| x.checked_add(1))
            .ok_or(RunError::Overflow)?;
        // A die whose span alone is past the budget is refused before its array is made (the
        // sum kernel charges its steps itself).
        if width as u64 > self.limit {
            return Err(RunError::TooLarge {
                estimate: width.to_string(),
                limit: self.limit,
            });
        }
        let mut w = vec![W::zero(); width];
        for f in faces {
            w[(f - lo) as usize].add_assign(&W::one())?;
        }
        Ok(Dense::new(lo, w, W::from_u64(faces.len() as u64)))
    }

    /// A roll of one die: an array counted straight from the faces when they lie close
    /// together (no ordered map on the way; and a die whose repeated faces lie close enough
    /// for an array though its distinct faces alone would not be, `[1 × 10, 30]`, is that
    /// array, where the map's own test once found it not worth one and read it as certain).
    fn roll_dist(&self, die: u32) -> Result<ValDist<W>, RunError> {
        let faces = self.faces(die)?;
        let (lo, hi) = faces
            .iter()
            .fold((i64::MAX, i64::MIN), |(l, h), f| (l.min(*f), h.max(*f)));
        let width = hi.checked_sub(lo).and_then(|x| u64::try_from(x).ok());
        if let Some(width) = width.filter(|w| dense::worth_dense(faces.len(), w.saturating_add(1)))
        {
            let mut counts = vec![0u64; width as usize + 1];
            for f in faces {
                counts[(f - lo) as usize] += 1;
            }
            let w = counts.into_iter().map(W::from_u64).collect();
            return Ok(ValDist::Ints(Dense::new(
                lo,
                w,
                W::from_u64(faces.len() as u64),
            )));
        }
        Ok(ValDist::Vals(self.die_dist(die)?.map(|x| Val::Int(*x))))
    }

    /// Sum of `n` dice. A die whose faces run consecutively with one weight each (every
    /// `dN`) convolves by a sliding window: each step is additions only.
    fn sum_dist(&self, n: i64, die: u32) -> Result<Dense<W>, RunError> {
        Ok(self.sum_counts(n, die)?.into_dense()?)
    }

    /// [`Exact::sum_dist`] as its kernel left it (a flat die's counts in words).
    fn sum_counts(&self, n: i64, die: u32) -> Result<dense::Counts<W>, RunError> {
        crate::interp::pool_size(n)?;
        // Remembered as the kernel left it, the weights made for each use: a big-integer sum
        // is then made once, not once more to be kept.
        self.recall(&self.sums, (n, die), || {
            let one = self.die_dense(die)?;
            dense::sum_counts(&one, n as u64, |a, b| self.charge_product(a, b))
        })
    }

    /// `count` dice of `die` (`100d6`, `d3d6`): a sum for each possible count.
    fn dice(&self, counts: &ValDist<W>, die: u32) -> Result<ValDist<W>, RunError> {
        self.over_counts(counts, |n| Ok(ValDist::from_dense(self.sum_dist(n, die)?)))
    }

    /// How many of `n` dice land in `[lo, hi]`: a binomial.
    fn count_dist(
        &self,
        n: i64,
        die: u32,
        lo: Option<i64>,
        hi: Option<i64>,
    ) -> Result<Dense<W>, RunError> {
        crate::interp::pool_size(n)?;
        self.recall(&self.counts, (n, die, lo, hi), || {
            self.charge(n as u64 + 1)?;
            let faces = self.faces(die)?;
            let f = faces.len() as u64;
            let s = faces
                .iter()
                .filter(|x| lo.is_none_or(|l| **x >= l) && hi.is_none_or(|h| **x <= h))
                .count() as u64;
            Ok(dense::binomial_count(n as u64, s, f)?)
        })
    }

    /// Sum of the `k` highest (or lowest) of `n` dice: the order-statistics walk over the
    /// distinct faces ([`dense::keep`]); a die whose faces lie far apart keeps the walk over
    /// maps of sums ([`Exact::keep_sparse`]).
    fn keep_dist(&self, k: i64, n: i64, die: u32, highest: bool) -> Result<ValDist<W>, RunError> {
        crate::interp::pool_size(n)?;
        let mut sorted = self.faces(die)?.to_vec();
        sorted.sort_unstable();
        let mut distinct: Vec<(i64, u64)> = Vec::with_capacity(sorted.len());
        for f in sorted {
            match distinct.last_mut() {
                Some((v, m)) if *v == f => *m += 1,
                _ => distinct.push((f, 1)),
            }
        }
        let spread = match (distinct.first(), distinct.last()) {
            (Some((a, _)), Some((b, _))) => b.checked_sub(*a).and_then(|x| u64::try_from(x).ok()),
            _ => Some(0),
        };
        let Some(spread) = spread.filter(|s| dense::worth_dense(distinct.len(), s + 1)) else {
            return Ok(ValDist::from_vals(
                self.keep_sparse(k, n, die, highest)?.map(|x| Val::Int(*x)),
            ));
        };
        let d = self.recall(&self.keeps, (k, n, die, highest), || {
            let n = n as u64;
            let k = k.clamp(0, n as i64) as u64;
            // Refuse before any work (and before the arrays' memory) when the walk alone is
            // over the budget.
            let work = dense::keep_work(k, n, distinct.len() as u64, spread);
            let ahead = self.work.get().saturating_add(work);
            if ahead > self.limit {
                return Err(RunError::TooLarge {
                    estimate: format!("{ahead} or more"),
                    limit: self.limit,
                });
            }
            self.charge(work)?;
            Ok(dense::keep(k, n, &distinct, highest)?)
        })?;
        Ok(ValDist::from_dense(d))
    }

    /// Sum of the `k` highest (or lowest) of `n` dice whose faces lie far apart: walk the
    /// distinct faces from the kept end, choosing how many dice show each, with maps of sums.
    fn keep_sparse(
        &self,
        k: i64,
        n: i64,
        die: u32,
        highest: bool,
    ) -> Result<Dist<i64, W>, RunError> {
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
                    let add = value
                        .checked_mul((kept_after - kept_before) as i64)
                        .ok_or(RunError::Overflow)?;
                    self.charge(sums.len() as u64)?;
                    let slot = next.entry(placed + c).or_default();
                    for (s, w) in sums {
                        let to = s.checked_add(add).ok_or(RunError::Overflow)?;
                        crate::dist::bump(slot, to, ways.mul(w)?)?;
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
            Expr::Roll(d) => Ok(Some((ValDist::point(Val::Int(1)), *d))),
            _ => Ok(None),
        }
    }

    /// A pool kernel for each possible size of the pool, mixed by the sizes' chances.
    fn over_counts(
        &self,
        counts: &ValDist<W>,
        mut f: impl FnMut(i64) -> Result<ValDist<W>, RunError>,
    ) -> Result<ValDist<W>, RunError> {
        let mut branches = Vec::with_capacity(counts.len());
        for (n, w) in counts.iter() {
            branches.push((w.clone(), f(self.int(&n)?)?));
        }
        mix(branches, counts.total())
    }

    /// The items of a list that must be certain (`for`, `count`, `any`, `all`): a random list
    /// cannot be enumerated item by item, so `doing` names what was refused.
    fn point_items(&self, list: Option<&Val>, doing: &str) -> Result<Vec<Val>, RunError> {
        let Some(list) = list else {
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

    /// The outcomes a final value gives (a symbol is a named outcome). Integers close together
    /// stay an array: branches of them mix as arrays, and the map of outcomes is built once,
    /// at the end, in the weights the caller wants.
    fn outcomes(&self, d: ValDist<W>) -> Result<Answer<W>, RunError> {
        match d {
            ValDist::Ints(a) => Ok(Answer::Ints(a)),
            ValDist::Vals(m) => {
                for v in m.weights.keys() {
                    crate::interp::applies(v.clone())?;
                }
                Ok(Answer::Keys(
                    ValDist::Vals(m).map_to(|v| OutcomeKey::of_value(normalize(v.clone()))),
                ))
            }
        }
    }

    /// The outcomes of a result expression. A certain number of dice given as the result
    /// (`result 100d6`) is handed out as its kernel left it: nothing reads its weights here,
    /// and the [`Outcomes`] reads them from the kernel's words. Anything else is evaluated and
    /// made [`Exact::outcomes`]; both give the same weights and total.
    fn result(&self, e: &Expr, env: &Env<W>) -> Result<Answer<W>, RunError> {
        // The sparse evaluator keeps every value a map (see `eval`).
        let (true, Expr::Dice { count, die }) = (self.dense, e) else {
            let d = self.eval(e, env)?;
            return self.outcomes(d);
        };
        let counts = self.eval(count, env)?;
        if let Some(n) = counts.as_point() {
            let c = self.sum_counts(self.int(&n)?, *die)?;
            // A flat die's sum has every value of its range (no gap): the array `from_dense`
            // would keep.
            if matches!(c, dense::Counts::Words { .. }) {
                return Ok(Answer::Sum(c));
            }
            return self.outcomes(ValDist::from_dense(c.into_dense()?));
        }
        // As `eval` would: a sum for each possible count, mixed.
        let d = self.dice(&counts, *die)?;
        self.outcomes(d)
    }

    fn eval(&self, e: &Expr, env: &Env<W>) -> Result<ValDist<W>, RunError> {
        let d = self.eval_inner(e, env)?;
        // The sparse evaluator never lets an array out.
        Ok(match d {
            ValDist::Ints(a) if !self.dense => ValDist::Vals(a.to_dist().map(|x| Val::Int(*x))),
            d => d,
        })
    }

    /// Integer arithmetic and comparisons on arrays, when both sides are dense; `None` for
    /// any other case (the map products handle it).
    fn dense_binary(
        &self,
        op: BinOp,
        a: &ValDist<W>,
        b: &ValDist<W>,
    ) -> Result<Option<ValDist<W>>, RunError> {
        let (ValDist::Ints(x), ValDist::Ints(y)) = (a, b) else {
            return Ok(None);
        };
        let cmp = |c: Cmp| -> Result<Option<ValDist<W>>, RunError> {
            let (no, yes, total) = dense::compare(c, x, y)?;
            let mut weights = BTreeMap::new();
            if !no.is_zero() {
                weights.insert(Val::Bool(false), no);
            }
            if !yes.is_zero() {
                weights.insert(Val::Bool(true), yes);
            }
            Ok(Some(ValDist::Vals(Dist { weights, total })))
        };
        Ok(match op {
            BinOp::Add => Some(ValDist::from_dense(dense::add(x, y)?)),
            BinOp::Sub => Some(ValDist::from_dense(dense::sub(x, y)?)),
            BinOp::Lt => cmp(Cmp::Lt)?,
            BinOp::Le => cmp(Cmp::Le)?,
            BinOp::Gt => cmp(Cmp::Gt)?,
            BinOp::Ge => cmp(Cmp::Ge)?,
            BinOp::Eq => cmp(Cmp::Eq)?,
            BinOp::Ne => cmp(Cmp::Ne)?,
            _ => None,
        })
    }

    fn eval_inner(&self, e: &Expr, env: &Env<W>) -> Result<ValDist<W>, RunError> {
        Ok(match e {
            Expr::Const(v) => ValDist::point(self.interp.constant(v)?),
            Expr::Local(s) => match &env.slots[*s as usize] {
                Slot::Fixed(v) => ValDist::point(v.clone()),
                Slot::Lazy(d) => d.clone(),
            },
            Expr::Roll(d) => self.roll_dist(*d)?,
            Expr::Dice { count, die } => {
                let counts = self.eval(count, env)?;
                self.dice(&counts, *die)?
            }
            Expr::Unary { op, operand } => {
                let d = self.eval(operand, env)?;
                match (op, d) {
                    (UnOp::Neg, ValDist::Ints(a)) => ValDist::Ints(dense::neg(&a)?),
                    (UnOp::Neg, d) => d.try_map(|v| {
                        Ok::<_, RunError>(Val::Int(
                            self.int(v)?.checked_neg().ok_or(RunError::Overflow)?,
                        ))
                    })?,
                    (UnOp::Not, d) => d.try_map(|v| match v {
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
                if let Some(d) = self.dense_binary(*op, &a, &b)? {
                    return Ok(d);
                }
                let (a, b) = (a.to_vals(), b.to_vals());
                ValDist::from_vals(match op {
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
                })
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.eval(cond, env)?;
                let mut branches = Vec::with_capacity(c.len());
                for (v, w) in c.iter() {
                    let d = if matches!(*v, Val::Bool(true)) {
                        self.eval(then, env)?
                    } else {
                        self.eval(otherwise, env)?
                    };
                    branches.push((w.clone(), d));
                }
                mix(branches, c.total())?
            }
            Expr::Builtin { func, args } => self.builtin(*func, args, env)?,
            Expr::Host { func, .. } => return Err(RunError::NeedsGame(func.name().to_string())),
            Expr::Call { proc, args } => {
                let tuples = self.tuples(args, env)?;
                let mut branches = Vec::new();
                for (vals, w) in &tuples.weights {
                    let d = match self.call(*proc, vals.clone())?.settled()? {
                        Answer::Ints(d) => ValDist::from_dense(d),
                        Answer::Sum(_) => unreachable!("settled"),
                        Answer::Keys(d) => ValDist::from_vals(d.map(|k| match k {
                            OutcomeKey::Named(n) => Val::Sym(n.clone()),
                            OutcomeKey::Value(v) => v.clone(),
                            _ => Val::Unit,
                        })),
                    };
                    branches.push((w.clone(), d));
                }
                mix(branches, &tuples.total)?
            }
            Expr::Stack { stack, args } => {
                let tuples = self.tuples(args, env)?;
                let mut branches = Vec::new();
                for (vals, w) in &tuples.weights {
                    branches.push((w.clone(), ValDist::from_vals(self.stack(*stack, vals)?)));
                }
                mix(branches, &tuples.total)?
            }
            Expr::Lookup { table, keys } => {
                let tuples = self.tuples(keys, env)?;
                ValDist::from_vals(tuples.try_map(|vals| {
                    let keys: Vec<Val> = vals.iter().cloned().map(normalize).collect();
                    self.interp.lookup(*table, &keys)
                })?)
            }
            Expr::Field { base, field } => self
                .eval(base, env)?
                .try_map(|b| self.interp.field(b, field))?,
            Expr::List(items) => {
                ValDist::from_vals(self.tuples(items, env)?.map(|v| Val::List(v.clone())))
            }
            Expr::Quant {
                quant,
                slot,
                list,
                cond,
            } => {
                let d = self.eval(list, env)?;
                // A list that depends on the dice (`1..=d3`): each list is its own branch.
                let mut branches = Vec::new();
                for (set, w) in d.iter() {
                    let items = self.point_items(Some(&*set), "count over a list")?;
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
                        acc = product(&acc, &c.to_vals(), |a, b| {
                            let yes = matches!(b, Val::Bool(true));
                            Ok::<_, RunError>(match (quant, a) {
                                (ir::Quant::Count, Val::Int(n)) => Val::Int(n + i64::from(yes)),
                                (ir::Quant::Any, Val::Bool(x)) => Val::Bool(*x || yes),
                                (_, Val::Bool(x)) => Val::Bool(*x && yes),
                                (_, other) => other.clone(),
                            })
                        })?;
                    }
                    branches.push((w.clone(), ValDist::from_vals(acc)));
                }
                mix(branches, d.total())?
            }
        })
    }

    /// The joint distribution of independent argument expressions.
    fn tuples(&self, args: &[Expr], env: &Env<W>) -> Result<Dist<Vec<Val>, W>, RunError> {
        let mut acc: Dist<Vec<Val>, W> = Dist::point(Vec::new());
        for a in args {
            let d = self.eval(a, env)?;
            self.charge_product(acc.len(), d.len())?;
            acc = product(&acc, &d.to_vals(), |xs, y| {
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
                Some(w) => self.eval(w, &env)?.to_vals().into_owned(),
                None => Dist::point(Val::Bool(true)),
            };
            let mut branches = Vec::new();
            for (a, w) in &applies.weights {
                let d = if matches!(a, Val::Bool(true)) {
                    let v = self.eval(&en.value, &env)?.to_vals().into_owned();
                    let per = match &en.per {
                        Some(p) => self.eval(p, &env)?.to_vals().into_owned(),
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

    fn builtin(&self, func: Builtin, args: &[Expr], env: &Env<W>) -> Result<ValDist<W>, RunError> {
        let ints2 = |this: &Self,
                     extreme: Option<bool>,
                     f: &dyn Fn(i64, i64) -> Result<i64, RunError>|
         -> Result<ValDist<W>, RunError> {
            let mut acc = this.eval(&args[0], env)?.normalized();
            for a in &args[1..] {
                let d = this.eval(a, env)?.normalized();
                this.charge_product(acc.len(), d.len())?;
                acc = match (extreme, &acc, &d) {
                    // `max`/`min` of arrays: from cumulative weights, one pass.
                    (Some(highest), ValDist::Ints(x), ValDist::Ints(y)) => {
                        ValDist::Ints(dense::extreme(x, y, highest)?)
                    }
                    _ => ValDist::from_vals(product(&acc.to_vals(), &d.to_vals(), |x, y| {
                        Ok::<_, RunError>(Val::Int(f(this.int(x)?, this.int(y)?)?))
                    })?),
                };
            }
            Ok(acc)
        };
        Ok(match func {
            Builtin::Min => ints2(self, Some(false), &|a, b| Ok(a.min(b)))?,
            Builtin::Max => ints2(self, Some(true), &|a, b| Ok(a.max(b)))?,
            Builtin::Abs => self.eval(&args[0], env)?.try_map(|v| {
                Ok::<_, RunError>(Val::Int(
                    self.int(v)?.checked_abs().ok_or(RunError::Overflow)?,
                ))
            })?,
            Builtin::DivUp => ints2(self, None, &div_up)?,
            Builtin::Clamp => {
                let t = self.tuples(args, env)?;
                ValDist::from_vals(t.try_map(|v| {
                    let (x, lo, hi) = (self.int(&v[0])?, self.int(&v[1])?, self.int(&v[2])?);
                    Ok::<_, RunError>(Val::Int(x.max(lo).min(hi)))
                })?)
            }
            Builtin::Pool => unreachable!("pools are lowered to Expr::Dice"),
            Builtin::Sum => match self.pool_parts(&args[0], env)? {
                Some((counts, die)) => {
                    self.over_counts(&counts, |n| Ok(ValDist::from_dense(self.sum_dist(n, die)?)))?
                }
                None => self.eval(&args[0], env)?.normalized(),
            },
            Builtin::Highest | Builtin::Lowest => {
                let ks = self.eval(&args[0], env)?;
                match self.pool_parts(&args[1], env)? {
                    Some((counts, die)) => {
                        let mut branches = Vec::with_capacity(ks.len());
                        for (k, w) in ks.iter() {
                            let k = self.int(&k)?;
                            branches.push((
                                w.clone(),
                                self.over_counts(&counts, |n| {
                                    self.keep_dist(k, n, die, func == Builtin::Highest)
                                })?,
                            ));
                        }
                        mix(branches, ks.total())?
                    }
                    None => {
                        let v = self.eval(&args[1], env)?;
                        self.charge_product(ks.len(), v.len())?;
                        ValDist::from_vals(product(&ks.to_vals(), &v.to_vals(), |k, x| {
                            Ok::<_, RunError>(Val::Int(if self.int(k)? >= 1 {
                                self.int(&normalize(x.clone()))?
                            } else {
                                0
                            }))
                        })?)
                    }
                }
            }
            Builtin::Successes | Builtin::Count => {
                let ranges = self.eval(&args[1], env)?;
                match self.pool_parts(&args[0], env)? {
                    Some((counts, die)) => {
                        let mut branches = Vec::with_capacity(ranges.len());
                        for (r, w) in ranges.iter() {
                            let (lo, hi) = match (func, &*r) {
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
                                self.over_counts(&counts, |n| {
                                    Ok(ValDist::from_dense(self.count_dist(n, die, lo, hi)?))
                                })?,
                            ));
                        }
                        mix(branches, ranges.total())?
                    }
                    None => {
                        let v = self.eval(&args[0], env)?;
                        self.charge_product(v.len(), ranges.len())?;
                        ValDist::from_vals(product(&v.to_vals(), &ranges.to_vals(), |x, r| {
                            let x = self.int(&normalize(x.clone()))?;
                            let hit = match (func, r) {
                                (Builtin::Successes, t) => x >= self.int(t)?,
                                (_, Val::Range(lo, hi)) => {
                                    lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h)
                                }
                                (_, t) => x == self.int(t)?,
                            };
                            Ok::<_, RunError>(Val::Int(i64::from(hit)))
                        })?)
                    }
                }
            }
            Builtin::Range => {
                let lo = self.eval(&args[0], env)?;
                let hi = self.eval(&args[1], env)?;
                self.charge_product(lo.len(), hi.len())?;
                ValDist::Vals(product(&lo.to_vals(), &hi.to_vals(), |a, b| {
                    Ok::<_, RunError>(Val::Range(Some(self.int(a)?), Some(self.int(b)?)))
                })?)
            }
            Builtin::Reroll => {
                let Expr::Const(Value::Die(die)) = &args[0] else {
                    return Err(RunError::Type("`reroll` needs a die".into()));
                };
                let ranges = self.eval(&args[1], env)?;
                let one = self.die_dist(*die)?;
                let mut branches = Vec::with_capacity(ranges.len());
                for (r, w) in ranges.iter() {
                    let (lo, hi) = match &*r {
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
                        ValDist::from_vals(Dist::from_weights(weights, one.total.mul(&one.total)?)),
                    ));
                }
                mix(branches, ranges.total())?
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
