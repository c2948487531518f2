//! What the scenario alone decides. A game's options are fixed when it starts, so a
//! procedure whose whole body is `result E`, where `E` reads nothing but constants, the
//! assumptions' answers and `option(NAME)`, gives one result for the whole game: Platoon's
//! `carry_load` is 0 unless the scenario plays `carry_bodies`, Plastic Battle's
//! `legs_per_move` is what the assumptions say. Guards call such procedures at every place
//! they test, so the engine answers them from a table made once instead of running them.

use sandtable_ir::{
    BinOp, Builtin, EngineFn, EntityId, Expr, ProcKind, Program, Stmt, UnOp, Value,
};

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

/// `body` of a procedure whose parameter `slot` is known to be a piece of entity `entity`,
/// with what that decides folded away: `is(p, KIND)` and `is(p, UNIT)` become constants,
/// and the `if`s, `and`s, `or`s and `not`s they settle are cut to the branch taken. Run in
/// the procedure's frame, it gives the same result for such a piece. `None` when nothing
/// folds. (A force's `deploy_check:` tests the piece's kind first, at every place offered.)
pub(crate) fn for_piece(
    program: &Program,
    body: &[Stmt],
    slot: u32,
    entity: EntityId,
) -> Option<Vec<Stmt>> {
    let known = Known {
        program,
        slot,
        entity,
    };
    let mut folded = false;
    let mut out = known.block(body, &mut folded);
    if folded {
        drop_dead_lets(&mut out);
    }
    folded.then_some(out)
}

/// Remove the `let`s of `body` (top level) whose slot nothing reads, when their value can
/// neither fail nor change the game: folding often leaves a test only the cut branches read
/// (`marker_here` of a soldier's set-up check). Bodies with statements whose expressions are
/// not walked here are left whole.
fn drop_dead_lets(body: &mut Vec<Stmt>) {
    fn exprs<'a>(s: &'a Stmt, out: &mut Vec<&'a Expr>) -> bool {
        match s {
            Stmt::Let { value: e, .. } | Stmt::Result(e) | Stmt::Require(e) | Stmt::Expr(e) => {
                out.push(e);
                true
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                out.push(cond);
                then.iter().chain(otherwise).all(|s| exprs(s, out))
            }
            _ => false,
        }
    }
    let mut all = Vec::new();
    if !body.iter().all(|s| exprs(s, &mut all)) {
        return;
    }
    let mut read = std::collections::HashSet::new();
    for e in &all {
        e.walk(&mut |x| {
            if let Expr::Local(slot) = x {
                read.insert(*slot);
            }
        });
    }
    body.retain(|s| match s {
        Stmt::Let { slot, value } => read.contains(slot) || !quiet(value),
        _ => true,
    });
}

/// Whether evaluating `e` can neither fail nor change anything: slots, known constants,
/// `not`, `and`, `or`, comparisons, and engine functions that only look (not effects).
fn quiet(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        ok &= match x {
            Expr::Local(_) => true,
            Expr::Const(v) => !matches!(v, Value::Unknown(_)),
            Expr::Unary { op: UnOp::Not, .. } => true,
            Expr::Binary { op, .. } => matches!(
                op,
                BinOp::And
                    | BinOp::Or
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
            ),
            Expr::Host { func, .. } => func.ret() != sandtable_ir::functions::Ret::Effect,
            _ => false,
        }
    });
    ok
}

struct Known<'a> {
    program: &'a Program,
    slot: u32,
    entity: EntityId,
}

impl Known<'_> {
    fn block(&self, body: &[Stmt], folded: &mut bool) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => match self.expr(cond, folded) {
                    // A settled `if` is its branch: the slots are the procedure's, so the
                    // branch's statements run the same spliced in.
                    Expr::Const(Value::Bool(b)) => {
                        out.extend(self.block(if b { then } else { otherwise }, folded));
                    }
                    cond => out.push(Stmt::If {
                        cond,
                        then: self.block(then, folded),
                        otherwise: self.block(otherwise, folded),
                    }),
                },
                Stmt::Let { slot, value } => out.push(Stmt::Let {
                    slot: *slot,
                    value: self.expr(value, folded),
                }),
                Stmt::Result(e) => out.push(Stmt::Result(self.expr(e, folded))),
                Stmt::Require(e) => out.push(Stmt::Require(self.expr(e, folded))),
                other => out.push(other.clone()),
            }
        }
        out
    }

    /// `e` with the known piece's `is` tests settled. `and` and `or` fold only on their
    /// first part, which the interpreter evaluates first (the checker makes both parts
    /// conditions, so `true and X` is `X`).
    fn expr(&self, e: &Expr, folded: &mut bool) -> Expr {
        let bool_of = |e: &Expr| match e {
            Expr::Const(Value::Bool(b)) => Some(*b),
            _ => None,
        };
        match e {
            Expr::Host {
                func: EngineFn::Is,
                args,
            } => match args.as_slice() {
                [Expr::Local(s), Expr::Const(what)] if *s == self.slot => {
                    let ent = &self.program.entities[self.entity as usize];
                    let is = match what {
                        Value::Entity(e) => Some(*e == self.entity),
                        Value::Kind(k) => Some(ent.kind == Some(*k)),
                        _ => None,
                    };
                    match is {
                        Some(b) => {
                            *folded = true;
                            Expr::Const(Value::Bool(b))
                        }
                        None => e.clone(),
                    }
                }
                _ => e.clone(),
            },
            Expr::Unary {
                op: UnOp::Not,
                operand,
            } => {
                let o = self.expr(operand, folded);
                match bool_of(&o) {
                    Some(b) => Expr::Const(Value::Bool(!b)),
                    None => Expr::Unary {
                        op: UnOp::Not,
                        operand: Box::new(o),
                    },
                }
            }
            Expr::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                lhs,
                rhs,
            } => {
                let l = self.expr(lhs, folded);
                let decides = *op == BinOp::Or;
                match bool_of(&l) {
                    // `false and X`, `true or X`: X is never evaluated.
                    Some(b) if b == decides => Expr::Const(Value::Bool(b)),
                    Some(_) => self.expr(rhs, folded),
                    None => Expr::Binary {
                        op: *op,
                        lhs: Box::new(l),
                        rhs: Box::new(self.expr(rhs, folded)),
                    },
                }
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond, folded);
                match bool_of(&c) {
                    Some(b) => self.expr(if b { then } else { otherwise }, folded),
                    None => Expr::If {
                        cond: Box::new(c),
                        then: Box::new(self.expr(then, folded)),
                        otherwise: Box::new(self.expr(otherwise, folded)),
                    },
                }
            }
            other => other.clone(),
        }
    }
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
    fn a_check_that_tests_the_pieces_kind_keeps_only_the_branch_of_that_kind() {
        // if is(p, fortification) { result false } else { if is(p, soldier) { result
        // count_units(at) == 0 } else { result true } }, for a piece of kind 1 (soldier).
        let entity = |kind| sandtable_ir::EntityDef {
            name: "rifleman".into(),
            category: sandtable_ir::Category::Unit,
            kind: Some(kind),
            side: None,
            title: None,
            fields: Vec::new(),
            cite: Default::default(),
        };
        let program = Program {
            entities: vec![entity(0), entity(1)],
            ..Program::default()
        };
        let is = |k| Expr::Host {
            func: EngineFn::Is,
            args: vec![Expr::Local(0), Expr::Const(Value::Kind(k))],
        };
        let empty = Expr::Binary {
            op: BinOp::Eq,
            lhs: Box::new(Expr::Host {
                func: EngineFn::CountUnits,
                args: vec![Expr::Local(1)],
            }),
            rhs: int(0),
        };
        let body = vec![Stmt::If {
            cond: is(0),
            then: vec![Stmt::Result(Expr::Const(Value::Bool(false)))],
            otherwise: vec![Stmt::If {
                cond: Expr::Binary {
                    op: BinOp::And,
                    lhs: Box::new(is(1)),
                    rhs: Box::new(Expr::Local(2)),
                },
                then: vec![Stmt::Result(empty.clone())],
                otherwise: vec![Stmt::Result(Expr::Const(Value::Bool(true)))],
            }],
        }];
        let soldier = for_piece(&program, &body, 0, 1).unwrap();
        assert_eq!(
            soldier,
            vec![Stmt::If {
                cond: Expr::Local(2),
                then: vec![Stmt::Result(empty)],
                otherwise: vec![Stmt::Result(Expr::Const(Value::Bool(true)))],
            }]
        );
        // A test only the cut branch read goes with it; one read later stays.
        let marker = |slot| Stmt::Let {
            slot,
            value: Expr::Host {
                func: EngineFn::HasMarker,
                args: vec![Expr::Local(1), Expr::Const(Value::Entity(0))],
            },
        };
        let with_lets = vec![
            marker(3),
            marker(4),
            Stmt::If {
                cond: is(0),
                then: vec![Stmt::Result(Expr::Local(3))],
                otherwise: vec![Stmt::Result(Expr::Local(4))],
            },
        ];
        assert_eq!(
            for_piece(&program, &with_lets, 0, 1).unwrap(),
            vec![marker(4), Stmt::Result(Expr::Local(4))]
        );
        let fort = for_piece(&program, &body, 0, 0).unwrap();
        assert_eq!(fort, vec![Stmt::Result(Expr::Const(Value::Bool(false)))]);
        // Another parameter's kind is not known: nothing folds.
        assert_eq!(for_piece(&program, &body, 1, 1), None);
    }

    #[test]
    fn a_value_the_assumptions_answer_is_folded_and_one_they_leave_open_is_not() {
        let unknown = Expr::Const(Value::Unknown(0));
        assert_eq!(folded_with(Some(3), &[], &unknown), Some(Val::Int(3)));
        assert_eq!(folded_with(None, &[], &unknown), None);
    }
}
