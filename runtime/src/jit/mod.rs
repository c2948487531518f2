//! The Cranelift backend: IR procedures compiled to native code.
//!
//! Values are 64-bit integers tagged statically with a [`Kind`] (an int, a boolean, an
//! interned symbol, a piece, a side). Dice, pools, table look-ups and fields of pieces held
//! in parameters are `extern "C"` callbacks into the runtime, so every draw goes through the
//! same [`Dice`] in the same order as the interpreter ([`crate::rng`] documents it).
//! Arithmetic is checked exactly as in the interpreter (overflow and division by zero are
//! errors, division rounds down).
//!
//! A procedure that uses anything outside this subset (effects, loops, choice points, engine
//! functions) is not compiled; [`Backend`] then runs it on the interpreter. All `unsafe` of
//! the runtime is in this module.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use sandtable_ir::{self as ir, KeyPattern, ProcKind, Program, Type, Value};

use crate::error::RunError;
use crate::interp::{Assumptions, Ctx, Host, Interp};
use crate::rng::Dice;
use crate::value::{Outcome, OutcomeKey, Val};

mod callbacks;
mod codegen;
mod sampler;

use codegen::Codegen;
pub use sampler::{RawCounts, Sampler};

const I64: types::Type = types::I64;

/// What a 64-bit value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Bool,
    /// An index into the symbol table.
    Sym,
    Entity,
    Side,
}

/// Why a procedure was not compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported(pub String);

/// Status a compiled function returns.
const ST_NAMED: i64 = 0;
const ST_VALUE: i64 = 1;
const ST_NOTHING: i64 = 2;
const ST_ERROR: i64 = -1;

/// Error codes the generated code reports through [`jit_fail`].
const E_OVERFLOW: i64 = 1;
const E_DIV_ZERO: i64 = 2;
const E_NO_BAND: i64 = 3;
const E_UNKNOWN: i64 = 4;
const E_NOTHING: i64 = 5;

/// Pool reductions understood by [`jit_pool_reduce`].
const P_SUM: i64 = 0;
const P_SUCCESSES: i64 = 1;
const P_COUNT: i64 = 2;
const P_HIGHEST: i64 = 3;
const P_LOWEST: i64 = 4;

/// The state callbacks see. `failed` sits first so generated code can test it with one load.
#[repr(C)]
pub struct JitCtx<'a> {
    failed: i64,
    dice: *mut Dice,
    interp: *const Interp<'a>,
    symbols: *const Vec<sandtable_ir::Str>,
    /// Faces of every die, by die id, for rolls without going through the interpreter.
    faces: *const Vec<Vec<i64>>,
    pools: Vec<Vec<i64>>,
    /// Boxed: the common case (no error) then costs nothing to create or drop.
    error: Option<Box<RunError>>,
    /// The procedure running, for error messages.
    proc: u32,
}

type CompiledFn = extern "C" fn(*mut JitCtx, *const i64, *mut i64) -> i64;

/// What callers of a compiled procedure need to know.
#[derive(Debug, Clone)]
struct Meta {
    params: Vec<Kind>,
    result: Option<Kind>,
    /// Whether it can end with a named outcome.
    named: bool,
}

struct Compiled {
    func: CompiledFn,
    params: Vec<Kind>,
    /// Kind of `result` values; `None` when the procedure only ends with named outcomes.
    result: Option<Kind>,
    /// Whether it can end with a named outcome.
    named: bool,
}

/// A program compiled once; its native code lives as long as this value.
pub struct JitProgram<'p> {
    program: &'p Program,
    assumptions: &'p Assumptions,
    module: Option<JITModule>,
    compiled: Vec<Option<Compiled>>,
    /// Why each procedure that was not compiled was left to the interpreter.
    pub skipped: Vec<(String, String)>,
    symbols: Vec<sandtable_ir::Str>,
    symbol_ids: HashMap<sandtable_ir::Str, i64>,
    /// Shared with the sampling loops, whose code reads non-standard faces from it.
    faces: Arc<Vec<Vec<i64>>>,
    pub compile_time: Duration,
}

/// A compiled procedure's raw result: a status and a 64-bit value of the procedure's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOutcome {
    pub status: i64,
    pub value: i64,
}

impl Drop for JitProgram<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: every function pointer into this module is owned by `self.compiled`,
            // which is dropped with `self`; nothing can call into the code after this point.
            unsafe { m.free_memory() };
        }
    }
}

fn kind_of_type(t: &Type) -> Option<Kind> {
    Some(match t {
        Type::Int | Type::Length => Kind::Int,
        Type::Bool => Kind::Bool,
        Type::Enum(_) | Type::Symbol => Kind::Sym,
        Type::Entity(_) => Kind::Entity,
        Type::Side => Kind::Side,
        _ => return None,
    })
}

impl<'p> JitProgram<'p> {
    /// Compile every resolution and procedure that the backend supports.
    pub fn compile(program: &'p Program, assumptions: &'p Assumptions) -> Result<Self, String> {
        let started = Instant::now();
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("this machine is not supported by the JIT: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let mut jp = JitProgram {
            program,
            assumptions,
            module: Some(module),
            compiled: (0..program.procs.len()).map(|_| None).collect(),
            skipped: Vec::new(),
            symbols: Vec::new(),
            symbol_ids: HashMap::new(),
            faces: Arc::new(program.dice.iter().map(|d| d.faces.clone()).collect()),
            compile_time: Duration::ZERO,
        };
        // Every symbol the program can hold gets its id before any code is generated, so
        // arguments and table cells decode to the same ids the code compares with.
        for e in &program.enums {
            for m in &e.members {
                jp.intern(m);
            }
        }
        for t in &program.tables {
            for v in t
                .columns
                .iter()
                .chain(t.rows.iter().flat_map(|r| r.cells.iter()))
            {
                if let Value::Symbol(s) = v {
                    jp.intern(s);
                }
            }
            for r in &t.rows {
                for k in &r.keys {
                    if let KeyPattern::Symbol(s) = k {
                        jp.intern(s);
                    }
                }
            }
        }
        for e in &program.entities {
            for (_, v) in &e.fields {
                if let Value::Symbol(s) = v {
                    jp.intern(s);
                }
            }
        }
        let mut ids: Vec<Option<FuncId>> = vec![None; program.procs.len()];
        let mut meta: Vec<Option<Meta>> = vec![None; program.procs.len()];
        let order = call_order(program);
        for p in order {
            // A fresh builder context per function: one abandoned half-way (unsupported
            // construct) leaves its context dirty.
            let mut fctx = FunctionBuilderContext::new();
            let def = &program.procs[p as usize];
            if def.kind == ProcKind::Hook {
                continue;
            }
            match jp.compile_one(p, &mut ids, &meta, &mut fctx) {
                Ok(m) => meta[p as usize] = Some(m),
                Err(Unsupported(why)) => jp.skipped.push((def.name.clone(), why)),
            }
        }
        let module = jp.module.as_mut().expect("module present until drop");
        module.finalize_definitions().map_err(|e| e.to_string())?;
        for (p, id) in ids.iter().enumerate() {
            if let (
                Some(id),
                Some(Meta {
                    params,
                    result,
                    named,
                }),
            ) = (id, meta[p].take())
            {
                let ptr = module.get_finalized_function(*id);
                // SAFETY: `ptr` is the finalized code of a function built with exactly the
                // signature `(i64, i64, i64) -> i64` that `CompiledFn` describes, using the
                // host's default calling convention, and it lives until `module` is freed.
                let func = unsafe { std::mem::transmute::<*const u8, CompiledFn>(ptr) };
                jp.compiled[p] = Some(Compiled {
                    func,
                    params,
                    result,
                    named,
                });
            }
        }
        jp.compile_time = started.elapsed();
        Ok(jp)
    }

    pub fn is_compiled(&self, proc: u32) -> bool {
        self.compiled
            .get(proc as usize)
            .is_some_and(Option::is_some)
    }

    fn intern(&mut self, s: &str) -> i64 {
        if let Some(i) = self.symbol_ids.get(s) {
            return *i;
        }
        let i = self.symbols.len() as i64;
        let s: sandtable_ir::Str = s.into();
        self.symbols.push(s.clone());
        self.symbol_ids.insert(s, i);
        i
    }

    fn encode(&mut self, v: &Val) -> Option<(i64, Kind)> {
        Some(match v {
            Val::Int(n) => (*n, Kind::Int),
            Val::Bool(b) => (i64::from(*b), Kind::Bool),
            Val::Sym(s) => (self.intern(s), Kind::Sym),
            Val::Entity(e) => (i64::from(*e), Kind::Entity),
            Val::Side(s) => (i64::from(*s), Kind::Side),
            _ => return None,
        })
    }

    fn compile_one(
        &mut self,
        proc: u32,
        ids: &mut [Option<FuncId>],
        meta: &[Option<Meta>],
        fctx: &mut FunctionBuilderContext,
    ) -> Result<Meta, Unsupported> {
        let def = &self.program.procs[proc as usize];
        let params: Vec<Kind> = def
            .params
            .iter()
            .map(|p| {
                kind_of_type(&p.ty).ok_or_else(|| {
                    Unsupported(format!(
                        "parameter `{}` has a type the JIT does not handle",
                        p.name
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let module = self.module.take().expect("module present");
        let mut sig = module.make_signature();
        sig.params
            .extend([AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I64)]);
        sig.returns.push(AbiParam::new(I64));
        let mut ctx = module.make_context();
        ctx.func.signature = sig.clone();
        self.module = Some(module);

        let mut fb = FunctionBuilder::new(&mut ctx.func, fctx);
        let entry = fb.create_block();
        fb.append_block_params_for_function_params(entry);
        fb.switch_to_block(entry);
        let (jctx, args, out) = {
            let p = fb.block_params(entry);
            (p[0], p[1], p[2])
        };
        let mut slots = Vec::with_capacity(def.n_slots as usize);
        for _ in 0..def.n_slots.max(def.params.len() as u32) {
            let v = fb.declare_var(I64);
            let zero = fb.ins().iconst(I64, 0);
            fb.def_var(v, zero);
            slots.push(v);
        }
        for (i, _) in def.params.iter().enumerate() {
            let v = fb
                .ins()
                .load(I64, MemFlagsData::new(), args, (i * 8) as i32);
            fb.def_var(slots[i], v);
        }
        let mut slot_kinds: Vec<Option<Kind>> = vec![None; slots.len()];
        for (i, k) in params.iter().enumerate() {
            slot_kinds[i] = Some(*k);
        }
        let local_types = def.params.iter().map(|p| Some(p.ty.clone())).collect();
        let mut cg = Codegen {
            jp: self,
            fb,
            jctx,
            out,
            slots,
            slot_kinds,
            local_types,
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
            sink: codegen::Sink::Return,
            dice_regs: None,
            error_bail: None,
            slot_consts: Vec::new(),
            fold: false,
            inlined: 0,
            dead: false,
            jump_rets: Vec::new(),
        };
        let body = &cg.jp.program.procs[proc as usize].body;
        let r = cg.block(body);
        if r.is_ok() {
            // Close the body's last block before the shared exits are filled in.
            if !cg.fb.is_unreachable() {
                let st = cg.fb.ins().iconst(I64, ST_NOTHING);
                cg.fb.ins().return_(&[st]);
            }
            cg.finish_exits();
        }
        let result = cg.result;
        let named = cg.named;
        let mut fb = cg.fb;
        match r {
            Ok(()) => {}
            Err(e) => {
                // The half-built function is abandoned; no module state refers to it yet.
                return Err(e);
            }
        }
        fb.seal_all_blocks();
        let module = self.module.as_mut().expect("module present");
        fb.finalize(module.target_config());
        let id = module
            .declare_function(&format!("p{proc}"), Linkage::Local, &sig)
            .map_err(|e| Unsupported(e.to_string()))?;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        module
            .define_function(id, &mut ctx)
            .map_err(|e| Unsupported(format!("code generation failed: {e:?}")))?;
        module.clear_context(&mut ctx);
        ids[proc as usize] = Some(id);
        Ok(Meta {
            params,
            result,
            named,
        })
    }

    /// Encode arguments for [`JitProgram::run_raw`]; `None` when the procedure was not
    /// compiled, an error when an argument does not fit its parameter.
    pub fn encode_args(&self, proc: u32, args: &[Val]) -> Option<Result<Vec<i64>, RunError>> {
        let c = self.compiled.get(proc as usize)?.as_ref()?;
        let mut raw = Vec::with_capacity(args.len());
        for (a, k) in args.iter().zip(&c.params) {
            let v = match (a, k) {
                (Val::Int(n), Kind::Int) => *n,
                (Val::Bool(b), Kind::Bool) => i64::from(*b),
                (Val::Sym(s), Kind::Sym) => self.symbol_ids.get(&**s).copied().unwrap_or(-1),
                (Val::Entity(e), Kind::Entity) => i64::from(*e),
                (Val::Side(s), Kind::Side) => i64::from(*s),
                _ => {
                    return Some(Err(RunError::Type(format!(
                        "argument {} does not fit the compiled parameter",
                        a.show(self.program)
                    ))));
                }
            };
            raw.push(v);
        }
        Some(Ok(raw))
    }

    /// Run a compiled procedure on encoded arguments: no allocation on the way in or out.
    ///
    /// # Panics
    /// Never for arguments from [`JitProgram::encode_args`]; `proc` must be compiled.
    pub fn run_raw(&self, proc: u32, raw: &[i64], dice: &mut Dice) -> Result<RawOutcome, RunError> {
        let Some(Some(c)) = self.compiled.get(proc as usize) else {
            return Err(RunError::Type("procedure not compiled".into()));
        };
        if raw.len() < c.params.len() {
            return Err(RunError::Type("too few arguments".into()));
        }
        let interp = Interp::new(self.program, self.assumptions);
        let mut ctx = JitCtx {
            failed: 0,
            dice,
            interp: &interp,
            symbols: &self.symbols,
            faces: &*self.faces,
            pools: Vec::new(),
            error: None,
            proc,
        };
        let mut out: i64 = 0;
        let status = (c.func)(&mut ctx, raw.as_ptr(), &mut out);
        if status == ST_ERROR {
            return Err(ctx
                .error
                .take()
                .map_or(RunError::Type("compiled code failed".into()), |e| *e)
                .at(self.program, proc, None));
        }
        Ok(RawOutcome { status, value: out })
    }

    /// The compiled sampling loop of `proc` on these arguments (from
    /// [`JitProgram::encode_args`]), which it is specialised for ([`Sampler`]); `None` when
    /// `proc` was not compiled.
    pub fn sampler(&self, proc: u32, args: &[i64]) -> Result<Option<Sampler<'_, 'p>>, String> {
        Sampler::new(self, proc, args)
    }

    /// Decode a raw result into the interpreter's outcome.
    pub fn decode_outcome(&self, proc: u32, r: RawOutcome) -> OutcomeKey {
        let kind = self
            .compiled
            .get(proc as usize)
            .and_then(|c| c.as_ref())
            .and_then(|c| c.result)
            .unwrap_or(Kind::Int);
        match r.status {
            ST_NAMED => OutcomeKey::Named(
                self.symbols
                    .get(r.value as usize)
                    .cloned()
                    .unwrap_or_default(),
            ),
            ST_VALUE => OutcomeKey::of_value(decode(r.value, kind, &self.symbols)),
            _ => OutcomeKey::Nothing,
        }
    }

    /// Run a compiled procedure. `None` when it was not compiled, or when an argument is one
    /// the compiled code cannot hold (a piece on the board, whose stat line the game looks up,
    /// passed for an entity parameter): the interpreter runs it instead, with the same result.
    pub fn run(
        &self,
        proc: u32,
        args: &[Val],
        dice: &mut Dice,
    ) -> Option<Result<Outcome, RunError>> {
        let raw = self.encode_args(proc, args)?.ok()?;
        Some(self.run_raw(proc, &raw, dice).map(|r| Outcome {
            key: self.decode_outcome(proc, r),
            effects: Vec::new(),
        }))
    }
}

fn decode(v: i64, k: Kind, symbols: &[sandtable_ir::Str]) -> Val {
    match k {
        Kind::Int => Val::Int(v),
        Kind::Bool => Val::Bool(v != 0),
        Kind::Sym => Val::Sym(symbols.get(v as usize).cloned().unwrap_or_default()),
        Kind::Entity => Val::Entity(v as u32),
        Kind::Side => Val::Side(v as u32),
    }
}

/// Procedures ordered callees first; procedures in a call cycle come last and will fail to
/// compile (their callees are not ready), leaving them to the interpreter.
fn call_order(program: &Program) -> Vec<u32> {
    fn visit(p: usize, callees: &[Vec<u32>], state: &mut [u8], order: &mut Vec<u32>) {
        if state[p] != 0 {
            return;
        }
        state[p] = 1;
        for c in &callees[p] {
            visit(*c as usize, callees, state, order);
        }
        state[p] = 2;
        order.push(p as u32);
    }
    let n = program.procs.len();
    let callees: Vec<Vec<u32>> = program.procs.iter().map(ir::ProcDef::callees).collect();
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for p in 0..n {
        visit(p, &callees, &mut state, &mut order);
    }
    order
}

// ------------------------------------------------------------------ backends

/// Which engine runs rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Interp,
    Jit,
}

impl BackendKind {
    /// As on the command line and in game logs.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Interp => "interp",
            BackendKind::Jit => "jit",
        }
    }
}

/// One interface over both engines: the JIT where a procedure compiled, the interpreter
/// everywhere else (and everywhere when the JIT is not available on this machine).
pub struct Backend<'p> {
    pub program: &'p Program,
    pub assumptions: &'p Assumptions,
    pub jit: Option<JitProgram<'p>>,
}

impl<'p> Backend<'p> {
    pub fn new(
        program: &'p Program,
        assumptions: &'p Assumptions,
        kind: BackendKind,
    ) -> Result<Self, String> {
        let jit = match kind {
            BackendKind::Interp => None,
            BackendKind::Jit => Some(JitProgram::compile(program, assumptions)?),
        };
        Ok(Backend {
            program,
            assumptions,
            jit,
        })
    }

    pub fn run(
        &self,
        proc: u32,
        args: &[Val],
        dice: &mut Dice,
        host: &mut dyn Host,
    ) -> Result<Outcome, RunError> {
        if let Some(j) = &self.jit
            && let Some(r) = j.run(proc, args, dice)
        {
            return r;
        }
        let interp = Interp::new(self.program, self.assumptions);
        let mut ctx = Ctx::new(dice, host);
        interp.run(proc, args.to_vec(), &mut ctx)
    }
}
