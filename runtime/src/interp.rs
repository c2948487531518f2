//! The tree-walking interpreter of the IR: the reference semantics every other backend (the
//! exact evaluator, the JIT, the game engine) must agree with.

use sandtable_ir::{
    self as ir, BinOp, Builtin, EngineFn, Expr, KeyPattern, Program, Stmt, UnOp, Value,
};

use crate::error::RunError;
use crate::rng::Dice;
use crate::value::{EffectRec, Outcome, OutcomeKey, ScoreOpRec, Val};

/// Most iterations one `for`/`repeat` may run, so every run ends.
pub const MAX_LOOP: i64 = 100_000;
/// Deepest chain of calls, the resolution itself counted as depth 1.
pub const MAX_CALL_DEPTH: usize = 64;
/// Largest pool rolled at once.
pub const MAX_POOL: i64 = 100_000;

/// What happened, step by step, for `explain`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Event {
    Enter {
        proc: u32,
    },
    Exit {
        proc: u32,
    },
    Roll {
        die: u32,
        face: i64,
    },
    Let {
        name: String,
        value: Val,
        /// The slot holds a length, shown in the ruleset's unit.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        length: bool,
    },
    Modifier {
        stack: u32,
        entry: usize,
        applied: bool,
        value: i64,
    },
    StackTotal {
        stack: u32,
        raw: i64,
        total: i64,
    },
    Lookup {
        table: u32,
        keys: Vec<Val>,
        cell: Val,
    },
    /// The arm chosen, copied so the narrative needs no search of the body.
    Band {
        proc: u32,
        value: Val,
        arm: usize,
        patterns: Vec<KeyPattern>,
        outcome: Option<ir::Str>,
        cite: ir::Cite,
        /// The value and the bounds are lengths.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        length: bool,
    },
    Effect(EffectRec),
    Result(Val),
    Outcome(ir::Str),
}

/// Services of the game engine that rules may call. Outside a game there are none.
pub trait Host {
    fn call(&mut self, func: EngineFn, args: &[Val]) -> Result<Val, RunError>;
    fn effect(&mut self, _e: &EffectRec) -> Result<(), RunError> {
        Ok(())
    }
    /// Pick one of `options` at a `choose` point.
    /// `length`: the options are lengths, to be shown in the ruleset's unit.
    /// `by`: the side that decides (`choose … by SIDE`); else the acting side.
    fn choose(
        &mut self,
        _options: &[Val],
        _length: bool,
        _by: Option<u32>,
    ) -> Result<usize, RunError> {
        Err(RunError::NeedsDecision)
    }
    /// A field of a piece in play: its entity's value, or the game's current one.
    fn field(&mut self, piece: u32, field: &str) -> Result<Val, RunError> {
        Err(RunError::Type(format!(
            "piece #{piece} has no field `{field}` outside a game"
        )))
    }
    /// Run a procedure natively when the host holds compiled code for it; `None` sends the
    /// call to the interpreter. Only asked when no trace is being kept. A host that runs the
    /// call itself may take `args` (the callee's frame, with room for its locals).
    fn compiled(
        &mut self,
        _proc: u32,
        _args: &mut Vec<Val>,
        _dice: &mut Dice,
    ) -> Option<Result<Outcome, RunError>> {
        None
    }
    /// The result procedure `proc` gives whatever its arguments, when the host knows it
    /// ahead (a game's options decide it). Only asked when no trace is being kept.
    fn constant_result(&self, _proc: u32) -> Option<Val> {
        None
    }
}

/// No game: engine functions fail with a clear error.
pub struct NoGame;

impl Host for NoGame {
    fn call(&mut self, func: EngineFn, _args: &[Val]) -> Result<Val, RunError> {
        Err(RunError::NeedsGame(func.name().to_string()))
    }
}

/// Values supplied for the book's unknowns, by unknown id.
#[derive(Debug, Clone, Default)]
pub struct Assumptions {
    /// Read at every constant that names an unknown: a fast hash.
    pub values: crate::hash::WordMap<u32, Val>,
}

pub struct Interp<'p> {
    pub program: &'p Program,
    pub assumptions: &'p Assumptions,
}

pub struct Ctx<'a> {
    pub dice: &'a mut Dice,
    pub host: &'a mut dyn Host,
    pub trace: Option<&'a mut Vec<Event>>,
    depth: usize,
}

impl<'a> Ctx<'a> {
    pub fn new(dice: &'a mut Dice, host: &'a mut dyn Host) -> Self {
        Ctx {
            dice,
            host,
            trace: None,
            depth: 0,
        }
    }
    pub fn traced(dice: &'a mut Dice, host: &'a mut dyn Host, trace: &'a mut Vec<Event>) -> Self {
        Ctx {
            dice,
            host,
            trace: Some(trace),
            depth: 0,
        }
    }
    fn event(&mut self, e: impl FnOnce() -> Event) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.push(e());
        }
    }
}

enum Flow {
    Next,
    Done(OutcomeKey),
}

struct Frame {
    slots: Vec<Val>,
    effects: Vec<EffectRec>,
    proc: u32,
}

impl<'p> Interp<'p> {
    pub fn new(program: &'p Program, assumptions: &'p Assumptions) -> Self {
        Interp {
            program,
            assumptions,
        }
    }

    /// Run a procedure with its arguments (one per parameter, defaults already filled).
    pub fn run(&self, proc: u32, args: Vec<Val>, ctx: &mut Ctx) -> Result<Outcome, RunError> {
        self.run_body(proc, &self.program.procs[proc as usize].body, args, ctx)
    }

    /// Run `body` in a frame of procedure `proc`: its own body, or one the engine has
    /// specialised for arguments it knows ahead (same slots, same result).
    pub fn run_body(
        &self,
        proc: u32,
        body: &[Stmt],
        args: Vec<Val>,
        ctx: &mut Ctx,
    ) -> Result<Outcome, RunError> {
        if ctx.depth >= MAX_CALL_DEPTH {
            return Err(RunError::Limit {
                what: "call depth".into(),
                // The depth the call would reach: the resolution itself is depth 1.
                size: ctx.depth as u64 + 1,
                limit: MAX_CALL_DEPTH as u64,
            });
        }
        let p = &self.program.procs[proc as usize];
        let mut slots = args;
        slots.resize(p.n_slots.max(p.params.len() as u32) as usize, Val::Unit);
        let mut frame = Frame {
            slots,
            effects: Vec::new(),
            proc,
        };
        ctx.event(|| Event::Enter { proc });
        ctx.depth += 1;
        let flow = self.block(body, &mut frame, ctx);
        ctx.depth -= 1;
        ctx.event(|| Event::Exit { proc });
        let key = match flow? {
            Flow::Done(k) => k,
            Flow::Next if !frame.effects.is_empty() => {
                OutcomeKey::Effects(frame.effects.iter().map(|e| e.show(self.program)).collect())
            }
            Flow::Next => OutcomeKey::Nothing,
        };
        Ok(Outcome {
            key,
            effects: frame.effects,
        })
    }

    /// Evaluate an expression that reads only the slots in `slots` (borrowed as the frame,
    /// so nothing is copied); `slots` is given back unchanged.
    pub fn eval_in(
        &self,
        proc: u32,
        slots: &mut Vec<Val>,
        e: &Expr,
        ctx: &mut Ctx,
    ) -> Result<Val, RunError> {
        let n = slots.len();
        let mut frame = Frame {
            slots: std::mem::take(slots),
            effects: Vec::new(),
            proc,
        };
        let r = self.expr(e, &mut frame, ctx);
        *slots = frame.slots;
        // A quantifier's item slot may have grown the frame: the caller's slots stay as given.
        slots.truncate(n);
        r
    }

    fn block(&self, stmts: &[Stmt], f: &mut Frame, ctx: &mut Ctx) -> Result<Flow, RunError> {
        for s in stmts {
            if let Flow::Done(k) = self.stmt(s, f, ctx)? {
                return Ok(Flow::Done(k));
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&self, s: &Stmt, f: &mut Frame, ctx: &mut Ctx) -> Result<Flow, RunError> {
        self.stmt_at(s, f, ctx)
            .map_err(|e| e.at(self.program, f.proc, Some(s)))
    }

    fn stmt_at(&self, s: &Stmt, f: &mut Frame, ctx: &mut Ctx) -> Result<Flow, RunError> {
        match s {
            Stmt::Let { slot, value } => {
                let v = self.expr(value, f, ctx)?;
                let v = match v {
                    Val::Pool(p) => Val::Int(p.iter().sum()),
                    v => v,
                };
                if ctx.trace.is_some() {
                    let pd = &self.program.procs[f.proc as usize];
                    let name = pd
                        .slot_names
                        .get(*slot as usize)
                        .cloned()
                        .unwrap_or_default();
                    let length = pd.slot_types.get(*slot as usize) == Some(&ir::Type::Length);
                    ctx.event(|| Event::Let {
                        name,
                        value: v.clone(),
                        length,
                    });
                }
                f.slots[*slot as usize] = v;
                Ok(Flow::Next)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.bool(cond, f, ctx)? {
                    self.block(then, f, ctx)
                } else {
                    self.block(otherwise, f, ctx)
                }
            }
            Stmt::Bands {
                scrutinee,
                arms,
                length,
            } => {
                let v = self.expr(scrutinee, f, ctx)?;
                let v = match v {
                    Val::Pool(p) => Val::Int(p.iter().sum()),
                    v => v,
                };
                let Some(i) = arms
                    .iter()
                    .position(|a| a.patterns.iter().any(|p| matches(p, &v)))
                else {
                    return Err(RunError::NoBand {
                        value: v.show_as(self.program, *length),
                        proc: self.program.procs[f.proc as usize].name.clone(),
                    });
                };
                let arm = &arms[i];
                ctx.event(|| Event::Band {
                    proc: f.proc,
                    value: v.clone(),
                    arm: i,
                    patterns: arm.patterns.clone(),
                    outcome: arm.outcome.clone(),
                    cite: arm.cite.clone(),
                    length: *length,
                });
                if let Flow::Done(k) = self.block(&arm.body, f, ctx)? {
                    return Ok(Flow::Done(k));
                }
                if let Some(o) = &arm.outcome {
                    ctx.event(|| Event::Outcome(o.clone()));
                    return Ok(Flow::Done(OutcomeKey::Named(o.clone())));
                }
                if let Some(e) = &arm.value {
                    let v = applies(self.expr(e, f, ctx)?)?;
                    ctx.event(|| Event::Result(v.clone()));
                    return Ok(Flow::Done(OutcomeKey::of_value(normalize(v))));
                }
                Ok(Flow::Next)
            }
            Stmt::Result(e) => {
                let v = applies(normalize(self.expr(e, f, ctx)?))?;
                ctx.event(|| Event::Result(v.clone()));
                Ok(Flow::Done(OutcomeKey::of_value(v)))
            }
            Stmt::Outcome(o) => {
                ctx.event(|| Event::Outcome(o.clone()));
                Ok(Flow::Done(OutcomeKey::Named(o.clone())))
            }
            Stmt::Effect(e) => {
                let rec = self.effect(e, f, ctx)?;
                ctx.host.effect(&rec)?;
                ctx.event(|| Event::Effect(rec.clone()));
                f.effects.push(rec);
                Ok(Flow::Next)
            }
            Stmt::Choose {
                slot,
                from,
                by,
                body,
                length,
            } => {
                let options = self.list(from, f, ctx)?;
                if options.is_empty() {
                    return Err(RunError::Type("`choose` over an empty set".into()));
                }
                let by = match by {
                    Some(b) => match self.expr(b, f, ctx)? {
                        Val::Side(s) => Some(s),
                        other => {
                            return Err(RunError::Type(format!(
                                "`choose … by` needs a side, not {other:?}"
                            )));
                        }
                    },
                    None => None,
                };
                let i = ctx.host.choose(&options, *length, by)?;
                let v = options
                    .get(i)
                    .cloned()
                    .ok_or_else(|| RunError::Type("choice out of range".into()))?;
                f.slots[*slot as usize] = v;
                self.block(body, f, ctx)
            }
            Stmt::For { slot, iter, body } => {
                let items = self.list(iter, f, ctx)?;
                if items.len() as i64 > MAX_LOOP {
                    return Err(RunError::Limit {
                        what: "`for` iterations".into(),
                        size: items.len() as u64,
                        limit: MAX_LOOP as u64,
                    });
                }
                for it in items {
                    f.slots[*slot as usize] = it;
                    if let Flow::Done(k) = self.block(body, f, ctx)? {
                        return Ok(Flow::Done(k));
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Repeat { count, body } => {
                let n = self.int(count, f, ctx)?;
                if n > MAX_LOOP {
                    return Err(RunError::Limit {
                        what: "`repeat` count".into(),
                        size: n as u64,
                        limit: MAX_LOOP as u64,
                    });
                }
                for _ in 0..n.max(0) {
                    if let Flow::Done(k) = self.block(body, f, ctx)? {
                        return Ok(Flow::Done(k));
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Require(c) => {
                if self.bool(c, f, ctx)? {
                    Ok(Flow::Next)
                } else {
                    Err(RunError::Illegal(
                        self.program.procs[f.proc as usize].name.clone(),
                    ))
                }
            }
            Stmt::Expr(e) => {
                self.expr(e, f, ctx)?;
                Ok(Flow::Next)
            }
        }
    }

    fn effect(&self, e: &ir::Effect, f: &mut Frame, ctx: &mut Ctx) -> Result<EffectRec, RunError> {
        Ok(match e {
            ir::Effect::Eliminate(x) => EffectRec::Eliminate(self.expr(x, f, ctx)?),
            ir::Effect::Place { marker, target } => EffectRec::Place {
                marker: *marker,
                target: self.expr(target, f, ctx)?,
            },
            ir::Effect::Remove { marker, target } => EffectRec::Remove {
                marker: *marker,
                target: self.expr(target, f, ctx)?,
            },
            ir::Effect::Move { what, to } => EffectRec::Move {
                what: self.expr(what, f, ctx)?,
                to: self.expr(to, f, ctx)?,
            },
            ir::Effect::Score { side, op, value } => EffectRec::Score {
                side: *side,
                op: match op {
                    ir::ScoreOp::Add => ScoreOpRec::Add,
                    ir::ScoreOp::Sub => ScoreOpRec::Sub,
                    ir::ScoreOp::Set => ScoreOpRec::Set,
                },
                value: self.int(value, f, ctx)?,
            },
            ir::Effect::Win(s) => EffectRec::Win(*s),
            // `win ?`: the book names no winner; an assumption may name the side.
            ir::Effect::Undecided(u) => match self.assumptions.values.get(u) {
                Some(Val::Side(s)) => EffectRec::Win(*s),
                Some(Val::Sym(n) | Val::Text(n)) => {
                    match self.program.sides.iter().position(|s| *s.name == **n) {
                        Some(i) => EffectRec::Win(i as sandtable_ir::SideId),
                        None => {
                            return Err(RunError::Type(format!(
                                "the assumed winner `{n}` is not a side"
                            )));
                        }
                    }
                }
                _ => return Err(self.unknown(*u)),
            },
        })
    }

    fn unknown(&self, id: u32) -> RunError {
        let u = &self.program.unknowns[id as usize];
        RunError::NeedsAssumption(Box::new(crate::error::Unsupplied {
            name: u.name.clone(),
            note: u.note.clone(),
            file: u.file.clone(),
            line: u.line,
        }))
    }

    /// A constant, with the book's unknowns replaced by assumptions or refused.
    pub fn constant(&self, v: &Value) -> Result<Val, RunError> {
        match v {
            Value::Unknown(id) => self
                .assumptions
                .values
                .get(id)
                .cloned()
                .ok_or_else(|| self.unknown(*id)),
            Value::List(items) => Ok(Val::List(
                items
                    .iter()
                    .map(|x| self.constant(x))
                    .collect::<Result<_, _>>()?,
            )),
            other => {
                Val::from_const(other).ok_or_else(|| RunError::Type("unreadable constant".into()))
            }
        }
    }

    fn int(&self, e: &Expr, f: &mut Frame, ctx: &mut Ctx) -> Result<i64, RunError> {
        let v = self.expr(e, f, ctx)?;
        v.as_int().ok_or_else(|| match &v {
            Val::Sym(s) if &**s == ir::NOT_APPLICABLE => RunError::Type(
                "a table cell marked `-` (not applicable) was used as a number; test it first with `applicable(TABLE[…])`".into(),
            ),
            _ => RunError::Type(format!("expected a number, found {}", v.show(self.program))),
        })
    }
    fn bool(&self, e: &Expr, f: &mut Frame, ctx: &mut Ctx) -> Result<bool, RunError> {
        let v = self.expr(e, f, ctx)?;
        v.as_bool().ok_or_else(|| {
            RunError::Type(format!(
                "expected true or false, found {}",
                v.show(self.program)
            ))
        })
    }
    fn list(&self, e: &Expr, f: &mut Frame, ctx: &mut Ctx) -> Result<Vec<Val>, RunError> {
        match self.expr(e, f, ctx)? {
            Val::List(v) => Ok(v),
            Val::Pool(v) => Ok(v.into_iter().map(Val::Int).collect()),
            Val::Range(Some(lo), Some(hi)) => {
                if hi.saturating_sub(lo) > MAX_LOOP {
                    return Err(RunError::Limit {
                        what: "range length".into(),
                        size: hi.saturating_sub(lo) as u64,
                        limit: MAX_LOOP as u64,
                    });
                }
                Ok((lo..=hi).map(Val::Int).collect())
            }
            other => Err(RunError::Type(format!(
                "expected a list, found {}",
                other.show(self.program)
            ))),
        }
    }

    pub(crate) fn roll(&self, die: u32, ctx: &mut Ctx) -> Result<i64, RunError> {
        let faces = &self.program.dice[die as usize].faces;
        if faces.is_empty() {
            let name = format!("{}.faces", self.program.dice[die as usize].name);
            return Err(
                match self.program.unknowns.iter().position(|u| u.name == name) {
                    Some(id) => self.unknown(id as u32),
                    None => RunError::Type(format!(
                        "die `{}` has no faces",
                        self.program.dice[die as usize].name
                    )),
                },
            );
        }
        let face = faces[ctx.dice.index(faces.len() as u32) as usize];
        ctx.dice.saw(die, face);
        ctx.event(|| Event::Roll { die, face });
        Ok(face)
    }

    /// An operand of a composite expression: a slot or a plain constant is read in place,
    /// anything else is evaluated. Most operands are such leaves (a guard's parameters and
    /// literals), and a full `expr` call for each cost more than the comparison it feeds.
    #[inline(always)]
    fn operand(&self, e: &Expr, f: &mut Frame, ctx: &mut Ctx) -> Result<Val, RunError> {
        match e {
            Expr::Local(s) => Ok(f.slots[*s as usize].clone()),
            Expr::Const(Value::Int(n) | Value::Length(n)) => Ok(Val::Int(*n)),
            Expr::Const(Value::Bool(b)) => Ok(Val::Bool(*b)),
            Expr::Const(Value::Entity(e)) => Ok(Val::Entity(*e)),
            Expr::Const(Value::Kind(k)) => Ok(Val::Kind(*k)),
            Expr::Const(Value::Side(s)) => Ok(Val::Side(*s)),
            Expr::Const(Value::Counter(c)) => Ok(Val::Counter(*c)),
            _ => self.expr(e, f, ctx),
        }
    }

    fn expr(&self, e: &Expr, f: &mut Frame, ctx: &mut Ctx) -> Result<Val, RunError> {
        Ok(match e {
            Expr::Const(v) => self.constant(v)?,
            Expr::Local(s) => f.slots[*s as usize].clone(),
            Expr::Roll(d) => Val::Int(self.roll(*d, ctx)?),
            Expr::Dice { count, die } => {
                let n = self.int(count, f, ctx)?;
                pool_size(n)?;
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(self.roll(*die, ctx)?);
                }
                Val::Pool(v)
            }
            Expr::Unary { op, operand } => {
                let v = self.expr(operand, f, ctx)?;
                match op {
                    UnOp::Neg => Val::Int(
                        v.as_int()
                            .ok_or_else(|| RunError::Type("cannot negate".into()))?
                            .checked_neg()
                            .ok_or(RunError::Overflow)?,
                    ),
                    UnOp::Not => Val::Bool(
                        !v.as_bool()
                            .ok_or_else(|| RunError::Type("`not` needs a condition".into()))?,
                    ),
                }
            }
            Expr::Binary { op, lhs, rhs } => match op {
                BinOp::And => Val::Bool(self.bool(lhs, f, ctx)? && self.bool(rhs, f, ctx)?),
                BinOp::Or => Val::Bool(self.bool(lhs, f, ctx)? || self.bool(rhs, f, ctx)?),
                // A slot is read in place, not copied: reading it can neither fail nor roll,
                // so the other side may be evaluated first.
                _ => match (&**lhs, &**rhs) {
                    (Expr::Local(x), _) => {
                        let b = self.operand(rhs, f, ctx)?;
                        binary(*op, &f.slots[*x as usize], &b)?
                    }
                    (_, Expr::Local(y)) => {
                        let a = self.operand(lhs, f, ctx)?;
                        binary(*op, &a, &f.slots[*y as usize])?
                    }
                    _ => {
                        let a = self.operand(lhs, f, ctx)?;
                        let b = self.operand(rhs, f, ctx)?;
                        binary(*op, &a, &b)?
                    }
                },
            },
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                if self.bool(cond, f, ctx)? {
                    self.expr(then, f, ctx)?
                } else {
                    self.expr(otherwise, f, ctx)?
                }
            }
            Expr::Builtin { func, args } => self.builtin(*func, args, f, ctx)?,
            Expr::Host { func, args } => {
                // Engine functions take few arguments: no allocation per call, and only the
                // values given are made and dropped (they sit in the guards the engine tests
                // thousands of times per decision).
                match args.as_slice() {
                    [] => ctx.host.call(*func, &[])?,
                    // Arguments in consecutive slots (a guard's parameters, in order) are
                    // handed over where they lie.
                    [first, rest @ ..]
                        if let Expr::Local(x) = first
                            && rest.iter().enumerate().all(
                                |(k, r)| matches!(r, Expr::Local(y) if *y as usize == *x as usize + k + 1),
                            ) =>
                    {
                        let x = *x as usize;
                        ctx.host.call(*func, &f.slots[x..x + args.len()])?
                    }
                    [a] => {
                        let a = self.operand(a, f, ctx)?;
                        ctx.host.call(*func, std::slice::from_ref(&a))?
                    }
                    [a, b] => {
                        let v = [self.operand(a, f, ctx)?, self.operand(b, f, ctx)?];
                        ctx.host.call(*func, &v)?
                    }
                    [a, b, c] => {
                        let v = [
                            self.operand(a, f, ctx)?,
                            self.operand(b, f, ctx)?,
                            self.operand(c, f, ctx)?,
                        ];
                        ctx.host.call(*func, &v)?
                    }
                    _ => {
                        let mut vals = Vec::with_capacity(args.len());
                        for a in args {
                            vals.push(self.expr(a, f, ctx)?);
                        }
                        ctx.host.call(*func, &vals)?
                    }
                }
            }
            // Arguments that are slots cannot fail: a call whose result is known needs them
            // not (Platoon's `carry_load(mover)` at every hex of a move guard).
            Expr::Call { proc, args }
                if ctx.trace.is_none()
                    && args.iter().all(|a| matches!(a, Expr::Local(_)))
                    && let Some(v) = ctx.host.constant_result(*proc) =>
            {
                v
            }
            Expr::Call { proc, args } => {
                // Room for the callee's locals too, so its frame needs no second allocation.
                let callee = &self.program.procs[*proc as usize];
                let mut vals = Vec::with_capacity(args.len().max(callee.n_slots as usize));
                for a in args {
                    vals.push(self.operand(a, f, ctx)?);
                }
                let native = if ctx.trace.is_none() {
                    ctx.host.compiled(*proc, &mut vals, ctx.dice)
                } else {
                    None
                };
                let out = match native {
                    Some(r) => r?,
                    None => self.run(*proc, vals, ctx)?,
                };
                f.effects.extend(out.effects);
                match out.key {
                    OutcomeKey::Named(n) => Val::Sym(n),
                    OutcomeKey::Value(v) => v,
                    _ => Val::Unit,
                }
            }
            Expr::Stack { stack, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(a, f, ctx)?);
                }
                Val::Int(self.stack(*stack, vals, ctx)?)
            }
            Expr::Lookup { table, keys } => {
                let mut vals = Vec::with_capacity(keys.len());
                for k in keys {
                    vals.push(normalize(self.expr(k, f, ctx)?));
                }
                let cell = self.lookup(*table, &vals)?;
                ctx.event(|| Event::Lookup {
                    table: *table,
                    keys: vals,
                    cell: cell.clone(),
                });
                cell
            }
            Expr::Field { base, field } => match self.expr(base, f, ctx)? {
                Val::Piece(p) => ctx.host.field(p, field)?,
                b => self.field(&b, field)?,
            },
            Expr::List(items) => {
                let mut v = Vec::with_capacity(items.len());
                for i in items {
                    v.push(self.expr(i, f, ctx)?);
                }
                Val::List(v)
            }
            Expr::Quant {
                quant,
                slot,
                list,
                cond,
            } => {
                let items = self.list(list, f, ctx)?;
                if f.slots.len() <= *slot as usize {
                    f.slots.resize(*slot as usize + 1, Val::Unit);
                }
                let mut n = 0i64;
                for it in items {
                    f.slots[*slot as usize] = it;
                    let yes = self.bool(cond, f, ctx)?;
                    match quant {
                        ir::Quant::Any if yes => return Ok(Val::Bool(true)),
                        ir::Quant::All if !yes => return Ok(Val::Bool(false)),
                        _ => n += i64::from(yes),
                    }
                }
                match quant {
                    ir::Quant::Count => Val::Int(n),
                    ir::Quant::Any => Val::Bool(false),
                    ir::Quant::All => Val::Bool(true),
                }
            }
        })
    }

    pub fn field(&self, base: &Val, field: &str) -> Result<Val, RunError> {
        match base {
            Val::Entity(e) => {
                let ent = &self.program.entities[*e as usize];
                match ent.field(field) {
                    Some(v) => self.constant(v),
                    None => Err(RunError::Type(format!(
                        "`{}` has no field `{field}`",
                        ent.name
                    ))),
                }
            }
            other => Err(RunError::Type(format!(
                "{} has no field `{field}`",
                other.show(self.program)
            ))),
        }
    }

    /// The stack's total for these arguments, entry by entry.
    pub fn stack(&self, stack: u32, args: Vec<Val>, ctx: &mut Ctx) -> Result<i64, RunError> {
        let st = &self.program.stacks[stack as usize];
        let mut slots = args;
        slots.resize((st.n_slots as usize).max(st.params.len()), Val::Unit);
        let mut frame = Frame {
            slots,
            effects: Vec::new(),
            proc: u32::MAX,
        };
        let mut total: i64 = 0;
        for (i, en) in st.entries.iter().enumerate() {
            let applies = match &en.when {
                Some(w) => self.bool(w, &mut frame, ctx)?,
                None => true,
            };
            let value = if applies {
                let v = self.int(&en.value, &mut frame, ctx)?;
                let per = match &en.per {
                    Some(p) => self.int(p, &mut frame, ctx)?,
                    None => 1,
                };
                v.checked_mul(per).ok_or(RunError::Overflow)?
            } else {
                0
            };
            ctx.event(|| Event::Modifier {
                stack,
                entry: i,
                applied: applies,
                value,
            });
            total = total.checked_add(value).ok_or(RunError::Overflow)?;
        }
        let raw = total;
        if let Some(lo) = st.clamp.0 {
            total = total.max(lo);
        }
        if let Some(hi) = st.clamp.1 {
            total = total.min(hi);
        }
        ctx.event(|| Event::StackTotal { stack, raw, total });
        Ok(total)
    }

    pub fn lookup(&self, table: u32, keys: &[Val]) -> Result<Val, RunError> {
        let t = &self.program.tables[table as usize];
        let (row_key, col_key) = (keys.first(), keys.get(1));
        let row = t
            .rows
            .iter()
            .find(|r| {
                r.keys
                    .iter()
                    .any(|p| row_key.is_some_and(|k| matches(p, k)))
            })
            .ok_or_else(|| RunError::NoRow {
                table: t.name.clone(),
                key: row_key.map_or("?".into(), |k| k.show(self.program)),
            })?;
        let col = match col_key {
            None => 0,
            Some(k) => t
                .columns
                .iter()
                .position(|c| Val::from_const(c).is_some_and(|cv| cv == *k))
                .ok_or_else(|| RunError::NoRow {
                    table: t.name.clone(),
                    key: format!("column {}", k.show(self.program)),
                })?,
        };
        let cell = row.cells.get(col).ok_or_else(|| RunError::NoRow {
            table: t.name.clone(),
            key: format!("column {}", col + 1),
        })?;
        self.constant(cell)
    }

    fn builtin(
        &self,
        func: Builtin,
        args: &[Expr],
        f: &mut Frame,
        ctx: &mut Ctx,
    ) -> Result<Val, RunError> {
        let pool =
            |this: &Self, e: &Expr, f: &mut Frame, ctx: &mut Ctx| -> Result<Vec<i64>, RunError> {
                match this.expr(e, f, ctx)? {
                    Val::Pool(v) => Ok(v),
                    Val::Int(n) => Ok(vec![n]),
                    other => Err(RunError::Type(format!(
                        "expected a pool, found {}",
                        other.show(this.program)
                    ))),
                }
            };
        Ok(match func {
            Builtin::Min | Builtin::Max => {
                let mut best: Option<i64> = None;
                for a in args {
                    let v = self.int(a, f, ctx)?;
                    best = Some(match best {
                        None => v,
                        Some(b) if func == Builtin::Min => b.min(v),
                        Some(b) => b.max(v),
                    });
                }
                Val::Int(best.unwrap_or(0))
            }
            Builtin::Clamp => {
                let x = self.int(&args[0], f, ctx)?;
                let lo = self.int(&args[1], f, ctx)?;
                let hi = self.int(&args[2], f, ctx)?;
                Val::Int(x.max(lo).min(hi))
            }
            Builtin::Abs => Val::Int(
                self.int(&args[0], f, ctx)?
                    .checked_abs()
                    .ok_or(RunError::Overflow)?,
            ),
            Builtin::DivUp => {
                let a = self.int(&args[0], f, ctx)?;
                let b = self.int(&args[1], f, ctx)?;
                Val::Int(div_up(a, b)?)
            }
            Builtin::Pool => unreachable!("pools are lowered to Expr::Dice"),
            Builtin::Sum => Val::Int(pool(self, &args[0], f, ctx)?.iter().sum()),
            Builtin::Highest | Builtin::Lowest => {
                let k = self.int(&args[0], f, ctx)?;
                let mut p = pool(self, &args[1], f, ctx)?;
                p.sort_unstable();
                if func == Builtin::Highest {
                    p.reverse();
                }
                Val::Int(p.iter().take(k.max(0) as usize).sum())
            }
            Builtin::Successes => {
                let p = pool(self, &args[0], f, ctx)?;
                let t = self.int(&args[1], f, ctx)?;
                Val::Int(p.iter().filter(|x| **x >= t).count() as i64)
            }
            Builtin::Count => {
                let p = pool(self, &args[0], f, ctx)?;
                let r = self.expr(&args[1], f, ctx)?;
                let (lo, hi) = match r {
                    Val::Range(lo, hi) => (lo, hi),
                    Val::Int(n) => (Some(n), Some(n)),
                    other => {
                        return Err(RunError::Type(format!(
                            "`count` needs a range, found {}",
                            other.show(self.program)
                        )));
                    }
                };
                Val::Int(
                    p.iter()
                        .filter(|x| lo.is_none_or(|l| **x >= l) && hi.is_none_or(|h| **x <= h))
                        .count() as i64,
                )
            }
            Builtin::Reroll => {
                let Expr::Const(Value::Die(die)) = &args[0] else {
                    return Err(RunError::Type("`reroll` needs a die".into()));
                };
                let r = self.expr(&args[1], f, ctx)?;
                let first = self.roll(*die, ctx)?;
                let again = match r {
                    Val::Range(lo, hi) => {
                        lo.is_none_or(|l| first >= l) && hi.is_none_or(|h| first <= h)
                    }
                    Val::Int(n) => first == n,
                    _ => false,
                };
                Val::Int(if again { self.roll(*die, ctx)? } else { first })
            }
            Builtin::Range => {
                let lo = self.int(&args[0], f, ctx)?;
                let hi = self.int(&args[1], f, ctx)?;
                Val::Range(Some(lo), Some(hi))
            }
        })
    }
}

/// A pool's size, refused beyond [`MAX_POOL`] (or below zero) with the figure.
pub fn pool_size(n: i64) -> Result<usize, RunError> {
    if (0..=MAX_POOL).contains(&n) {
        Ok(n as usize)
    } else {
        Err(RunError::Limit {
            what: "pool size".into(),
            size: n.unsigned_abs(),
            limit: MAX_POOL as u64,
        })
    }
}

/// A pool used as a number is its sum.
pub fn normalize(v: Val) -> Val {
    match v {
        Val::Pool(p) => Val::Int(p.iter().sum()),
        v => v,
    }
}

pub fn div_up(a: i64, b: i64) -> Result<i64, RunError> {
    if b == 0 {
        return Err(RunError::DivZero);
    }
    let q = a.checked_div(b).ok_or(RunError::Overflow)?;
    Ok(if q * b != a && ((a > 0) == (b > 0)) {
        q + 1
    } else {
        q
    })
}

/// Integer division rounding toward negative infinity.
pub fn div_floor(a: i64, b: i64) -> Result<i64, RunError> {
    if b == 0 {
        return Err(RunError::DivZero);
    }
    let q = a.checked_div(b).ok_or(RunError::Overflow)?;
    Ok(if q * b != a && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// A result must be a value: a `-` table cell (not applicable) is none.
pub(crate) fn applies(v: Val) -> Result<Val, RunError> {
    match &v {
        Val::Sym(s) if &**s == ir::NOT_APPLICABLE => Err(RunError::Type(
            "the result is a table cell marked `-` (not applicable); test it first with `applicable(TABLE[…])`".into(),
        )),
        _ => Ok(v),
    }
}

pub fn binary(op: BinOp, a: &Val, b: &Val) -> Result<Val, RunError> {
    use BinOp as B;
    let ints = || -> Result<(i64, i64), RunError> {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ if [a, b]
                .iter()
                .any(|v| matches!(v, Val::Sym(s) if &**s == ir::NOT_APPLICABLE)) =>
            {
                Err(RunError::Type(
                    "a table cell marked `-` (not applicable) was used as a number; test it first with `applicable(TABLE[…])`".into(),
                ))
            }
            _ => Err(RunError::Type(format!("`{op:?}` needs numbers"))),
        }
    };
    Ok(match op {
        B::Add => {
            let (x, y) = ints()?;
            Val::Int(x.checked_add(y).ok_or(RunError::Overflow)?)
        }
        B::Sub => {
            let (x, y) = ints()?;
            Val::Int(x.checked_sub(y).ok_or(RunError::Overflow)?)
        }
        B::Mul => {
            let (x, y) = ints()?;
            Val::Int(x.checked_mul(y).ok_or(RunError::Overflow)?)
        }
        B::Div => {
            let (x, y) = ints()?;
            Val::Int(div_floor(x, y)?)
        }
        B::Rem => {
            let (x, y) = ints()?;
            if y == 0 {
                return Err(RunError::DivZero);
            }
            Val::Int(x.checked_rem_euclid(y).ok_or(RunError::Overflow)?)
        }
        B::Lt | B::Le | B::Gt | B::Ge => {
            let (x, y) = ints()?;
            Val::Bool(match op {
                B::Lt => x < y,
                B::Le => x <= y,
                B::Gt => x > y,
                _ => x >= y,
            })
        }
        B::Eq | B::Ne => {
            let eq = match (a.as_int(), b.as_int(), a, b) {
                (Some(x), Some(y), Val::Int(_) | Val::Pool(_), Val::Int(_) | Val::Pool(_)) => {
                    x == y
                }
                _ => a.same(b),
            };
            Val::Bool(if op == B::Eq { eq } else { !eq })
        }
        B::In => Val::Bool(match b {
            Val::Range(lo, hi) => a
                .as_int()
                .is_some_and(|x| lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h)),
            Val::List(items) => items.iter().any(|x| x.same(a)),
            _ => false,
        }),
        B::And | B::Or => unreachable!("short-circuit operators are evaluated by the caller"),
    })
}

/// Does a band or row pattern match a value?
pub fn matches(p: &KeyPattern, v: &Val) -> bool {
    match (p, v) {
        (KeyPattern::Any, _) => true,
        (KeyPattern::Range(..), _) => {
            v.as_int().is_some_and(|x| p.matches_int(x)) && !matches!(v, Val::Bool(_))
        }
        (KeyPattern::Symbol(s), Val::Sym(x)) => **s == **x,
        (KeyPattern::Symbol(s), Val::Bool(b)) => s == &b.to_string(),
        (KeyPattern::Symbol(s), Val::Text(x)) => **s == **x,
        _ => false,
    }
}
