//! Compiled sampling: one generated function runs a compiled resolution `n` times and counts
//! its outcomes in a table, so the entry cost (context set-up, argument checks) is paid once
//! per batch instead of once per resolution.
//!
//! The table holds one count per symbol (named outcomes), one per value of a window of integer
//! results, and one for "nothing". A result the table has no place for (a value outside the
//! window) or an error stops the loop; Rust then records that one result, widens the window when
//! it is worth it, and starts the loop again where it stopped. Dice are drawn by the compiled
//! resolution itself, so the counts are exactly those of calling it `n` times.

use std::collections::BTreeMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, BlockArg, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};

use super::{I64, JitCtx, JitProgram, RawOutcome, ST_ERROR, ST_NAMED, ST_NOTHING, ST_VALUE};
use crate::error::RunError;
use crate::interp::Interp;
use crate::rng::Dice;

/// `(ctx, args, n, table, window, last) -> resolutions counted`. `window` is `[symbols,
/// lo, len]`; when fewer than `n` were counted, `last` holds the status and value of the one
/// that stopped the loop (already drawn, not counted).
type LoopFn = extern "C" fn(*mut JitCtx, *const i64, i64, *mut u64, *const i64, *mut i64) -> i64;

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

/// The sampling loop of one compiled resolution; its code lives as long as this value.
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
    /// Generate the loop for `proc`; `None` when `proc` was not compiled.
    pub fn new(jit: &'j JitProgram<'p>, proc: u32) -> Result<Option<Self>, String> {
        let Some(Some(c)) = jit.compiled.get(proc as usize) else {
            return Ok(None);
        };
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("this machine is not supported by the JIT: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())?;
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let mut sig = module.make_signature();
        for _ in 0..6 {
            sig.params.push(AbiParam::new(I64));
        }
        sig.returns.push(AbiParam::new(I64));
        // The resolution's own signature: (ctx, args, out) -> status.
        let mut callee_sig = module.make_signature();
        for _ in 0..3 {
            callee_sig.params.push(AbiParam::new(I64));
        }
        callee_sig.returns.push(AbiParam::new(I64));

        let mut ctx = module.make_context();
        ctx.func.signature = sig.clone();
        let mut fctx = FunctionBuilderContext::new();
        {
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let callee_ref = fb.import_signature(callee_sig);
            let flags = MemFlagsData::new();
            let entry = fb.create_block();
            fb.append_block_params_for_function_params(entry);
            let header = fb.create_block();
            let i_h = fb.append_block_param(header, I64);
            let body = fb.create_block();
            let count = fb.create_block();
            let idx_c = fb.append_block_param(count, I64);
            let bail = fb.create_block();
            let st_b = fb.append_block_param(bail, I64);
            let v_b = fb.append_block_param(bail, I64);
            let done = fb.create_block();
            let not_named = fb.create_block();
            let not_value = fb.create_block();
            let named_b = fb.create_block();
            let value_b = fb.create_block();

            fb.switch_to_block(entry);
            let p = fb.block_params(entry).to_vec();
            let (jctx, args, n, table, window, last) = (p[0], p[1], p[2], p[3], p[4], p[5]);
            let symbols = fb.ins().load(I64, flags, window, 0);
            let lo = fb.ins().load(I64, flags, window, 8);
            let len = fb.ins().load(I64, flags, window, 16);
            let nothing_at = fb.ins().iadd(symbols, len);
            let slot = fb.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                8,
                3,
            ));
            let outp = fb.ins().stack_addr(I64, slot, 0);
            let callee = fb.ins().iconst(I64, c.func as usize as i64);
            let zero = fb.ins().iconst(I64, 0);
            fb.ins().jump(header, &[BlockArg::Value(zero)]);

            // header(i): stop after n.
            fb.switch_to_block(header);
            let more = fb.ins().icmp(IntCC::SignedLessThan, i_h, n);
            fb.ins().brif(more, body, &[], done, &[]);

            // body: one resolution, then find its place in the table.
            fb.switch_to_block(body);
            let call = fb
                .ins()
                .call_indirect(callee_ref, callee, &[jctx, args, outp]);
            let st = fb.inst_results(call)[0];
            let v = fb.ins().stack_load(I64, I64, slot, 0);
            let is_named = fb.ins().icmp_imm_s(IntCC::Equal, st, ST_NAMED);
            fb.ins().brif(is_named, named_b, &[], not_named, &[]);

            // A named outcome: its symbol's count.
            fb.switch_to_block(named_b);
            let inside = fb.ins().icmp(IntCC::UnsignedLessThan, v, symbols);
            fb.ins().brif(
                inside,
                count,
                &[BlockArg::Value(v)],
                bail,
                &[BlockArg::Value(st), BlockArg::Value(v)],
            );

            fb.switch_to_block(not_named);
            let is_value = fb.ins().icmp_imm_s(IntCC::Equal, st, ST_VALUE);
            fb.ins().brif(is_value, value_b, &[], not_value, &[]);

            // A value: its place in the window, when inside (wrapping difference compared
            // unsigned: inside exactly when lo <= v < lo + len).
            fb.switch_to_block(value_b);
            let off = fb.ins().isub(v, lo);
            let inside = fb.ins().icmp(IntCC::UnsignedLessThan, off, len);
            let at = fb.ins().iadd(symbols, off);
            fb.ins().brif(
                inside,
                count,
                &[BlockArg::Value(at)],
                bail,
                &[BlockArg::Value(st), BlockArg::Value(v)],
            );

            // Nothing: the last count; an error stops the loop.
            fb.switch_to_block(not_value);
            let is_nothing = fb.ins().icmp_imm_s(IntCC::Equal, st, ST_NOTHING);
            fb.ins().brif(
                is_nothing,
                count,
                &[BlockArg::Value(nothing_at)],
                bail,
                &[BlockArg::Value(st), BlockArg::Value(v)],
            );

            // count(idx): table[idx] += 1; next resolution.
            fb.switch_to_block(count);
            let off = fb.ins().ishl_imm_s(idx_c, 3);
            let addr = fb.ins().iadd(table, off);
            let c0 = fb.ins().load(I64, flags, addr, 0);
            let c1 = fb.ins().iadd_imm_s(c0, 1);
            fb.ins().store(flags, c1, addr, 0);
            let i1 = fb.ins().iadd_imm_s(i_h, 1);
            fb.ins().jump(header, &[BlockArg::Value(i1)]);

            // bail(status, value): hand the result back, uncounted.
            fb.switch_to_block(bail);
            fb.ins().store(flags, st_b, last, 0);
            fb.ins().store(flags, v_b, last, 8);
            fb.ins().return_(&[i_h]);

            fb.switch_to_block(done);
            fb.ins().return_(&[i_h]);

            fb.seal_all_blocks();
            fb.finalize(module.target_config());
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
        // `LoopFn` describes (six i64 parameters, an i64 result, the host's default calling
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

    /// Run `n` resolutions on encoded arguments (from [`JitProgram::encode_args`]) and add
    /// their outcomes to `counts`. The first error stops the run and is returned.
    pub fn run(
        &self,
        raw: &[i64],
        n: u64,
        dice: &mut Dice,
        counts: &mut RawCounts,
    ) -> Result<(), RunError> {
        let Some(Some(c)) = self.jit.compiled.get(self.proc as usize) else {
            return Err(RunError::Type("procedure not compiled".into()));
        };
        if raw.len() < c.params.len() {
            return Err(RunError::Type("too few arguments".into()));
        }
        let interp = Interp::new(self.jit.program, self.jit.assumptions);
        let mut ctx = JitCtx {
            failed: 0,
            dice,
            interp: &interp,
            symbols: &self.jit.symbols,
            faces: &self.jit.faces,
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
                raw.as_ptr(),
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
