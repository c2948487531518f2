//! The runtime services compiled code calls: `extern "C"` functions that receive the context
//! of the current call. Each dereferences raw pointers that `JitProgram::run_raw` set up for
//! that call only.

use sandtable_ir::{self as ir, Value};

use super::codegen::kind_from_code;
use super::{E_DIV_ZERO, E_NO_BAND, E_OVERFLOW, E_UNKNOWN, P_COUNT, P_HIGHEST, P_SUCCESSES, P_SUM};
use super::{JitCtx, Kind, decode};
use crate::error::RunError;
use crate::interp::{Ctx, Interp, NoGame};
use crate::rng::Dice;
use crate::value::Val;

/// Borrow the context behind the pointer compiled code passes back.
///
/// # Safety
/// `ctx` must be the `JitCtx` that [`JitProgram::run`] created for this call; it outlives the
/// call and nothing else borrows it meanwhile.
unsafe fn cx<'a>(ctx: *mut JitCtx<'a>) -> &'a mut JitCtx<'a> {
    // SAFETY: guaranteed by the caller (see above).
    unsafe { &mut *ctx }
}

pub(super) fn fail(c: &mut JitCtx, e: RunError) -> i64 {
    c.failed = 1;
    c.error = Some(Box::new(e));
    0
}

pub(super) fn interp<'a>(c: &JitCtx<'a>) -> &'a Interp<'a> {
    // SAFETY: `interp` points at the interpreter `JitProgram::run` keeps alive for the call.
    unsafe { &*c.interp }
}

pub(super) fn dice<'a>(c: &mut JitCtx<'a>) -> &'a mut Dice {
    // SAFETY: `dice` points at the caller's `Dice`, exclusively borrowed for the call.
    unsafe { &mut *c.dice }
}

/// One roll of `die`, straight from the face table; the interpreter's error for a die the
/// book never describes.
pub(super) fn roll_fast(c: &mut JitCtx, die: i64) -> Result<i64, RunError> {
    // SAFETY: `faces` points at the face table of the `JitProgram` running this call.
    let faces = unsafe { &*c.faces };
    match faces.get(die as usize) {
        Some(f) if !f.is_empty() => Ok(f[dice(c).index(f.len() as u32) as usize]),
        _ => {
            let mut host = NoGame;
            let mut rctx = Ctx::new(dice(c), &mut host);
            interp(c).roll(die as u32, &mut rctx)
        }
    }
}

/// A face index in `0..n` from the one dice stream: the whole of a roll of a known die.
pub(super) extern "C" fn jit_index(ctx: *mut JitCtx, n: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    i64::from(dice(c).index(n as u32))
}

pub(super) extern "C" fn jit_roll(ctx: *mut JitCtx, die: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    match roll_fast(c, die) {
        Ok(v) => v,
        Err(e) => fail(c, e),
    }
}

/// Roll `n` dice and fold them on the way: their sum (`sum != 0`) or how many land in
/// `[lo, hi]`. No pool is kept.
pub(super) extern "C" fn jit_pool_fold(
    ctx: *mut JitCtx,
    n: i64,
    die: i64,
    lo: i64,
    hi: i64,
    sum: i64,
) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    if let Err(e) = crate::interp::pool_size(n) {
        return fail(c, e);
    }
    // SAFETY: `faces` points at the face table of the `JitProgram` running this call.
    let table = unsafe { &*c.faces };
    let faces = match table.get(die as usize) {
        Some(f) if !f.is_empty() => f,
        _ => {
            return match roll_fast(c, die) {
                Ok(_) => fail(c, RunError::Type("die without faces".into())),
                Err(e) => fail(c, e),
            };
        }
    };
    let len = faces.len() as u32;
    let d = dice(c);
    let mut acc: i64 = 0;
    for _ in 0..n {
        let v = faces[d.index(len) as usize];
        if sum != 0 {
            acc = match acc.checked_add(v) {
                Some(a) => a,
                None => return fail(c, RunError::Overflow),
            };
        } else if v >= lo && v <= hi {
            acc += 1;
        }
    }
    acc
}

pub(super) extern "C" fn jit_pool_roll(ctx: *mut JitCtx, n: i64, die: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    if die < 0 {
        c.pools.push(vec![n]);
        return 0;
    }
    if let Err(e) = crate::interp::pool_size(n) {
        return fail(c, e);
    }
    let mut pool = Vec::with_capacity(n as usize);
    for _ in 0..n {
        match roll_fast(c, die) {
            Ok(v) => pool.push(v),
            Err(e) => return fail(c, e),
        }
    }
    c.pools.push(pool);
    0
}

pub(super) extern "C" fn jit_pool_reduce(ctx: *mut JitCtx, op: i64, a: i64, b: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let mut p = c.pools.pop().unwrap_or_default();
    match op {
        P_SUM => p.iter().sum(),
        P_SUCCESSES => p.iter().filter(|x| **x >= a).count() as i64,
        P_COUNT => p.iter().filter(|x| **x >= a && **x <= b).count() as i64,
        _ => {
            p.sort_unstable();
            if op == P_HIGHEST {
                p.reverse();
            }
            p.iter().take(a.max(0) as usize).sum()
        }
    }
}

pub(super) extern "C" fn jit_reroll(ctx: *mut JitCtx, die: i64, lo: i64, hi: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let first = match roll_fast(c, die) {
        Ok(v) => v,
        Err(e) => return fail(c, e),
    };
    if first < lo || first > hi {
        return first;
    }
    match roll_fast(c, die) {
        Ok(v) => v,
        Err(e) => fail(c, e),
    }
}

pub(super) fn symbol<'a>(c: &JitCtx<'a>, id: i64) -> sandtable_ir::Str {
    // SAFETY: `symbols` points at the program's symbol table, alive for the call.
    let s = unsafe { &*c.symbols };
    s.get(id as usize).cloned().unwrap_or_default()
}

pub(super) fn encode_cell(c: &mut JitCtx, v: Val) -> i64 {
    match v {
        Val::Int(n) => n,
        Val::Bool(b) => i64::from(b),
        Val::Entity(e) => i64::from(e),
        Val::Side(s) => i64::from(s),
        Val::Sym(s) => {
            // SAFETY: `symbols` points at the program's symbol table, alive for the call.
            let table = unsafe { &*c.symbols };
            match table.iter().position(|x| *x == s) {
                Some(i) => i as i64,
                None => fail(
                    c,
                    RunError::Type(format!("`{s}` is not a symbol the compiled code knows")),
                ),
            }
        }
        other => fail(
            c,
            RunError::Type(format!("a value the compiled code cannot hold: {other:?}")),
        ),
    }
}

pub(super) extern "C" fn jit_lookup(
    ctx: *mut JitCtx,
    table: i64,
    n: i64,
    k0: i64,
    c0: i64,
    k1: i64,
    c1: i64,
) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let dec = |c: &JitCtx, v: i64, code: i64| match kind_from_code(code) {
        Kind::Sym => Val::Sym(symbol(c, v)),
        k => decode(v, k, &[]),
    };
    let mut keys = vec![dec(c, k0, c0)];
    if n > 1 {
        keys.push(dec(c, k1, c1));
    }
    match interp(c).lookup(table as u32, &keys) {
        Ok(v) => encode_cell(c, v),
        Err(e) => fail(c, e),
    }
}

pub(super) extern "C" fn jit_field(ctx: *mut JitCtx, entity: i64, field: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let name = symbol(c, field);
    match interp(c).field(&Val::Entity(entity as u32), &name) {
        Ok(v) => encode_cell(c, v),
        Err(e) => fail(c, e),
    }
}

/// `e` placed at statement `stmt` (its place in [`ir::stmts_post_order`], -1 for none) of
/// procedure `proc`, as the interpreter places its errors.
fn place(program: &ir::Program, proc: i64, stmt: i64, e: RunError) -> RunError {
    let Ok(proc) = u32::try_from(proc) else {
        return e;
    };
    let addr = usize::try_from(stmt)
        .ok()
        .and_then(|i| {
            program
                .procs
                .get(proc as usize)
                .and_then(|p| ir::stmts_post_order(&p.body).get(i).copied())
        })
        .map_or(0, |s| std::ptr::from_ref(s).addr());
    e.at_addr(program, proc, addr)
}

/// A callback of statement `stmt` of `proc` reported an error: name that statement in it.
pub(super) extern "C" fn jit_place(ctx: *mut JitCtx, proc: i64, stmt: i64) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let program = interp(c).program;
    if let Some(e) = c.error.take() {
        c.error = Some(Box::new(place(program, proc, stmt, *e)));
    }
    0
}

pub(super) extern "C" fn jit_fail(
    ctx: *mut JitCtx,
    code: i64,
    detail: i64,
    proc: i64,
    stmt: i64,
) -> i64 {
    // SAFETY: called only from compiled code with the context of the current call.
    let c = unsafe { cx(ctx) };
    let program = interp(c).program;
    let e = match code {
        E_OVERFLOW => RunError::Overflow,
        E_DIV_ZERO => RunError::DivZero,
        E_NO_BAND => RunError::NoBand {
            value: detail.to_string(),
            proc: program
                .procs
                .get(usize::try_from(proc).unwrap_or(usize::MAX))
                .map(|p| p.name.clone())
                .unwrap_or_default(),
        },
        E_UNKNOWN => match interp(c).constant(&Value::Unknown(detail as u32)) {
            Err(e) => e,
            Ok(_) => RunError::Type("assumption missing at compile time".into()),
        },
        _ => RunError::Type("a called procedure gave no result".into()),
    };
    fail(c, place(program, proc, stmt, e))
}
