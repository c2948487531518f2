//! What the scenario alone decides. A game's options are fixed when it starts, so a
//! procedure whose whole body is `result E`, where `E` reads nothing but constants, the
//! assumptions' answers and `option(NAME)`, gives one result for the whole game: Platoon's
//! `carry_load` is 0 unless the scenario plays `carry_bodies`, Plastic Battle's
//! `legs_per_move` is what the assumptions say. Guards call such procedures at every place
//! they test, so the engine answers them from a table made once instead of running them.

use sandtable_ir::{BinOp, Builtin, EngineFn, Expr, ProcKind, Program, Stmt, UnOp, Value};

use crate::interp::{Assumptions, Interp};
use crate::value::Val;

/// Per procedure: its result in every game of a scenario playing `options`, when that
/// alone decides it. Only plain procedures (a resolution's result is logged with its dice)
/// whose result is a number or a condition are answered.
pub(crate) fn constant_results(
    program: &Program,
    assumptions: &Assumptions,
    options: &[String],
) -> Vec<Option<Val>> {
    let interp = Interp::new(program, assumptions);
    program
        .procs
        .iter()
        .map(|p| match p.body.as_slice() {
            [Stmt::Result(e)] if p.kind == ProcKind::Procedure => {
                fold(&interp, options, e).filter(|v| matches!(v, Val::Int(_) | Val::Bool(_)))
            }
            _ => None,
        })
        .collect()
}

/// `e`'s value when constants and the options decide it, evaluated as the interpreter
/// would: `and`, `or` and `if` look at their second part (or branch) only when the first
/// leaves it to them, so a `?` in a branch the options shut is never read.
fn fold(interp: &Interp, options: &[String], e: &Expr) -> Option<Val> {
    let cond = |e: &Expr| match fold(interp, options, e)? {
        Val::Bool(b) => Some(b),
        _ => None,
    };
    match e {
        // A `?` the assumptions answer is as fixed as a number; one they leave open is
        // left to the run, which reports it where the rule reads it.
        Expr::Const(v) => interp.constant(v).ok(),
        Expr::Host {
            func: EngineFn::Option,
            args,
        } => match args.as_slice() {
            [Expr::Const(Value::Text(name) | Value::Symbol(name))] => {
                Some(Val::Bool(options.iter().any(|o| **o == **name)))
            }
            _ => None,
        },
        Expr::Unary {
            op: UnOp::Not,
            operand,
        } => cond(operand).map(|b| Val::Bool(!b)),
        Expr::Binary {
            op: BinOp::And,
            lhs,
            rhs,
        } => match cond(lhs)? {
            false => Some(Val::Bool(false)),
            true => cond(rhs).map(Val::Bool),
        },
        Expr::Binary {
            op: BinOp::Or,
            lhs,
            rhs,
        } => match cond(lhs)? {
            true => Some(Val::Bool(true)),
            false => cond(rhs).map(Val::Bool),
        },
        Expr::If {
            cond: c,
            then,
            otherwise,
        } => fold(interp, options, if cond(c)? { then } else { otherwise }),
        _ => None,
    }
}

/// Whether evaluating `e` cannot draw dice: it rolls nothing itself and calls only
/// procedures whose result is fixed (`constant`, from [`constant_results`]), which never run.
/// Engine functions are given no dice.
pub(crate) fn dice_free(e: &Expr, constant: &[Option<Val>]) -> bool {
    let mut free = true;
    e.walk(&mut |x| match x {
        Expr::Roll(_)
        | Expr::Dice { .. }
        | Expr::Builtin {
            func: Builtin::Pool | Builtin::Reroll,
            ..
        } => free = false,
        Expr::Call { proc, .. } if constant.get(*proc as usize).is_none_or(Option::is_none) => {
            free = false
        }
        _ => {}
    });
    free
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(name: &str) -> Expr {
        Expr::Host {
            func: EngineFn::Option,
            args: vec![Expr::Const(Value::Text(name.into()))],
        }
    }

    fn int(n: i64) -> Box<Expr> {
        Box::new(Expr::Const(Value::Int(n)))
    }

    /// `e` folded in a program with one `?` (id 0), answered by `assumed` when given.
    fn folded_with(assumed: Option<i64>, options: &[&str], e: &Expr) -> Option<Val> {
        let program = Program {
            unknowns: vec![sandtable_ir::UnknownDef {
                name: "legs_per_move".into(),
                note: None,
                file: "turn.sand".into(),
                line: 1,
                column: 1,
                cite: Default::default(),
                ty: None,
            }],
            ..Program::default()
        };
        let mut assumptions = Assumptions::default();
        if let Some(n) = assumed {
            assumptions.values.insert(0, Val::Int(n));
        }
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        fold(&Interp::new(&program, &assumptions), &options, e)
    }

    fn folded(options: &[&str], e: &Expr) -> Option<Val> {
        folded_with(None, options, e)
    }

    #[test]
    fn an_option_the_scenario_does_not_play_shuts_its_branch() {
        // `if option("carry_bodies") then counter(...) * carry_cost() else 0`: the branch
        // the option shuts reads the game; it is never looked at.
        let e = Expr::If {
            cond: Box::new(option("carry_bodies")),
            then: Box::new(Expr::Local(0)),
            otherwise: int(0),
        };
        assert_eq!(folded(&[], &e), Some(Val::Int(0)));
        assert_eq!(folded(&["carry_bodies"], &e), None);
    }

    #[test]
    fn and_or_and_not_read_their_second_part_only_when_needed() {
        let and = Expr::Binary {
            op: BinOp::And,
            lhs: Box::new(option("night")),
            rhs: Box::new(Expr::Local(0)),
        };
        assert_eq!(folded(&[], &and), Some(Val::Bool(false)));
        assert_eq!(folded(&["night"], &and), None);
        let or = Expr::Binary {
            op: BinOp::Or,
            lhs: Box::new(Expr::Unary {
                op: UnOp::Not,
                operand: Box::new(option("night")),
            }),
            rhs: Box::new(Expr::Local(0)),
        };
        assert_eq!(folded(&[], &or), Some(Val::Bool(true)));
        assert_eq!(folded(&["night"], &or), None);
    }

    #[test]
    fn a_guard_that_rolls_or_runs_a_procedure_may_draw_dice() {
        let roll = Expr::Binary {
            op: BinOp::Gt,
            lhs: Box::new(Expr::Roll(0)),
            rhs: int(3),
        };
        assert!(!dice_free(&roll, &[]));
        let call = |proc| Expr::Call {
            proc,
            args: Vec::new(),
        };
        let constant = [Some(Val::Int(0)), None];
        assert!(dice_free(&call(0), &constant));
        assert!(!dice_free(&call(1), &constant));
        assert!(dice_free(&option("night"), &constant));
    }

    #[test]
    fn a_value_the_assumptions_answer_is_folded_and_one_they_leave_open_is_not() {
        let unknown = Expr::Const(Value::Unknown(0));
        assert_eq!(folded_with(Some(3), &[], &unknown), Some(Val::Int(3)));
        assert_eq!(folded_with(None, &[], &unknown), None);
    }
}
