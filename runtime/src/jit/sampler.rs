//! Compiled sampling: one generated function runs a resolution `n` times and counts its
//! outcomes in a table, so the entry cost (context set-up, argument checks) is paid once per
//! batch instead of once per resolution.
//!
//! The loop is specialised for one call: the resolution's body (and the bodies of the
//! procedures it calls) is compiled inside the loop, its arguments are constants, so what they
//! decide (modifiers, table look-ups, branches) is settled when compiling; the dice stream's
//! position stays in registers between draws. Every draw still goes through the one stream in
//! the interpreter's order, so the counts are exactly those of calling the resolution `n` times.
//!
//! The table holds one count per symbol (named outcomes), one per value of a window of integer
//! results, and one for "nothing". A result the table has no place for (a value outside the
//! window) or an error stops the loop; Rust then records that one result, widens the window when
//! it is worth it, and starts the loop again where it stopped.

use std::collections::BTreeMap;

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, BlockArg, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use sandtable_ir as ir;

use super::codegen::{Codegen, CountSite, DiceRegs, Sink};
use super::{I64, JitCtx, JitProgram, Meta, RawOutcome, ST_ERROR, ST_NAMED, ST_NOTHING, ST_VALUE};
use crate::error::RunError;
use crate::interp::Interp;
use crate::rng::Dice;

/// `(ctx, n, table, window, last) -> resolutions counted`. `window` is `[symbols, lo, len]`;
/// when fewer than `n` were counted, `last` holds the status and value of the one that
/// stopped the loop (already drawn, not counted).
type LoopFn = extern "C" fn(*mut JitCtx, i64, *mut u64, *const i64, *mut i64) -> i64;

/// Widest window of integer results kept as a table (a result further out is counted in a
/// map instead).
const MAX_WINDOW: i64 = 1 << 16;

/// Window given to integer results when the first one arrives.
const FIRST_WINDOW: i64 = 64;

/// Outcome counts of a sampling run, by raw result.
#[derive(Debug, Clone, Default)]
pub struct RawCounts {
    /// `[symbols | window of values | nothing]`, as the generated loop indexes it.
    table: Vec<u64>,
    symbols: usize,
    lo: i64,
    len: i64,
    /// Results outside the table.
    other: BTreeMap<(i64, i64), u64>,
}

impl RawCounts {
    fn new(symbols: usize) -> Self {
        RawCounts {
            table: vec![0; symbols + 1],
            symbols,
            lo: 0,
            len: 0,
            other: BTreeMap::new(),
        }
    }

    /// Every distinct raw result with its count.
    pub fn counts(&self) -> BTreeMap<(i64, i64), u64> {
        let mut m = self.other.clone();
        for (i, c) in self.table[..self.symbols].iter().enumerate() {
            if *c > 0 {
                *m.entry((ST_NAMED, i as i64)).or_default() += c;
            }
        }
        let values = &self.table[self.symbols..self.symbols + self.len as usize];
        for (i, c) in values.iter().enumerate() {
            if *c > 0 {
                *m.entry((ST_VALUE, self.lo + i as i64)).or_default() += c;
            }
        }
        let nothing = self.table[self.symbols + self.len as usize];
        if nothing > 0 {
            *m.entry((ST_NOTHING, 0)).or_default() += nothing;
        }
        m
    }

    /// Count a result the loop stopped at: widen the window to hold it when the window stays
    /// within [`MAX_WINDOW`], else keep it aside.
    fn record(&mut self, status: i64, value: i64) {
        if status == ST_VALUE {
            let (lo, hi) = if self.len == 0 {
                let lo = value.saturating_sub(FIRST_WINDOW / 2);
                (lo, lo.saturating_add(FIRST_WINDOW - 1))
            } else {
                let hi = self.lo + self.len - 1;
                // Grow by at least half again, so a spreading distribution widens a few times.
                let grow = self.len / 2;
                (
                    self.lo.min(value).min(self.lo.saturating_sub(grow)),
                    hi.max(value).max(hi.saturating_add(grow)),
                )
            };
            let len = hi.checked_sub(lo).and_then(|x| x.checked_add(1));
            if let Some(len) = len.filter(|l| *l <= MAX_WINDOW) {
                let mut table = vec![0u64; self.symbols + len as usize + 1];
                table[..self.symbols].copy_from_slice(&self.table[..self.symbols]);
                if self.len > 0 {
                    // The old window lies inside the new one.
                    let at = (self.lo - lo) as usize;
                    let old = &self.table[self.symbols..self.symbols + self.len as usize];
                    table[self.symbols + at..self.symbols + at + old.len()].copy_from_slice(old);
                }
                table[self.symbols + len as usize] = self.table[self.symbols + self.len as usize];
                self.table = table;
                self.lo = lo;
                self.len = len;
                self.table[self.symbols + (value - lo) as usize] += 1;
                return;
            }
        }
        *self.other.entry((status, value)).or_default() += 1;
    }
}

/// The sampling loop of one compiled resolution on fixed arguments; its code lives as long as
/// this value.
pub struct Sampler<'j, 'p> {
    jit: &'j JitProgram<'p>,
    proc: u32,
    module: Option<JITModule>,
    func: LoopFn,
}

impl Drop for Sampler<'_, '_> {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `func` points into this module and is dropped with `self`; nothing can
            // call it after this point.
            unsafe { m.free_memory() };
        }
    }
}

impl<'j, 'p> Sampler<'j, 'p> {
    /// Generate the loop for `proc` called with `args` (encoded by
    /// [`JitProgram::encode_args`]); `None` when `proc` was not compiled.
    pub fn new(jit: &'j JitProgram<'p>, proc: u32, args: &[i64]) -> Result<Option<Self>, String> {
        let Some(Some(c)) = jit.compiled.get(proc as usize) else {
            return Ok(None);
        };
        if args.len() < c.params.len() {
            return Err("too few arguments".into());
        }
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("this machine is not supported by the JIT: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let mut sig = module.make_signature();
        for _ in 0..5 {
            sig.params.push(AbiParam::new(I64));
        }
        sig.returns.push(AbiParam::new(I64));
        let mut ctx = module.make_context();
        ctx.func.signature = sig.clone();

        // Code generation works on a program of its own: this one's symbols and faces (the
        // same table, shared), the loop's module, and what the compiled procedures are.
        let mut shell = JitProgram {
            program: jit.program,
            assumptions: jit.assumptions,
            module: Some(module),
            compiled: Vec::new(),
            skipped: Vec::new(),
            symbols: jit.symbols.clone(),
            symbol_ids: jit.symbol_ids.clone(),
            faces: jit.faces.clone(),
            compile_time: std::time::Duration::ZERO,
        };
        let meta: Vec<Option<Meta>> = jit
            .compiled
            .iter()
            .map(|c| {
                c.as_ref().map(|c| Meta {
                    params: c.params.clone(),
                    result: c.result,
                    named: c.named,
                })
            })
            .collect();
        let ids = vec![None; jit.compiled.len()];
        let built = build(&mut shell, &mut ctx, proc, args, &c.params, &meta, &ids);
        let mut module = shell.module.take().expect("module present");
        if let Err(e) = built {
            // SAFETY: nothing was defined in this module; no code from it exists.
            unsafe { module.free_memory() };
            return Err(e);
        }
        if shell.symbols.len() != jit.symbols.len() {
            // SAFETY: nothing was defined in this module; no code from it exists.
            unsafe { module.free_memory() };
            return Err("the sampling loop named a symbol the program does not have".into());
        }
        let id = module
            .declare_function(&format!("sample{proc}"), Linkage::Local, &sig)
            .map_err(|e| e.to_string())?;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        module
            .define_function(id, &mut ctx)
            .map_err(|e| format!("code generation failed: {e:?}"))?;
        module.clear_context(&mut ctx);
        module.finalize_definitions().map_err(|e| e.to_string())?;
        let ptr = module.get_finalized_function(id);
        // SAFETY: `ptr` is the finalized code of a function built with exactly the signature
        // `LoopFn` describes (five i64 parameters, an i64 result, the host's default calling
        // convention), and it lives until `module` is freed in `drop`.
        let func = unsafe { std::mem::transmute::<*const u8, LoopFn>(ptr) };
        Ok(Some(Sampler {
            jit,
            proc,
            module: Some(module),
            func,
        }))
    }

    /// Empty counts shaped for this sampler's table.
    pub fn counts(&self) -> RawCounts {
        RawCounts::new(self.jit.symbols.len())
    }

    /// Run `n` resolutions and add their outcomes to `counts`. The first error stops the run
    /// and is returned.
    pub fn run(&self, n: u64, dice: &mut Dice, counts: &mut RawCounts) -> Result<(), RunError> {
        let interp = Interp::new(self.jit.program, self.jit.assumptions);
        let mut ctx = JitCtx {
            failed: 0,
            dice,
            interp: &interp,
            symbols: &self.jit.symbols,
            faces: &*self.jit.faces,
            pools: Vec::new(),
            error: None,
            proc: self.proc,
        };
        let mut left = i64::try_from(n).unwrap_or(i64::MAX);
        while left > 0 {
            let window = [counts.symbols as i64, counts.lo, counts.len];
            let mut last = [0i64; 2];
            let done = (self.func)(
                &mut ctx,
                left,
                counts.table.as_mut_ptr(),
                window.as_ptr(),
                last.as_mut_ptr(),
            );
            left -= done;
            if left == 0 {
                break;
            }
            // The loop stopped at a result it could not count: an error, or a value outside
            // the window.
            let (status, value) = (last[0], last[1]);
            if status == ST_ERROR {
                return Err(ctx
                    .error
                    .take()
                    .map_or(RunError::Type("compiled code failed".into()), |e| *e)
                    .at(self.jit.program, self.proc, None));
            }
            counts.record(status, value);
            left -= 1;
        }
        Ok(())
    }

    /// Decode a raw result (as [`RawCounts::counts`] lists them).
    pub fn decode(&self, status: i64, value: i64) -> crate::value::OutcomeKey {
        self.jit
            .decode_outcome(self.proc, RawOutcome { status, value })
    }
}

/// The loop's body into `ctx`: entry (window, dice state, arguments), `header(i)` testing
/// `i < n`, the resolution inlined with each result counted, and the exits.
fn build(
    shell: &mut JitProgram,
    ctx: &mut cranelift_codegen::Context,
    proc: u32,
    args: &[i64],
    params: &[super::Kind],
    meta: &[Option<Meta>],
    ids: &[Option<cranelift_module::FuncId>],
) -> Result<(), String> {
    let program = shell.program;
    let def = &program.procs[proc as usize];
    let n_symbols = shell.symbols.len() as i64;
    let mut fctx = FunctionBuilderContext::new();
    let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let flags = MemFlagsData::new();
    let entry = fb.create_block();
    fb.append_block_params_for_function_params(entry);
    let header = fb.create_block();
    let i = fb.append_block_param(header, I64);
    let body = fb.create_block();
    let bail = fb.create_block();
    let st_b = fb.append_block_param(bail, I64);
    let v_b = fb.append_block_param(bail, I64);
    let done = fb.create_block();

    fb.switch_to_block(entry);
    let p = fb.block_params(entry).to_vec();
    let (jctx, n, table, window, last) = (p[0], p[1], p[2], p[3], p[4]);
    let symbols = fb.ins().load(I64, flags, window, 0);
    let lo = fb.ins().load(I64, flags, window, 8);
    let len = fb.ins().load(I64, flags, window, 16);
    let nothing_at = fb.ins().iadd(symbols, len);
    let dptr = fb
        .ins()
        .load(I64, flags, jctx, std::mem::offset_of!(JitCtx, dice) as i32);
    let pos_v = fb.declare_var(I64);
    let draws_v = fb.declare_var(I64);
    let pos = fb.ins().load(I64, flags, dptr, Dice::POS_OFFSET);
    let draws = fb.ins().load(I64, flags, dptr, Dice::DRAWS_OFFSET);
    fb.def_var(pos_v, pos);
    fb.def_var(draws_v, draws);
    let out = fb.ins().iconst(I64, 0);
    let mut slots = Vec::new();
    for _ in 0..(def.n_slots as usize).max(params.len()) {
        let v = fb.declare_var(I64);
        let zero = fb.ins().iconst(I64, 0);
        fb.def_var(v, zero);
        slots.push(v);
    }
    let n_slots = slots.len();
    let mut cg = Codegen {
        jp: shell,
        fb,
        jctx,
        out,
        slots,
        slot_kinds: vec![None; n_slots],
        local_types: def.params.iter().map(|p| Some(p.ty.clone())).collect(),
        named: false,
        result: None,
        meta,
        ids,
        callback_sigs: HashMap::new(),
        error_exit: None,
        failed_exit: None,
        proc,
        stmt_ids: ir::stmts_post_order(&def.body)
            .into_iter()
            .enumerate()
            .map(|(i, s)| (std::ptr::from_ref(s).addr(), i as i64))
            .collect(),
        cur_stmt: -1,
        sink: Sink::Count(CountSite {
            table,
            symbols,
            lo,
            len,
            nothing_at,
            n_symbols,
            header,
            i,
            bail,
        }),
        dice_regs: Some(DiceRegs {
            dptr,
            pos: pos_v,
            draws: draws_v,
        }),
        error_bail: Some(bail),
        slot_consts: Vec::new(),
        fold: true,
        inlined: 0,
        dead: false,
        jump_rets: Vec::new(),
    };
    for (k, (a, kind)) in args.iter().zip(params).enumerate() {
        let v = cg.konst(*a);
        cg.set_slot(k, v, *kind);
    }
    let zero = cg.konst(0);
    cg.fb.ins().jump(header, &[BlockArg::Value(zero)]);

    // header(i): stop after n. Sealed at the end, when every count has jumped back to it.
    cg.fb.switch_to_block(header);
    let more = cg.fb.ins().icmp(IntCC::SignedLessThan, i, n);
    cg.fb.ins().brif(more, body, &[], done, &[]);

    cg.enter(body);
    cg.block(&def.body).map_err(|e| e.0)?;
    if !cg.fb.is_unreachable() {
        let zero = cg.konst(0);
        cg.ret(ST_NOTHING, zero);
    }
    cg.finish_exits();

    // bail(status, value): hand the result back, uncounted, and the dice state with it.
    cg.enter(bail);
    cg.fb.ins().store(flags, st_b, last, 0);
    cg.fb.ins().store(flags, v_b, last, 8);
    cg.flush_dice();
    cg.fb.ins().return_(&[i]);

    cg.fb.switch_to_block(done);
    cg.flush_dice();
    cg.fb.ins().return_(&[i]);

    let mut fb = cg.fb;
    fb.seal_all_blocks();
    let target = shell
        .module
        .as_ref()
        .expect("module present")
        .target_config();
    fb.finalize(target);
    Ok(())
}
