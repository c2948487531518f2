//! Code generation: one IR procedure to one Cranelift function.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, InstBuilder, InstructionData, MemFlagsData, Opcode, Signature,
    StackSlotData, StackSlotKind, ValueDef,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::{FuncId, Module};
use sandtable_ir::{self as ir, BinOp, Builtin, Expr, KeyPattern, Stmt, Type, UnOp, Value};

use super::callbacks::*;
use super::{
    E_DIV_ZERO, E_NO_BAND, E_NOTHING, E_OVERFLOW, E_UNKNOWN, P_COUNT, P_HIGHEST, P_LOWEST,
    P_SUCCESSES, P_SUM,
};
use super::{I64, JitCtx, JitProgram, Kind, Meta, Unsupported, kind_of_type};
use super::{ST_ERROR, ST_NAMED, ST_NOTHING, ST_VALUE};
use crate::rng::Dice;
use crate::value::Val;

pub(super) struct Codegen<'a, 'p, 'f> {
    pub(super) jp: &'a mut JitProgram<'p>,
    pub(super) fb: FunctionBuilder<'f>,
    pub(super) jctx: cranelift_codegen::ir::Value,
    pub(super) out: cranelift_codegen::ir::Value,
    pub(super) slots: Vec<Variable>,
    pub(super) slot_kinds: Vec<Option<Kind>>,
    /// Declared types of the slots that are parameters (for fields of pieces).
    pub(super) local_types: Vec<Option<Type>>,
    pub(super) named: bool,
    pub(super) result: Option<Kind>,
    pub(super) meta: &'a [Option<Meta>],
    pub(super) ids: &'a [Option<FuncId>],
    pub(super) callback_sigs: HashMap<usize, cranelift_codegen::ir::SigRef>,
    /// One exit per function for every error (code and detail as block parameters), and one
    /// for failures a callback already reported: fewer blocks to compile than one per site.
    pub(super) error_exit: Option<cranelift_codegen::ir::Block>,
    pub(super) failed_exit: Option<cranelift_codegen::ir::Block>,
    /// The procedure being compiled, and each statement of its body (by address) with its
    /// place in [`ir::stmts_post_order`]: an error names the statement it comes from, as the
    /// interpreter's do.
    pub(super) proc: u32,
    pub(super) stmt_ids: HashMap<usize, i64>,
    /// The innermost statement being compiled (-1: none), passed to the exits by each error
    /// site, so the happy path pays nothing for it.
    pub(super) cur_stmt: i64,
    /// Where `result` and outcomes go.
    pub(super) sink: Sink,
    /// In a sampling loop: the dice stream's position and draw count, kept in variables.
    pub(super) dice_regs: Option<DiceRegs>,
    /// In a sampling loop: where an error leaves the loop (status and value parameters).
    pub(super) error_bail: Option<Block>,
    /// Slots known to hold a constant (arguments fixed for a sampling loop and what follows
    /// from them), by slot.
    pub(super) slot_consts: Vec<Option<i64>>,
    /// Specialise: fold constants, take only the branch a constant condition picks, inline
    /// calls. Only for sampling loops, whose procedure compiled already, so skipping code
    /// cannot make a procedure compile that would not.
    pub(super) fold: bool,
    /// Calls compiled in place so far.
    pub(super) inlined: u32,
    /// Whether the code being emitted follows a `result` or outcome with nothing jumping
    /// in since (so is never run).
    pub(super) dead: bool,
    /// The results an inlined body gave so far: status, and the value when it is constant.
    pub(super) jump_rets: Vec<(i64, Option<i64>)>,
}

/// Where a procedure's result goes.
#[derive(Clone, Copy)]
pub(super) enum Sink {
    /// Stored through `out`, the status returned: a compiled function.
    Return,
    /// A jump to a block taking (status, value): a procedure inlined into its caller.
    Jump(Block),
    /// Counted in the table: the top level of a sampling loop.
    Count(CountSite),
}

/// What counting a result needs, all defined before the loop (or its header) starts.
#[derive(Clone, Copy)]
pub(super) struct CountSite {
    pub(super) table: cranelift_codegen::ir::Value,
    pub(super) symbols: cranelift_codegen::ir::Value,
    pub(super) lo: cranelift_codegen::ir::Value,
    pub(super) len: cranelift_codegen::ir::Value,
    pub(super) nothing_at: cranelift_codegen::ir::Value,
    /// Symbols the table has a count for (every symbol the program had when compiled).
    pub(super) n_symbols: i64,
    pub(super) header: Block,
    /// The loop's counter (a parameter of `header`).
    pub(super) i: cranelift_codegen::ir::Value,
    /// Leaves the loop with a result it cannot count.
    pub(super) bail: Block,
}

/// The dice stream's hot state held in variables during a loop; written back to the [`Dice`]
/// around every callback and when the loop returns.
#[derive(Clone, Copy)]
pub(super) struct DiceRegs {
    pub(super) dptr: cranelift_codegen::ir::Value,
    pub(super) pos: Variable,
    pub(super) draws: Variable,
}

pub(super) type V = cranelift_codegen::ir::Value;

pub(super) fn unsupported<T>(what: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(what.into()))
}

impl<'a, 'p, 'f> Codegen<'a, 'p, 'f> {
    pub(super) fn konst(&mut self, n: i64) -> V {
        self.fb.ins().iconst(I64, n)
    }

    /// Call a runtime callback taking `(ctx, args…)` and returning an i64.
    pub(super) fn callback(&mut self, f: *const u8, args: &[V]) -> V {
        let n = args.len();
        let sig = match self.callback_sigs.get(&n) {
            Some(s) => *s,
            None => {
                let mut s = Signature::new(self.fb.func.signature.call_conv);
                for _ in 0..=n {
                    s.params.push(AbiParam::new(I64));
                }
                s.returns.push(AbiParam::new(I64));
                let r = self.fb.import_signature(s);
                self.callback_sigs.insert(n, r);
                r
            }
        };
        let callee = self.fb.ins().iconst(I64, f as i64);
        let mut all = vec![self.jctx];
        all.extend_from_slice(args);
        self.flush_dice();
        let call = self.fb.ins().call_indirect(sig, callee, &all);
        let r = self.fb.inst_results(call)[0];
        self.reload_dice();
        r
    }

    /// Write the dice state kept in variables back to the [`Dice`] (before the runtime reads
    /// it).
    pub(super) fn flush_dice(&mut self) {
        if let Some(d) = self.dice_regs {
            let flags = MemFlagsData::new();
            let pos = self.fb.use_var(d.pos);
            let draws = self.fb.use_var(d.draws);
            self.fb.ins().store(flags, pos, d.dptr, Dice::POS_OFFSET);
            self.fb
                .ins()
                .store(flags, draws, d.dptr, Dice::DRAWS_OFFSET);
        }
    }

    /// Read the dice state back into its variables (after the runtime may have drawn).
    pub(super) fn reload_dice(&mut self) {
        if let Some(d) = self.dice_regs {
            let flags = MemFlagsData::new();
            let pos = self.fb.ins().load(I64, flags, d.dptr, Dice::POS_OFFSET);
            let draws = self.fb.ins().load(I64, flags, d.dptr, Dice::DRAWS_OFFSET);
            self.fb.def_var(d.pos, pos);
            self.fb.def_var(d.draws, draws);
        }
    }

    /// The constant `v` is, when specialising and it is one.
    pub(super) fn const_of(&self, v: V) -> Option<i64> {
        if !self.fold {
            return None;
        }
        let dfg = &self.fb.func.dfg;
        let v = dfg.resolve_aliases(v);
        match dfg.value_def(v) {
            ValueDef::Result(inst, 0) => match dfg.insts[inst] {
                InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm,
                } => Some(imm.bits()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Set a slot (its variable, kind and, when it is one, constant).
    pub(super) fn set_slot(&mut self, slot: usize, v: V, k: Kind) {
        let c = self.const_of(v);
        self.fb.def_var(self.slots[slot], v);
        self.slot_kinds[slot] = Some(k);
        if self.slot_consts.len() <= slot {
            self.slot_consts.resize(slot + 1, None);
        }
        self.slot_consts[slot] = c;
    }

    /// `a cc b` as 0 or 1, folded when both are known.
    pub(super) fn cmp(&mut self, cc: IntCC, a: V, b: V) -> V {
        if let (Some(x), Some(y)) = (self.const_of(a), self.const_of(b)) {
            return self.konst(i64::from(int_cc(cc, x, y)));
        }
        let c = self.fb.ins().icmp(cc, a, b);
        self.bool_of(c)
    }

    /// `a cc imm` as 0 or 1, folded when `a` is known.
    pub(super) fn cmp_imm(&mut self, cc: IntCC, a: V, imm: i64) -> V {
        if let Some(x) = self.const_of(a) {
            return self.konst(i64::from(int_cc(cc, x, imm)));
        }
        let c = self.fb.ins().icmp_imm_s(cc, a, imm);
        self.bool_of(c)
    }

    /// Bitwise and/or/xor of two 0-or-1 values, folded when both are known.
    pub(super) fn logic(&mut self, op: char, a: V, b: V) -> V {
        if let (Some(x), Some(y)) = (self.const_of(a), self.const_of(b)) {
            return self.konst(match op {
                '&' => x & y,
                '|' => x | y,
                _ => x ^ y,
            });
        }
        match op {
            '&' => self.fb.ins().band(a, b),
            '|' => self.fb.ins().bor(a, b),
            _ => self.fb.ins().bxor(a, b),
        }
    }

    /// Signed min (`max == false`) or max, folded when both are known.
    pub(super) fn min_max(&mut self, max: bool, a: V, b: V) -> V {
        if let (Some(x), Some(y)) = (self.const_of(a), self.const_of(b)) {
            return self.konst(if max { x.max(y) } else { x.min(y) });
        }
        if max {
            self.fb.ins().smax(a, b)
        } else {
            self.fb.ins().smin(a, b)
        }
    }

    /// A face index in `0..n`, drawn inline from the dice buffer: the generator's next word
    /// with Lemire's multiply-and-reject, exactly as [`Dice::index`] does. An empty buffer,
    /// scripted dice or a rejected word take the callback, which continues the same stream.
    pub(super) fn inline_index(&mut self, n: u32) -> V {
        let flags = MemFlagsData::new();
        let regs = self.dice_regs;
        let dptr = match regs {
            Some(d) => d.dptr,
            None => self.fb.ins().load(
                I64,
                flags,
                self.jctx,
                std::mem::offset_of!(JitCtx, dice) as i32,
            ),
        };
        let pos = match regs {
            Some(d) => self.fb.use_var(d.pos),
            None => self.fb.ins().load(I64, flags, dptr, Dice::POS_OFFSET),
        };
        let fast = self.fb.create_block();
        let slow = self.fb.create_block();
        let join = self.fb.create_block();
        // A block parameter, not a variable: one variable per roll would cost a map over
        // every block of the function each.
        let result = self.fb.append_block_param(join, I64);
        let has = self.fb.ins().icmp_imm_u(
            IntCC::UnsignedLessThan,
            pos,
            crate::rng::BUFFER_WORDS as i64,
        );
        self.fb.ins().brif(has, fast, &[], slow, &[]);

        self.enter(fast);
        // `pos` is below BUFFER_WORDS here, so the word read is inside `buf`.
        let off = self.fb.ins().ishl_imm_s(pos, 2);
        let addr = self.fb.ins().iadd(dptr, off);
        let word = self.fb.ins().uload32(flags, addr, Dice::BUF_OFFSET);
        let next = self.fb.ins().iadd_imm_s(pos, 1);
        match regs {
            Some(d) => self.fb.def_var(d.pos, next),
            None => {
                self.fb.ins().store(flags, next, dptr, Dice::POS_OFFSET);
            }
        }
        let m = self.fb.ins().imul_imm_s(word, i64::from(n));
        let threshold = n.wrapping_neg() % n;
        let accept = self.fb.create_block();
        if threshold > 0 {
            let low = self.fb.ins().band_imm_s(m, 0xffff_ffff);
            let rejected =
                self.fb
                    .ins()
                    .icmp_imm_u(IntCC::UnsignedLessThan, low, i64::from(threshold));
            self.fb.ins().brif(rejected, slow, &[], accept, &[]);
        } else {
            self.fb.ins().jump(accept, &[]);
        }
        self.enter(accept);
        let idx = self.fb.ins().ushr_imm_s(m, 32);
        match regs {
            Some(d) => {
                let draws = self.fb.use_var(d.draws);
                let draws = self.fb.ins().iadd_imm_s(draws, 1);
                self.fb.def_var(d.draws, draws);
            }
            None => {
                let draws = self.fb.ins().load(I64, flags, dptr, Dice::DRAWS_OFFSET);
                let draws = self.fb.ins().iadd_imm_s(draws, 1);
                self.fb.ins().store(flags, draws, dptr, Dice::DRAWS_OFFSET);
            }
        }
        self.fb.ins().jump(join, &[BlockArg::Value(idx)]);

        self.enter(slow);
        let nv = self.konst(i64::from(n));
        let idx = self.callback(jit_index as *const u8, &[nv]);
        self.fb.ins().jump(join, &[BlockArg::Value(idx)]);

        self.enter(join);
        result
    }

    /// After a fallible callback: leave with an error status when it failed.
    pub(super) fn check_failed(&mut self) {
        let failed = self.fb.ins().load(I64, MemFlagsData::new(), self.jctx, 0);
        let bad = match self.failed_exit {
            Some(b) => b,
            None => {
                let b = self.fb.create_block();
                self.fb.append_block_param(b, I64);
                self.fb.append_block_param(b, I64);
                self.failed_exit = Some(b);
                b
            }
        };
        let ok = self.fb.create_block();
        let at = self.konst(self.cur_stmt);
        let proc = self.konst(i64::from(self.proc));
        self.fb.ins().brif(
            failed,
            bad,
            &[BlockArg::Value(at), BlockArg::Value(proc)],
            ok,
            &[],
        );
        self.enter(ok);
    }

    /// When `cond` holds: report an error through `jit_fail` and return the error status.
    pub(super) fn fail_if(&mut self, cond: V, code: i64, detail: V) {
        if self.const_of(cond) == Some(0) {
            return;
        }
        let exit = match self.error_exit {
            Some(b) => b,
            None => {
                let b = self.fb.create_block();
                for _ in 0..4 {
                    self.fb.append_block_param(b, I64);
                }
                self.error_exit = Some(b);
                b
            }
        };
        let ok = self.fb.create_block();
        let c = self.konst(code);
        let at = self.konst(self.cur_stmt);
        let proc = self.konst(i64::from(self.proc));
        self.fb.ins().brif(
            cond,
            exit,
            &[
                BlockArg::Value(c),
                BlockArg::Value(detail),
                BlockArg::Value(at),
                BlockArg::Value(proc),
            ],
            ok,
            &[],
        );
        self.enter(ok);
    }

    /// Fill in the shared exits, after the body.
    pub(super) fn finish_exits(&mut self) {
        if let Some(b) = self.error_exit {
            self.enter(b);
            let (code, detail, at, proc) = {
                let p = self.fb.block_params(b);
                (p[0], p[1], p[2], p[3])
            };
            self.callback(jit_fail as *const u8, &[code, detail, proc, at]);
            self.leave_with_error();
        }
        if let Some(b) = self.failed_exit {
            self.enter(b);
            let (at, proc) = {
                let p = self.fb.block_params(b);
                (p[0], p[1])
            };
            self.callback(jit_place as *const u8, &[proc, at]);
            self.leave_with_error();
        }
    }

    /// Return the error status, or in a sampling loop leave the loop with it.
    fn leave_with_error(&mut self) {
        let st = self.konst(ST_ERROR);
        match self.error_bail {
            Some(bail) => {
                let zero = self.konst(0);
                self.fb
                    .ins()
                    .jump(bail, &[BlockArg::Value(st), BlockArg::Value(zero)]);
            }
            None => {
                self.fb.ins().return_(&[st]);
            }
        }
    }

    /// Continue in `b`, reached from code already emitted. Code generation makes no back
    /// edges, so every predecessor of `b` is known by then and it is sealed at once (the
    /// entry and the dead blocks after a return are left to the end): each variable read then
    /// resolves by walking up to its definition. Left unsealed to the end, every read in a
    /// nested block put a parameter on each enclosing block, memory quadratic in the nesting
    /// (20,000 nested `if`s took gigabytes).
    pub(super) fn enter(&mut self, b: cranelift_codegen::ir::Block) {
        self.dead = false;
        self.fb.switch_to_block(b);
        self.fb.seal_block(b);
    }

    pub(super) fn bool_of(&mut self, c: V) -> V {
        self.fb.ins().uextend(I64, c)
    }

    pub(super) fn block(&mut self, stmts: &[Stmt]) -> Result<(), Unsupported> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Store the result, return `status`, and continue in a fresh (unreachable) block so
    /// later code has somewhere to go.
    pub(super) fn ret(&mut self, status: i64, v: V) {
        match self.sink {
            Sink::Return => {
                self.fb.ins().store(MemFlagsData::new(), v, self.out, 0);
                let st = self.konst(status);
                self.fb.ins().return_(&[st]);
            }
            Sink::Jump(b) => {
                if !self.dead {
                    let c = self.const_of(v);
                    self.jump_rets.push((status, c));
                }
                let st = self.konst(status);
                self.fb
                    .ins()
                    .jump(b, &[BlockArg::Value(st), BlockArg::Value(v)]);
            }
            Sink::Count(site) => self.count(site, status, v),
        }
        // Not sealed: a sealed block without predecessors reads as unreachable, and the
        // code after a `result` would be left without its closing return.
        let dead = self.fb.create_block();
        self.fb.switch_to_block(dead);
        self.dead = true;
    }

    /// Count one result of a sampling loop and go on with the next resolution; a result the
    /// table has no place for leaves the loop.
    fn count(&mut self, site: CountSite, status: i64, v: V) {
        let st = self.konst(status);
        let (idx, inside) = match status {
            ST_NAMED => match self.const_of(v) {
                Some(id) if (0..site.n_symbols).contains(&id) => (v, None),
                _ => {
                    let ok = self.fb.ins().icmp(IntCC::UnsignedLessThan, v, site.symbols);
                    (v, Some(ok))
                }
            },
            ST_VALUE => {
                // Inside exactly when lo <= v < lo + len (wrapping difference compared
                // unsigned).
                let off = self.fb.ins().isub(v, site.lo);
                let ok = self.fb.ins().icmp(IntCC::UnsignedLessThan, off, site.len);
                (self.fb.ins().iadd(site.symbols, off), Some(ok))
            }
            _ => (site.nothing_at, None),
        };
        if let Some(ok) = inside {
            let yes = self.fb.create_block();
            self.fb.ins().brif(
                ok,
                yes,
                &[],
                site.bail,
                &[BlockArg::Value(st), BlockArg::Value(v)],
            );
            self.enter(yes);
        }
        let flags = MemFlagsData::new();
        let addr = match self.const_of(idx) {
            Some(k) => self.fb.ins().iadd_imm_s(site.table, k * 8),
            None => {
                let off = self.fb.ins().ishl_imm_s(idx, 3);
                self.fb.ins().iadd(site.table, off)
            }
        };
        let c0 = self.fb.ins().load(I64, flags, addr, 0);
        let c1 = self.fb.ins().iadd_imm_s(c0, 1);
        self.fb.ins().store(flags, c1, addr, 0);
        let i1 = self.fb.ins().iadd_imm_s(site.i, 1);
        self.fb.ins().jump(site.header, &[BlockArg::Value(i1)]);
    }

    pub(super) fn return_value(&mut self, v: V, k: Kind) -> Result<(), Unsupported> {
        match self.result {
            None => self.result = Some(k),
            Some(r) if r == k => {}
            Some(_) => return unsupported("results of different kinds"),
        }
        // A symbol result is a named outcome, as in the interpreter.
        if k == Kind::Sym {
            self.named = true;
            self.ret(ST_NAMED, v);
        } else {
            self.ret(ST_VALUE, v);
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<(), Unsupported> {
        let outer = self.cur_stmt;
        if let Some(i) = self.stmt_ids.get(&std::ptr::from_ref(s).addr()) {
            self.cur_stmt = *i;
        }
        let r = self.stmt_inner(s);
        self.cur_stmt = outer;
        r
    }

    fn stmt_inner(&mut self, s: &Stmt) -> Result<(), Unsupported> {
        match s {
            Stmt::Let { slot, value } => {
                let (v, k) = self.expr(value)?;
                self.set_slot(*slot as usize, v, k);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let (c, k) = self.expr(cond)?;
                if k != Kind::Bool {
                    return unsupported("`if` on a non-boolean");
                }
                if let Some(c) = self.const_of(c) {
                    return self.block(if c != 0 { then } else { otherwise });
                }
                let tb = self.fb.create_block();
                let eb = self.fb.create_block();
                let join = self.fb.create_block();
                self.fb.ins().brif(c, tb, &[], eb, &[]);
                self.enter(tb);
                self.block(then)?;
                self.fb.ins().jump(join, &[]);
                self.enter(eb);
                self.block(otherwise)?;
                self.fb.ins().jump(join, &[]);
                self.enter(join);
            }
            Stmt::Bands {
                scrutinee, arms, ..
            } => self.bands(scrutinee, arms)?,
            Stmt::Result(e) => {
                let (v, k) = self.expr(e)?;
                self.return_value(v, k)?;
            }
            Stmt::Outcome(o) => {
                self.named = true;
                let id = self.jp.intern(o);
                let v = self.konst(id);
                self.ret(ST_NAMED, v);
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::Effect(_) => return unsupported("effects"),
            Stmt::Choose { .. } => return unsupported("choice points"),
            Stmt::For { .. } | Stmt::Repeat { .. } => return unsupported("loops"),
            Stmt::Require(_) => return unsupported("`require`"),
        }
        Ok(())
    }

    pub(super) fn pattern_test(&mut self, p: &KeyPattern, v: V, k: Kind) -> Result<V, Unsupported> {
        Ok(match p {
            KeyPattern::Any => self.konst(1),
            KeyPattern::Range(lo, hi) => {
                // The interpreter never matches a non-number against a numeric pattern.
                if k != Kind::Int {
                    return Ok(self.konst(0));
                }
                let mut acc = self.konst(1);
                if let Some(l) = lo {
                    let c = self.cmp_imm(IntCC::SignedGreaterThanOrEqual, v, *l);
                    acc = self.logic('&', acc, c);
                }
                if let Some(h) = hi {
                    let c = self.cmp_imm(IntCC::SignedLessThanOrEqual, v, *h);
                    acc = self.logic('&', acc, c);
                }
                acc
            }
            KeyPattern::Symbol(s) => match k {
                Kind::Sym => {
                    let id = self.jp.intern(s);
                    self.cmp_imm(IntCC::Equal, v, id)
                }
                Kind::Bool if s == "true" || s == "false" => {
                    self.cmp_imm(IntCC::Equal, v, i64::from(s == "true"))
                }
                _ => self.konst(0),
            },
            KeyPattern::Unknown => self.konst(0),
        })
    }

    pub(super) fn bands(&mut self, scrutinee: &Expr, arms: &[ir::Arm]) -> Result<(), Unsupported> {
        let (v, k) = self.expr(scrutinee)?;
        if !matches!(k, Kind::Int | Kind::Bool | Kind::Sym) {
            return unsupported("bands over pieces or sides");
        }
        let join = self.fb.create_block();
        for arm in arms {
            let mut hit = self.konst(0);
            for p in &arm.patterns {
                let t = self.pattern_test(p, v, k)?;
                hit = self.logic('|', hit, t);
            }
            match self.const_of(hit) {
                Some(0) => continue,
                Some(_) => {
                    // This arm is taken; the later ones and the error cannot be reached.
                    self.block(&arm.body)?;
                    self.arm_end(arm)?;
                    self.fb.ins().jump(join, &[]);
                    self.enter(join);
                    return Ok(());
                }
                None => {}
            }
            let body = self.fb.create_block();
            let next = self.fb.create_block();
            self.fb.ins().brif(hit, body, &[], next, &[]);
            self.enter(body);
            self.block(&arm.body)?;
            self.arm_end(arm)?;
            self.fb.ins().jump(join, &[]);
            self.enter(next);
        }
        // No band matched: the interpreter's error.
        let one = self.konst(1);
        self.fail_if(one, E_NO_BAND, v);
        self.fb.ins().jump(join, &[]);
        self.enter(join);
        Ok(())
    }

    /// An arm's outcome or value, after its body.
    fn arm_end(&mut self, arm: &ir::Arm) -> Result<(), Unsupported> {
        if let Some(o) = &arm.outcome {
            self.named = true;
            let id = self.jp.intern(o);
            let c = self.konst(id);
            self.ret(ST_NAMED, c);
        } else if let Some(e) = &arm.value {
            let (r, rk) = self.expr(e)?;
            self.return_value(r, rk)?;
        }
        Ok(())
    }

    pub(super) fn constant(&mut self, v: &Value) -> Result<(V, Kind), Unsupported> {
        let val = match v {
            Value::Unknown(id) => match self.jp.assumptions.values.get(id) {
                Some(a) => a.clone(),
                None => {
                    // Reaching it is an error, as in the interpreter.
                    let d = self.konst(i64::from(*id));
                    let one = self.konst(1);
                    self.fail_if(one, E_UNKNOWN, d);
                    return Ok((self.konst(0), Kind::Int));
                }
            },
            other => Val::from_const(other).ok_or_else(|| Unsupported("constant".into()))?,
        };
        let (n, k) = self
            .jp
            .encode(&val)
            .ok_or_else(|| Unsupported("a constant the JIT does not represent".into()))?;
        Ok((self.konst(n), k))
    }

    pub(super) fn int(&mut self, e: &Expr) -> Result<V, Unsupported> {
        let (v, k) = self.expr(e)?;
        match k {
            Kind::Int | Kind::Bool => Ok(v),
            _ => unsupported("arithmetic on a non-number"),
        }
    }

    pub(super) fn checked(&mut self, op: BinOp, a: V, b: V) -> V {
        if let (Some(x), Some(y)) = (self.const_of(a), self.const_of(b)) {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                _ => x.checked_mul(y),
            };
            if let Some(r) = r {
                return self.konst(r);
            }
        }
        let (r, of) = match op {
            BinOp::Add => self.fb.ins().sadd_overflow(a, b),
            BinOp::Sub => self.fb.ins().ssub_overflow(a, b),
            _ => self.fb.ins().smul_overflow(a, b),
        };
        let zero = self.konst(0);
        self.fail_if(of, E_OVERFLOW, zero);
        r
    }

    /// `x / y` and `x % y` as the interpreter computes them (floor division, Euclidean rest).
    pub(super) fn divide(&mut self, op: BinOp, x: V, y: V) -> V {
        let q = self.divide_trunc(x, y);
        let r = self.fb.ins().srem(x, y);
        match op {
            BinOp::Div => {
                let rnz = self.fb.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let xneg = self.fb.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
                let yneg = self.fb.ins().icmp_imm_s(IntCC::SignedLessThan, y, 0);
                let diff = self.fb.ins().bxor(xneg, yneg);
                let adj = self.fb.ins().band(rnz, diff);
                let adj = self.bool_of(adj);
                self.fb.ins().isub(q, adj)
            }
            _ => {
                let neg = self.fb.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
                let ay = self.fb.ins().iabs(y);
                let plus = self.fb.ins().iadd(r, ay);
                self.fb.ins().select(neg, plus, r)
            }
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<(V, Kind), Unsupported> {
        Ok(match e {
            Expr::Const(v) => self.constant(v)?,
            Expr::Local(s) => {
                let k = self
                    .slot_kinds
                    .get(*s as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| Unsupported("a slot read before it is set".into()))?;
                match self.slot_consts.get(*s as usize).copied().flatten() {
                    Some(c) if self.fold => (self.konst(c), k),
                    _ => (self.fb.use_var(self.slots[*s as usize]), k),
                }
            }
            Expr::Roll(d) => {
                let faces = &self.jp.faces[*d as usize];
                let (len, ptr) = (faces.len(), faces.as_ptr());
                let standard = faces.iter().enumerate().all(|(i, f)| *f == i as i64 + 1);
                if len == 0 {
                    // A die the book never describes: the interpreter's error, via the callback.
                    let die = self.konst(i64::from(*d));
                    let v = self.callback(jit_roll as *const u8, &[die]);
                    self.check_failed();
                    return Ok((v, Kind::Int));
                }
                let idx = self.inline_index(len as u32);
                if standard {
                    (self.fb.ins().iadd_imm_s(idx, 1), Kind::Int)
                } else {
                    // The face table outlives the code: both belong to this `JitProgram`.
                    let base = self.konst(ptr as i64);
                    let off = self.fb.ins().imul_imm_s(idx, 8);
                    let addr = self.fb.ins().iadd(base, off);
                    (
                        self.fb.ins().load(I64, MemFlagsData::new(), addr, 0),
                        Kind::Int,
                    )
                }
            }
            Expr::Dice { count, die } => {
                let n = self.int(count)?;
                let lo = self.konst(i64::MIN);
                let hi = self.konst(i64::MAX);
                (self.pool_fold(n, *die, lo, hi, true), Kind::Int)
            }
            Expr::Unary { op, operand } => {
                let (v, k) = self.expr(operand)?;
                match op {
                    UnOp::Neg => {
                        if !matches!(k, Kind::Int | Kind::Bool) {
                            return unsupported("negating a non-number");
                        }
                        let zero = self.konst(0);
                        let r = self.checked(BinOp::Sub, zero, v);
                        (r, Kind::Int)
                    }
                    UnOp::Not => {
                        if k != Kind::Bool {
                            return unsupported("`not` of a non-boolean");
                        }
                        let one = self.konst(1);
                        (self.logic('^', v, one), Kind::Bool)
                    }
                }
            }
            Expr::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let (c, ck) = self.expr(cond)?;
                if ck != Kind::Bool {
                    return unsupported("`if` on a non-boolean");
                }
                if let Some(c) = self.const_of(c) {
                    return self.expr(if c != 0 { then } else { otherwise });
                }
                // The value reaches the join as a block parameter, not a variable: the SSA
                // builder keeps a map over blocks per variable, so one variable per nested
                // `if` made memory quadratic in the nesting.
                let tb = self.fb.create_block();
                let eb = self.fb.create_block();
                let join = self.fb.create_block();
                let joined = self.fb.append_block_param(join, I64);
                self.fb.ins().brif(c, tb, &[], eb, &[]);
                self.enter(tb);
                let (a, ak) = self.expr(then)?;
                self.fb.ins().jump(join, &[BlockArg::Value(a)]);
                self.enter(eb);
                let (b, bk) = self.expr(otherwise)?;
                self.fb.ins().jump(join, &[BlockArg::Value(b)]);
                self.enter(join);
                if ak != bk {
                    return unsupported("branches of different kinds");
                }
                (joined, ak)
            }
            Expr::Builtin { func, args } => self.builtin(*func, args)?,
            Expr::Stack { stack, args } => (self.stack(*stack, args)?, Kind::Int),
            Expr::Lookup { table, keys } => {
                let t = &self.jp.program.tables[*table as usize];
                let cell_kind =
                    table_kind(t).ok_or_else(|| Unsupported("a table with mixed cells".into()))?;
                if keys.len() > 2 {
                    return unsupported("tables with more than two keys");
                }
                let mut raw = Vec::new();
                let mut known = Vec::new();
                for k in keys {
                    let (v, kk) = self.expr(k)?;
                    if let Some(c) = self.const_of(v) {
                        known.push(super::decode(c, kk, &self.jp.symbols));
                    }
                    let kc = self.konst(kind_code(kk));
                    raw.push((v, kc));
                }
                // Keys known when compiling: the cell itself (a look-up that fails is left
                // to run, so its error comes at its place among the draws).
                if known.len() == keys.len() {
                    let interp = crate::interp::Interp::new(self.jp.program, self.jp.assumptions);
                    if let Ok(cell) = interp.lookup(*table, &known)
                        && let Some((n, k)) = self.jp.encode(&cell)
                        && k == cell_kind
                    {
                        return Ok((self.konst(n), k));
                    }
                }
                let tid = self.konst(i64::from(*table));
                let n = self.konst(keys.len() as i64);
                let zero = self.konst(0);
                let (k0, c0) = raw.first().copied().unwrap_or((zero, zero));
                let (k1, c1) = raw.get(1).copied().unwrap_or((zero, zero));
                let v = self.callback(jit_lookup as *const u8, &[tid, n, k0, c0, k1, c1]);
                self.check_failed();
                (v, cell_kind)
            }
            Expr::Field { base, field } => self.field(base, field)?,
            Expr::Call { proc, args } if self.fold => self.inline_call(*proc, args)?,
            Expr::Call { proc, args } => {
                let Some(Some(m)) = self.meta.get(*proc as usize).map(|m| m.as_ref()) else {
                    return unsupported("a call of a procedure that is not compiled");
                };
                let (params, kind) = match (m.result, m.named) {
                    (None, _) => (m.params.clone(), Kind::Sym),
                    (Some(k), false) => (m.params.clone(), k),
                    (Some(Kind::Sym), true) => (m.params.clone(), Kind::Sym),
                    (Some(_), true) => {
                        return unsupported(
                            "a call of a procedure that gives both outcomes and values",
                        );
                    }
                };
                let callee_id = self.ids[*proc as usize]
                    .ok_or_else(|| Unsupported("callee not compiled".into()))?;
                let slot = self.fb.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    (8 * params.len() + 8) as u32,
                    3,
                ));
                if args.len() != params.len() {
                    return unsupported("a call with a different number of arguments");
                }
                for (i, (a, pk)) in args.iter().zip(&params).enumerate() {
                    let (v, k) = self.expr(a)?;
                    if k != *pk {
                        return unsupported("an argument of another kind than the parameter");
                    }
                    self.fb.ins().stack_store(I64, v, slot, (8 * i) as i32);
                }
                let argp = self.fb.ins().stack_addr(I64, slot, 0);
                let outp = self
                    .fb
                    .ins()
                    .stack_addr(I64, slot, (8 * params.len()) as i32);
                let module = self.jp.module.as_mut().expect("module present");
                let fref = module.declare_func_in_func(callee_id, self.fb.func);
                let call = self.fb.ins().call(fref, &[self.jctx, argp, outp]);
                let st = self.fb.inst_results(call)[0];
                let err = self.fb.ins().icmp_imm_s(IntCC::Equal, st, ST_ERROR);
                let bad = self.fb.create_block();
                let ok = self.fb.create_block();
                self.fb.ins().brif(err, bad, &[], ok, &[]);
                self.enter(bad);
                let e = self.konst(ST_ERROR);
                self.fb.ins().return_(&[e]);
                self.enter(ok);
                let nothing = self.fb.ins().icmp_imm_s(IntCC::Equal, st, ST_NOTHING);
                let zero = self.konst(0);
                self.fail_if(nothing, E_NOTHING, zero);
                let v = self
                    .fb
                    .ins()
                    .stack_load(I64, I64, slot, (8 * params.len()) as i32);
                (v, kind)
            }
            Expr::Host { func, .. } => return unsupported(format!("engine function `{func}`")),
            Expr::List(_) => return unsupported("lists"),
            Expr::Quant {
                quant,
                slot,
                list,
                cond,
            } => self.quantifier(*quant, *slot, list, cond)?,
        })
    }

    /// A call with the callee's body compiled in place: its arguments (constants stay
    /// constants), its results jumping to the code after the call, its errors placed in the
    /// callee as its own compiled function places them.
    fn inline_call(&mut self, callee: u32, args: &[Expr]) -> Result<(V, Kind), Unsupported> {
        let Some(Some(m)) = self.meta.get(callee as usize).map(|m| m.as_ref()) else {
            return unsupported("a call of a procedure that is not compiled");
        };
        let kind = match (m.result, m.named) {
            (None, _) | (Some(Kind::Sym), true) => Kind::Sym,
            (Some(k), false) => k,
            (Some(_), true) => {
                return unsupported("a call of a procedure that gives both outcomes and values");
            }
        };
        let params = m.params.clone();
        if args.len() != params.len() {
            return unsupported("a call with a different number of arguments");
        }
        self.inlined += 1;
        if self.inlined > MAX_INLINED {
            return unsupported("too many calls to compile in place");
        }
        let mut vals = Vec::with_capacity(args.len());
        for (a, pk) in args.iter().zip(&params) {
            let (v, k) = self.expr(a)?;
            if k != *pk {
                return unsupported("an argument of another kind than the parameter");
            }
            vals.push((v, k));
        }
        let program = self.jp.program;
        let def = &program.procs[callee as usize];
        let join = self.fb.create_block();
        let status = self.fb.append_block_param(join, I64);
        let value = self.fb.append_block_param(join, I64);

        let saved = (
            std::mem::take(&mut self.slots),
            std::mem::take(&mut self.slot_kinds),
            std::mem::take(&mut self.slot_consts),
            std::mem::replace(
                &mut self.local_types,
                def.params.iter().map(|p| Some(p.ty.clone())).collect(),
            ),
            std::mem::replace(
                &mut self.stmt_ids,
                ir::stmts_post_order(&def.body)
                    .into_iter()
                    .enumerate()
                    .map(|(i, s)| (std::ptr::from_ref(s).addr(), i as i64))
                    .collect(),
            ),
            std::mem::replace(&mut self.cur_stmt, -1),
            std::mem::replace(&mut self.proc, callee),
            std::mem::take(&mut self.result),
            std::mem::take(&mut self.named),
            std::mem::replace(&mut self.sink, Sink::Jump(join)),
            std::mem::take(&mut self.jump_rets),
        );
        for _ in 0..(def.n_slots as usize).max(params.len()) {
            let var = self.fb.declare_var(I64);
            let zero = self.konst(0);
            self.fb.def_var(var, zero);
            self.slots.push(var);
            self.slot_kinds.push(None);
        }
        for (i, (v, k)) in vals.into_iter().enumerate() {
            self.set_slot(i, v, k);
        }
        let r = self.block(&def.body);
        if r.is_ok() && !self.fb.is_unreachable() {
            let zero = self.konst(0);
            self.ret(ST_NOTHING, zero);
        }
        let rets = std::mem::take(&mut self.jump_rets);
        (
            self.slots,
            self.slot_kinds,
            self.slot_consts,
            self.local_types,
            self.stmt_ids,
            self.cur_stmt,
            self.proc,
            self.result,
            self.named,
            self.sink,
            self.jump_rets,
        ) = saved;
        r?;
        self.enter(join);
        // One way out, with a known value: the call is that constant.
        if let [(st, Some(c))] = rets[..]
            && st != ST_NOTHING
        {
            return Ok((self.konst(c), kind));
        }
        let nothing = self.fb.ins().icmp_imm_s(IntCC::Equal, status, ST_NOTHING);
        let zero = self.konst(0);
        self.fail_if(nothing, E_NOTHING, zero);
        Ok((value, kind))
    }

    /// `count`/`any`/`all` over a list known when compiling (a list or range of constants),
    /// unrolled; any other list is the interpreter's.
    fn quantifier(
        &mut self,
        quant: ir::Quant,
        slot: u32,
        list: &Expr,
        cond: &Expr,
    ) -> Result<(V, Kind), Unsupported> {
        // Every item first, then the conditions, as the interpreter builds the list first.
        let mut items: Vec<(V, Kind)> = Vec::new();
        match list {
            Expr::Const(Value::List(v)) if v.len() <= 64 => {
                for c in v {
                    items.push(self.constant(c)?);
                }
            }
            Expr::Const(Value::Range(Some(a), Some(b))) if b.saturating_sub(*a) <= 64 => {
                for n in *a..=*b {
                    items.push((self.konst(n), Kind::Int));
                }
            }
            Expr::List(v) if v.len() <= 64 => {
                for x in v {
                    items.push(self.expr(x)?);
                }
            }
            _ => return unsupported("a list not known when compiling"),
        }
        let var = self.fb.declare_var(I64);
        let init = self.konst(match quant {
            ir::Quant::Count | ir::Quant::Any => 0,
            ir::Quant::All => 1,
        });
        self.fb.def_var(var, init);
        let join = self.fb.create_block();
        for (v, k) in items {
            self.set_slot(slot as usize, v, k);
            let (c, ck) = self.expr(cond)?;
            if ck != Kind::Bool {
                return unsupported("a quantifier over a non-boolean condition");
            }
            match quant {
                ir::Quant::Count => {
                    let n = self.fb.use_var(var);
                    let n = self.fb.ins().iadd(n, c);
                    self.fb.def_var(var, n);
                }
                // Stop at the first item that decides, as the interpreter does: the dice of
                // later conditions are not rolled.
                ir::Quant::Any | ir::Quant::All => {
                    self.fb.def_var(var, c);
                    let next = self.fb.create_block();
                    if quant == ir::Quant::Any {
                        self.fb.ins().brif(c, join, &[], next, &[]);
                    } else {
                        self.fb.ins().brif(c, next, &[], join, &[]);
                    }
                    self.enter(next);
                }
            }
        }
        self.fb.ins().jump(join, &[]);
        self.enter(join);
        let out = self.fb.use_var(var);
        Ok((
            out,
            if quant == ir::Quant::Count {
                Kind::Int
            } else {
                Kind::Bool
            },
        ))
    }

    pub(super) fn field(&mut self, base: &Expr, field: &str) -> Result<(V, Kind), Unsupported> {
        if let Expr::Const(Value::Entity(e)) = base {
            let ent = &self.jp.program.entities[*e as usize];
            let v = ent
                .field(field)
                .cloned()
                .ok_or_else(|| Unsupported(format!("no field `{field}`")))?;
            return self.constant(&v);
        }
        let (b, k) = self.expr(base)?;
        if k != Kind::Entity {
            return unsupported("a field of a non-piece");
        }
        // The field's kind comes from the stat line every piece of the parameter's kind shares.
        let kind_id = match base {
            Expr::Local(s) => match self.local_types.get(*s as usize) {
                Some(Some(Type::Entity(Some(k)))) => Some(*k),
                _ => None,
            },
            _ => None,
        }
        .ok_or_else(|| Unsupported("a field of a piece of unknown kind".into()))?;
        let kd = &self.jp.program.kinds[kind_id as usize];
        let fi = kd
            .fields
            .iter()
            .position(|f| f.name == field)
            .ok_or_else(|| Unsupported("unknown field".into()))?;
        let fk = kind_of_type(&kd.fields[fi].ty)
            .ok_or_else(|| Unsupported("a field of a type the JIT does not handle".into()))?;
        let fid = self.jp.intern(field);
        let fidv = self.konst(fid);
        let v = self.callback(jit_field as *const u8, &[b, fidv]);
        self.check_failed();
        Ok((v, fk))
    }

    /// `n` dice of `die` folded as they are rolled: their sum (`sum`), or how many land in
    /// `[lo, hi]`. A loop in the generated code drawing exactly as [`jit_pool_fold`] does; a
    /// size out of range or a die without faces goes to that callback, which reports it.
    pub(super) fn pool_fold(&mut self, n: V, die: u32, lo: V, hi: V, sum: bool) -> V {
        let faces = &self.jp.faces[die as usize];
        let (len, ptr) = (faces.len(), faces.as_ptr());
        let standard = faces.iter().enumerate().all(|(i, f)| *f == i as i64 + 1);
        let slow = self.fb.create_block();
        let join = self.fb.create_block();
        let result = self.fb.append_block_param(join, I64);
        let slow_call = |cg: &mut Self| {
            let d = cg.konst(i64::from(die));
            let s = cg.konst(i64::from(sum));
            let v = cg.callback(jit_pool_fold as *const u8, &[n, d, lo, hi, s]);
            cg.check_failed();
            cg.fb.ins().jump(join, &[BlockArg::Value(v)]);
        };
        if len == 0 {
            self.fb.ins().jump(slow, &[]);
            self.enter(slow);
            slow_call(self);
            self.enter(join);
            return result;
        }
        let fast = self.fb.create_block();
        let bad = self
            .fb
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, n, crate::interp::MAX_POOL);
        self.fb.ins().brif(bad, slow, &[], fast, &[]);
        self.enter(slow);
        slow_call(self);

        self.enter(fast);
        let zero = self.konst(0);
        let header = self.fb.create_block();
        let i = self.fb.append_block_param(header, I64);
        let acc = self.fb.append_block_param(header, I64);
        let body = self.fb.create_block();
        let exit = self.fb.create_block();
        self.fb
            .ins()
            .jump(header, &[BlockArg::Value(zero), BlockArg::Value(zero)]);
        // The header is sealed once its back edge is in.
        self.fb.switch_to_block(header);
        let more = self.fb.ins().icmp(IntCC::SignedLessThan, i, n);
        self.fb.ins().brif(more, body, &[], exit, &[]);
        self.enter(body);
        let idx = self.inline_index(len as u32);
        let v = if standard {
            self.fb.ins().iadd_imm_s(idx, 1)
        } else {
            // The face table outlives the code: both belong to this `JitProgram`.
            let base = self.konst(ptr as i64);
            let off = self.fb.ins().imul_imm_s(idx, 8);
            let addr = self.fb.ins().iadd(base, off);
            self.fb.ins().load(I64, MemFlagsData::new(), addr, 0)
        };
        let acc1 = if sum {
            self.checked(BinOp::Add, acc, v)
        } else {
            let mut inside = self.fb.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, lo);
            if self.const_of(hi) != Some(i64::MAX) {
                let below = self.fb.ins().icmp(IntCC::SignedLessThanOrEqual, v, hi);
                inside = self.fb.ins().band(inside, below);
            }
            let one = self.bool_of(inside);
            self.fb.ins().iadd(acc, one)
        };
        let i1 = self.fb.ins().iadd_imm_s(i, 1);
        self.fb
            .ins()
            .jump(header, &[BlockArg::Value(i1), BlockArg::Value(acc1)]);
        self.fb.seal_block(header);
        self.enter(exit);
        self.fb.ins().jump(join, &[BlockArg::Value(acc)]);
        self.enter(join);
        result
    }

    /// Roll a pool onto the callback's pool stack.
    pub(super) fn pool(&mut self, e: &Expr) -> Result<(), Unsupported> {
        match e {
            Expr::Dice { count, die } => {
                let n = self.int(count)?;
                let d = self.konst(i64::from(*die));
                self.callback(jit_pool_roll as *const u8, &[n, d]);
                self.check_failed();
            }
            other => {
                // A plain number used as a pool is a pool of one die showing it.
                let v = self.int(other)?;
                let single = self.konst(-1);
                self.callback(jit_pool_roll as *const u8, &[v, single]);
            }
        }
        Ok(())
    }

    pub(super) fn const_range(e: &Expr) -> Option<(i64, i64)> {
        match e {
            Expr::Const(Value::Range(lo, hi)) => {
                Some((lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX)))
            }
            Expr::Const(Value::Int(n)) => Some((*n, *n)),
            _ => None,
        }
    }

    pub(super) fn builtin(
        &mut self,
        func: Builtin,
        args: &[Expr],
    ) -> Result<(V, Kind), Unsupported> {
        Ok(match func {
            Builtin::Min | Builtin::Max => {
                let mut acc = self.int(&args[0])?;
                for a in &args[1..] {
                    let v = self.int(a)?;
                    acc = self.min_max(func == Builtin::Max, acc, v);
                }
                (acc, Kind::Int)
            }
            Builtin::Clamp => {
                let x = self.int(&args[0])?;
                let lo = self.int(&args[1])?;
                let hi = self.int(&args[2])?;
                let a = self.min_max(true, x, lo);
                (self.min_max(false, a, hi), Kind::Int)
            }
            Builtin::Abs => {
                let x = self.int(&args[0])?;
                let m = self.fb.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
                let zero = self.konst(0);
                self.fail_if(m, E_OVERFLOW, zero);
                (self.fb.ins().iabs(x), Kind::Int)
            }
            Builtin::DivUp => {
                let a = self.int(&args[0])?;
                let b = self.int(&args[1])?;
                let q = self.divide_trunc(a, b);
                let qb = self.fb.ins().imul(q, b);
                let inexact = self.fb.ins().icmp(IntCC::NotEqual, qb, a);
                let apos = self.fb.ins().icmp_imm_s(IntCC::SignedGreaterThan, a, 0);
                let bpos = self.fb.ins().icmp_imm_s(IntCC::SignedGreaterThan, b, 0);
                let same = self.fb.ins().icmp(IntCC::Equal, apos, bpos);
                let up = self.fb.ins().band(inexact, same);
                let up = self.bool_of(up);
                (self.fb.ins().iadd(q, up), Kind::Int)
            }
            Builtin::Sum if matches!(args[0], Expr::Dice { .. }) => return self.expr(&args[0]),
            Builtin::Successes | Builtin::Count
                if matches!(args[0], Expr::Dice { .. }) && pure(&args[1]) =>
            {
                // Nothing in the target draws dice, so it may be read before the pool is
                // rolled: one fused pass, no pool kept.
                let Expr::Dice { count, die } = &args[0] else {
                    unreachable!("matched above")
                };
                let (lo, hi) = if func == Builtin::Successes {
                    (self.int(&args[1])?, self.konst(i64::MAX))
                } else {
                    let (lo, hi) = Self::const_range(&args[1])
                        .ok_or_else(|| Unsupported("`count` with a computed range".into()))?;
                    (self.konst(lo), self.konst(hi))
                };
                let n = self.int(count)?;
                (self.pool_fold(n, *die, lo, hi, false), Kind::Int)
            }
            Builtin::Sum => {
                self.pool(&args[0])?;
                let op = self.konst(P_SUM);
                let z = self.konst(0);
                (
                    self.callback(jit_pool_reduce as *const u8, &[op, z, z]),
                    Kind::Int,
                )
            }
            Builtin::Highest | Builtin::Lowest => {
                let k = self.int(&args[0])?;
                self.pool(&args[1])?;
                let op = self.konst(if func == Builtin::Highest {
                    P_HIGHEST
                } else {
                    P_LOWEST
                });
                let z = self.konst(0);
                (
                    self.callback(jit_pool_reduce as *const u8, &[op, k, z]),
                    Kind::Int,
                )
            }
            Builtin::Successes => {
                self.pool(&args[0])?;
                let t = self.int(&args[1])?;
                let op = self.konst(P_SUCCESSES);
                let z = self.konst(0);
                (
                    self.callback(jit_pool_reduce as *const u8, &[op, t, z]),
                    Kind::Int,
                )
            }
            Builtin::Count => {
                self.pool(&args[0])?;
                let (lo, hi) = Self::const_range(&args[1])
                    .ok_or_else(|| Unsupported("`count` with a computed range".into()))?;
                let op = self.konst(P_COUNT);
                let lo = self.konst(lo);
                let hi = self.konst(hi);
                (
                    self.callback(jit_pool_reduce as *const u8, &[op, lo, hi]),
                    Kind::Int,
                )
            }
            Builtin::Reroll => {
                let Expr::Const(Value::Die(die)) = &args[0] else {
                    return unsupported("`reroll` of a computed die");
                };
                let (lo, hi) = Self::const_range(&args[1])
                    .ok_or_else(|| Unsupported("`reroll` with a computed range".into()))?;
                let d = self.konst(i64::from(*die));
                let lo = self.konst(lo);
                let hi = self.konst(hi);
                let v = self.callback(jit_reroll as *const u8, &[d, lo, hi]);
                self.check_failed();
                (v, Kind::Int)
            }
            Builtin::Pool => return unsupported("`pool` outside a pool function"),
            Builtin::Range => return unsupported("a range with computed bounds"),
        })
    }

    /// Truncating division with the interpreter's errors (for `div_up`).
    pub(super) fn divide_trunc(&mut self, x: V, y: V) -> V {
        let zero = self.konst(0);
        let yz = self.fb.ins().icmp_imm_s(IntCC::Equal, y, 0);
        self.fail_if(yz, E_DIV_ZERO, zero);
        let xmin = self.fb.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
        let ym1 = self.fb.ins().icmp_imm_s(IntCC::Equal, y, -1);
        let of = self.fb.ins().band(xmin, ym1);
        self.fail_if(of, E_OVERFLOW, zero);
        self.fb.ins().sdiv(x, y)
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        lhs: &Expr,
        rhs: &Expr,
    ) -> Result<(V, Kind), Unsupported> {
        match op {
            BinOp::And | BinOp::Or => {
                let (a, ak) = self.expr(lhs)?;
                if ak != Kind::Bool {
                    return unsupported("`and`/`or` of non-booleans");
                }
                match (op, self.const_of(a)) {
                    // Decided by the left side: the right one is not evaluated.
                    (BinOp::And, Some(0)) | (BinOp::Or, Some(1)) => return Ok((a, Kind::Bool)),
                    (_, Some(_)) => {
                        let (b, bk) = self.expr(rhs)?;
                        if bk != Kind::Bool {
                            return unsupported("`and`/`or` of non-booleans");
                        }
                        return Ok((b, Kind::Bool));
                    }
                    _ => {}
                }
                // A block parameter rather than a variable, as for `if`: long chains of
                // `and`/`or` stay linear in memory.
                let rb = self.fb.create_block();
                let join = self.fb.create_block();
                let joined = self.fb.append_block_param(join, I64);
                // Short-circuit: the right side (and its dice) only when it decides.
                if op == BinOp::And {
                    self.fb.ins().brif(a, rb, &[], join, &[BlockArg::Value(a)]);
                } else {
                    self.fb.ins().brif(a, join, &[BlockArg::Value(a)], rb, &[]);
                }
                self.enter(rb);
                let (b, bk) = self.expr(rhs)?;
                if bk != Kind::Bool {
                    return unsupported("`and`/`or` of non-booleans");
                }
                self.fb.ins().jump(join, &[BlockArg::Value(b)]);
                self.enter(join);
                return Ok((joined, Kind::Bool));
            }
            BinOp::In => {
                let (a, ak) = self.expr(lhs)?;
                let Some((lo, hi)) = (match rhs {
                    Expr::Const(Value::Range(lo, hi)) => {
                        Some((lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX)))
                    }
                    _ => None,
                }) else {
                    return unsupported("`in` over a list");
                };
                if !matches!(ak, Kind::Int | Kind::Bool) {
                    return Ok((self.konst(0), Kind::Bool));
                }
                let c1 = self.cmp_imm(IntCC::SignedGreaterThanOrEqual, a, lo);
                let c2 = self.cmp_imm(IntCC::SignedLessThanOrEqual, a, hi);
                return Ok((self.logic('&', c1, c2), Kind::Bool));
            }
            _ => {}
        }
        let (a, ak) = self.expr(lhs)?;
        let (b, bk) = self.expr(rhs)?;
        let num = |k: Kind| matches!(k, Kind::Int | Kind::Bool);
        Ok(match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                if !num(ak) || !num(bk) {
                    return unsupported("arithmetic on a non-number");
                }
                (self.checked(op, a, b), Kind::Int)
            }
            BinOp::Div | BinOp::Rem => {
                if !num(ak) || !num(bk) {
                    return unsupported("arithmetic on a non-number");
                }
                (self.divide(op, a, b), Kind::Int)
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                if !num(ak) || !num(bk) {
                    return unsupported("ordering of non-numbers");
                }
                let cc = match op {
                    BinOp::Lt => IntCC::SignedLessThan,
                    BinOp::Le => IntCC::SignedLessThanOrEqual,
                    BinOp::Gt => IntCC::SignedGreaterThan,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                (self.cmp(cc, a, b), Kind::Bool)
            }
            BinOp::Eq | BinOp::Ne => {
                // Values of different kinds are never equal, as in the interpreter.
                let c = if ak == bk {
                    self.cmp(IntCC::Equal, a, b)
                } else {
                    self.konst(0)
                };
                if op == BinOp::Ne {
                    let one = self.konst(1);
                    (self.logic('^', c, one), Kind::Bool)
                } else {
                    (c, Kind::Bool)
                }
            }
            BinOp::And | BinOp::Or | BinOp::In => unreachable!("handled above"),
        })
    }

    /// A modifier stack, inlined: arguments left to right, then each entry in order.
    pub(super) fn stack(&mut self, stack: u32, args: &[Expr]) -> Result<V, Unsupported> {
        let st = self.jp.program.stacks[stack as usize].clone();
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.expr(a)?);
        }
        // The entries read the stack's parameters: evaluate them in a scope of their own.
        let saved_slots = std::mem::take(&mut self.slots);
        let saved_kinds = std::mem::take(&mut self.slot_kinds);
        let saved_consts = std::mem::take(&mut self.slot_consts);
        let saved_types = std::mem::replace(
            &mut self.local_types,
            st.params.iter().map(|p| Some(p.ty.clone())).collect(),
        );
        for (i, (v, k)) in vals.iter().enumerate() {
            let var = self.fb.declare_var(I64);
            self.slots.push(var);
            self.slot_kinds.push(None);
            self.set_slot(i, *v, *k);
        }
        while self.slots.len() < st.n_slots as usize {
            let var = self.fb.declare_var(I64);
            let zero = self.konst(0);
            self.fb.def_var(var, zero);
            self.slots.push(var);
            self.slot_kinds.push(None);
        }
        let total = self.fb.declare_var(I64);
        let zero = self.konst(0);
        self.fb.def_var(total, zero);
        let r = (|| -> Result<(), Unsupported> {
            for en in &st.entries {
                let join = self.fb.create_block();
                if let Some(w) = &en.when {
                    let (c, ck) = self.expr(w)?;
                    if ck != Kind::Bool {
                        return unsupported("a modifier condition that is not a boolean");
                    }
                    match self.const_of(c) {
                        Some(0) => {
                            self.fb.ins().jump(join, &[]);
                            self.enter(join);
                            continue;
                        }
                        Some(_) => {}
                        None => {
                            let yes = self.fb.create_block();
                            self.fb.ins().brif(c, yes, &[], join, &[]);
                            self.enter(yes);
                        }
                    }
                }
                let v = self.int(&en.value)?;
                let v = match &en.per {
                    Some(p) => {
                        let n = self.int(p)?;
                        self.checked(BinOp::Mul, v, n)
                    }
                    None => v,
                };
                let t = self.fb.use_var(total);
                let t2 = self.checked(BinOp::Add, t, v);
                self.fb.def_var(total, t2);
                self.fb.ins().jump(join, &[]);
                self.enter(join);
            }
            Ok(())
        })();
        self.slots = saved_slots;
        self.slot_kinds = saved_kinds;
        self.slot_consts = saved_consts;
        self.local_types = saved_types;
        r?;
        let mut t = self.fb.use_var(total);
        if let Some(lo) = st.clamp.0 {
            let l = self.konst(lo);
            t = self.min_max(true, t, l);
        }
        if let Some(hi) = st.clamp.1 {
            let h = self.konst(hi);
            t = self.min_max(false, t, h);
        }
        Ok(t)
    }
}

/// Calls compiled in place into one sampling loop, at most: past it the loop is not built.
const MAX_INLINED: u32 = 256;

/// Whether evaluating `e` can draw dice (or fail): reading it earlier changes nothing.
pub(super) fn pure(e: &Expr) -> bool {
    match e {
        Expr::Const(Value::Unknown(_)) => false,
        Expr::Const(_) | Expr::Local(_) => true,
        Expr::Unary { operand, .. } => pure(operand),
        Expr::Binary { op, lhs, rhs } => {
            !matches!(op, BinOp::Div | BinOp::Rem) && pure(lhs) && pure(rhs)
        }
        Expr::Lookup { keys, .. } => keys.iter().all(pure),
        Expr::Builtin {
            func: Builtin::Min | Builtin::Max | Builtin::Clamp,
            args,
        } => args.iter().all(pure),
        _ => false,
    }
}

pub(super) fn kind_code(k: Kind) -> i64 {
    match k {
        Kind::Int => 0,
        Kind::Bool => 1,
        Kind::Sym => 2,
        Kind::Entity => 3,
        Kind::Side => 4,
    }
}

pub(super) fn kind_from_code(c: i64) -> Kind {
    match c {
        1 => Kind::Bool,
        2 => Kind::Sym,
        3 => Kind::Entity,
        4 => Kind::Side,
        _ => Kind::Int,
    }
}

/// The one kind of a table's known cells.
pub(super) fn table_kind(t: &ir::TableDef) -> Option<Kind> {
    let mut kind = None;
    for c in t.rows.iter().flat_map(|r| r.cells.iter()) {
        let k = match c {
            Value::Int(_) | Value::Length(_) => Kind::Int,
            Value::Bool(_) => Kind::Bool,
            // Reaching a `-` cell is an error the interpreter reports.
            Value::Symbol(s) if &**s == ir::NOT_APPLICABLE => return None,
            Value::Symbol(_) => Kind::Sym,
            Value::Entity(_) => Kind::Entity,
            Value::Side(_) => Kind::Side,
            Value::Unknown(_) => continue,
            _ => return None,
        };
        match kind {
            None => kind = Some(k),
            Some(x) if x == k => {}
            Some(_) => return None,
        }
    }
    Some(kind.unwrap_or(Kind::Int))
}

/// `x cc y` on known values.
fn int_cc(cc: IntCC, x: i64, y: i64) -> bool {
    match cc {
        IntCC::Equal => x == y,
        IntCC::NotEqual => x != y,
        IntCC::SignedLessThan => x < y,
        IntCC::SignedLessThanOrEqual => x <= y,
        IntCC::SignedGreaterThan => x > y,
        IntCC::SignedGreaterThanOrEqual => x >= y,
        IntCC::UnsignedLessThan => (x as u64) < (y as u64),
        IntCC::UnsignedLessThanOrEqual => (x as u64) <= (y as u64),
        IntCC::UnsignedGreaterThan => (x as u64) > (y as u64),
        IntCC::UnsignedGreaterThanOrEqual => (x as u64) >= (y as u64),
    }
}
