//! Calls: modifier stacks, procedures, engine functions and built-in dice functions.

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::expr::{MAX_POOL, Scope, Typed, numeric};
use super::{Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::functions::{Param, ParamTy, Values};
use crate::ir::{self, Builtin, EngineFn, Expr, Type, Value};
use crate::reach::{Reach, ceil_div};
use crate::source::FileId;

impl<'a> Lowerer<'a> {
    pub(crate) fn lower_call(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Typed {
        let name = callee.name.as_str();
        if scope.find(name).is_none() {
            match self.globals.get(name).map(|d| d.sym) {
                Some(Sym::Stack(s)) => {
                    self.lookup(name);
                    return self.lower_stack_call(file, scope, s, callee, args, span, path);
                }
                Some(Sym::Proc(p)) => {
                    self.lookup(name);
                    let params = self.program.procs[p as usize].params.clone();
                    let lowered = self.lower_args(file, scope, &params, args, callee, span, path);
                    let mut t = Typed::any(Expr::Call {
                        proc: p,
                        args: lowered.0,
                    });
                    t.die = true;
                    return t;
                }
                Some(other) => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::TypeNotCallable,
                            file,
                            callee.span,
                            format!("`{name}` is a {}, not something to call", other.describe()),
                        )
                        .label("not callable")
                        .help(match other {
                            Sym::Table(_) => format!("look tables up with brackets: `{name}[…]`"),
                            _ => "call procedures, resolutions, stacks and built-in functions"
                                .to_string(),
                        }),
                    );
                    return Typed::error();
                }
                None => {}
            }
        }
        if let Some(t) = self.lower_builtin(file, scope, callee, args, span, path) {
            return t;
        }
        if let Some(func) = EngineFn::named(name) {
            return self.lower_engine_call(file, scope, func, args, span, path);
        }
        let visible = scope.visible();
        let help = match self.suggest(name, &visible) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "define it with `procedure NAME(…) { … }`, or use a built-in: min, max, clamp, abs, div_up, pool, sum, highest, lowest, successes, count, reroll".to_string(),
        };
        // A definition with a syntax error: that error is the one to fix.
        if !self.broken.contains(name) {
            self.diags.push(
                Diagnostic::new(
                    Code::ResolveUnknownName,
                    file,
                    callee.span,
                    format!("cannot find function `{name}`"),
                )
                .label("not found")
                .help(help),
            );
        }
        for a in args {
            self.lower_expr(file, scope, &a.value, path);
        }
        Typed::error()
    }

    /// A call of an engine function, typed from its row of the table.
    fn lower_engine_call(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        func: EngineFn,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Typed {
        let name = func.name();
        let (min, max) = (func.min_args(), func.max_args());
        if args.len() < min || args.len() > max {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeArity,
                    file,
                    span,
                    format!(
                        "`{name}` takes {}; {} given",
                        if min == max {
                            format!("{min} argument{}", if min == 1 { "" } else { "s" })
                        } else {
                            format!("{min} to {max} arguments")
                        },
                        args.len()
                    ),
                )
                .label("wrong number of arguments")
                .help(format!(
                    "call it as `{}` (see the list of engine functions in docs/language.md)",
                    func.signature()
                )),
            );
        }
        let typed: Vec<Typed> = args
            .iter()
            .map(|a| self.lower_expr(file, scope, &a.value, path))
            .collect();
        for ((param, arg), t) in func.params().iter().zip(args).zip(&typed) {
            if let Some(d) = self.engine_arg_mismatch(file, func, param, arg, t) {
                self.diags.push(d);
            }
        }
        let mut lowered: Vec<Expr> = typed.into_iter().map(|t| t.expr).collect();
        for ((param, arg), e) in func.params().iter().zip(args).zip(&mut lowered) {
            if param.ty == ParamTy::Counter {
                self.resolve_counter(file, func, arg, e);
            }
        }
        let mut t = Typed::new(
            Expr::Host {
                func,
                args: lowered,
            },
            func.ret().ty(&self.distance_ty),
        );
        if func.values() == Values::NonNegative {
            t.reach = Reach::Interval(Some(0), None);
        }
        t
    }

    /// A counter's name becomes its id, so the engine keeps counters by index. The name must
    /// be written out: a computed one could name any counter, which no id can stand for.
    fn resolve_counter(&mut self, file: FileId, func: EngineFn, arg: &ast::Arg, e: &mut Expr) {
        match e {
            Expr::Const(Value::Text(n) | Value::Symbol(n)) => {
                let id = self.counter_id(n);
                *e = Expr::Const(Value::Counter(id));
            }
            _ => self.diags.push(
                Diagnostic::new(
                    Code::TypeNotConstant,
                    file,
                    arg.value.span,
                    format!("`{}` takes a counter's name written out", func.name()),
                )
                .label("a computed name")
                .help("write the counter's name (`\"fired\"`); to choose between counters, branch with `if`"),
            ),
        }
    }

    /// The id of the counter named `n`, given it the first time it is named.
    pub(crate) fn counter_id(&mut self, n: &str) -> ir::CounterId {
        let kept = &mut self.program.counters;
        match kept.iter().position(|c| **c == *n) {
            Some(i) => i as ir::CounterId,
            None => {
                kept.push(n.into());
                (kept.len() - 1) as ir::CounterId
            }
        }
    }

    /// An argument whose static type cannot be what the parameter takes.
    fn engine_arg_mismatch(
        &self,
        file: FileId,
        func: EngineFn,
        param: &Param,
        arg: &ast::Arg,
        t: &Typed,
    ) -> Option<Diagnostic> {
        let name = func.name();
        let role = param.ty.doc_name();
        match param.ty {
            // A radius or a move is a distance: hexes on a grid, a length on a table.
            ParamTy::Distance | ParamTy::Radius
                if numeric(&t.ty)
                    && t.ty != Type::Any
                    && self.distance_ty != Type::Any
                    && (t.ty == Type::Length) != (self.distance_ty == Type::Length)
                    && !matches!(t.expr, Expr::Const(Value::Int(0))) =>
            {
                Some(if self.distance_ty == Type::Length {
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        arg.value.span,
                        format!("`{name}` on a table takes a length as its {role}"),
                    )
                    .label("a plain number")
                    .help(self.length_help(&t.expr))
                } else {
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        arg.value.span,
                        format!("`{name}` on a hex board takes a number of hexes as its {role}"),
                    )
                    .label("a length")
                    .help("count hexes: drop the unit")
                })
            }
            _ => {
                let want = param.ty.expects()?;
                let fits = t.ty == Type::Any || t.ty == want || (numeric(&want) && numeric(&t.ty));
                (!fits).then(|| {
                    let (wn, tn) = (self.type_name(&want), self.type_name(&t.ty));
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        arg.value.span,
                        format!("`{name}` takes {wn} as its `{}`, found {tn}", param.name),
                    )
                    .label(format!("expected {wn}"))
                    .help(format!("call it as `{}`", func.signature()))
                })
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lower_args(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        params: &[ir::Param],
        args: &[ast::Arg],
        callee: &ast::Ident,
        span: Span,
        path: &str,
    ) -> (Vec<Expr>, Vec<Typed>) {
        let mut slots: Vec<Option<Typed>> = vec![None; params.len()];
        let mut positional = 0usize;
        for a in args {
            let t = self.lower_expr(file, scope, &a.value, path);
            let idx = match &a.name {
                Some(n) => match params.iter().position(|p| p.name == n.name) {
                    Some(i) => i,
                    None => {
                        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeArity,
                                file,
                                n.span,
                                format!("`{}` has no parameter `{}`", callee.name, n.name),
                            )
                            .label("unknown parameter")
                            .help(format!("parameters: {}", names.join(", "))),
                        );
                        continue;
                    }
                },
                None => {
                    positional += 1;
                    positional - 1
                }
            };
            if idx >= params.len() {
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeArity,
                        file,
                        a.value.span,
                        format!("`{}` takes {} argument(s)", callee.name, params.len()),
                    )
                    .label("extra argument")
                    .help("remove it, or add a parameter"),
                );
                continue;
            }
            let p = &params[idx];
            let ok = match (&p.ty, &t.ty) {
                (Type::Any, _) | (_, Type::Any) => true,
                (a, b) if numeric(a) && numeric(b) => {
                    (*a == Type::Length) == (*b == Type::Length)
                        || matches!(t.expr, Expr::Const(Value::Int(0)))
                }
                (Type::Entity(_), Type::Entity(_)) => true,
                (Type::Enum(_), Type::Symbol) => true,
                (a, b) => a == b,
            };
            if !ok {
                let (pn, tn) = (self.type_name(&p.ty), self.type_name(&t.ty));
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        a.value.span,
                        format!(
                            "parameter `{}` of `{}` expects {pn}, found {tn}",
                            p.name, callee.name
                        ),
                    )
                    .label(format!("expected {pn}"))
                    .help("pass a value of the parameter's type"),
                );
            }
            slots[idx] = Some(t);
        }
        let mut exprs = Vec::new();
        let mut typed = Vec::new();
        for (i, s) in slots.into_iter().enumerate() {
            match s {
                Some(t) => {
                    exprs.push(t.expr.clone());
                    typed.push(t);
                }
                None => match &params[i].default {
                    Some(d) => {
                        let reach = match d {
                            Value::Int(n) | Value::Length(n) => Reach::constant(*n),
                            _ => Reach::any(),
                        };
                        let t = Typed::new(Expr::Const(d.clone()), params[i].ty.clone())
                            .with_reach(reach);
                        exprs.push(t.expr.clone());
                        typed.push(t);
                    }
                    None => {
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeArity,
                                file,
                                span,
                                format!("`{}` needs argument `{}`", callee.name, params[i].name),
                            )
                            .label("missing argument")
                            .help(format!(
                                "pass it: `{}({} = …)`",
                                callee.name, params[i].name
                            )),
                        );
                        let t = Typed::error();
                        exprs.push(t.expr.clone());
                        typed.push(t);
                    }
                },
            }
        }
        (exprs, typed)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lower_stack_call(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        s: u32,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Typed {
        let params = self.program.stacks[s as usize].params.clone();
        let (exprs, typed) = self.lower_args(file, scope, &params, args, callee, span, path);
        let reach = self.stack_reach(s, &typed);
        let (lo, hi) = reach.bounds();
        let die = typed.iter().any(|t| t.die);
        Typed {
            expr: Expr::Stack {
                stack: s,
                args: exprs,
            },
            ty: Type::Int,
            extremes: match (lo, hi) {
                (Some(l), Some(h)) => Some((Reach::constant(l), Reach::constant(h))),
                _ => None,
            },
            reach,
            die,
        }
    }

    /// Totals a stack can reach: each entry contributes 0 or its value (times `per`).
    pub(crate) fn stack_reach(&self, s: u32, args: &[Typed]) -> Reach {
        let st = &self.program.stacks[s as usize];
        let mut total = Reach::constant(0);
        // Entries guarded by `param == value` on one parameter exclude each other: at most
        // one applies, so together they add one of their values or nothing.
        let mut exclusive: Vec<(u32, Reach)> = Vec::new();
        for en in &st.entries {
            let v = self.const_reach(&en.value, args);
            let v = match &en.per {
                Some(p) => v.mul(&self.const_reach(p, args)),
                None => v,
            };
            match en.when.as_ref().and_then(equality_on_slot) {
                Some(slot) => match exclusive.iter_mut().find(|(s, _)| *s == slot) {
                    Some((_, r)) => *r = r.union(&v),
                    None => exclusive.push((slot, v.union(&Reach::constant(0)))),
                },
                None => {
                    let contribution = match &en.when {
                        Some(_) => v.union(&Reach::constant(0)),
                        None => v,
                    };
                    total = total.add(&contribution);
                }
            }
        }
        for (_, r) in exclusive {
            total = total.add(&r);
        }
        total.clamp(st.clamp.0, st.clamp.1)
    }

    /// Reach of a stack entry expression given the reaches of the arguments.
    pub(crate) fn const_reach(&self, e: &Expr, args: &[Typed]) -> Reach {
        match e {
            Expr::Const(Value::Int(n)) | Expr::Const(Value::Length(n)) => Reach::constant(*n),
            Expr::Local(s) => args
                .get(*s as usize)
                .map_or(Reach::any(), |t| t.reach.clone()),
            Expr::Unary {
                op: ir::UnOp::Neg,
                operand,
            } => self.const_reach(operand, args).neg(),
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (self.const_reach(lhs, args), self.const_reach(rhs, args));
                match op {
                    ir::BinOp::Add => a.add(&b),
                    ir::BinOp::Sub => a.sub(&b),
                    ir::BinOp::Mul => a.mul(&b),
                    _ => Reach::any(),
                }
            }
            Expr::Roll(d) => Reach::from_values(self.program.dice[*d as usize].faces.clone()),
            _ => Reach::any(),
        }
    }

    pub(crate) fn lower_builtin(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Option<Typed> {
        if let Some(t) = self.lower_quantifier(file, scope, callee, args, span, path) {
            return Some(t);
        }
        if callee.name == "applicable" {
            return Some(self.lower_applicable(file, scope, args, span, path));
        }
        let (func, arity) = match callee.name.as_str() {
            "min" => (Builtin::Min, 0),
            "max" => (Builtin::Max, 0),
            "clamp" => (Builtin::Clamp, 3),
            "abs" => (Builtin::Abs, 1),
            "div_up" => (Builtin::DivUp, 2),
            "pool" => (Builtin::Pool, 2),
            "sum" => (Builtin::Sum, 1),
            "highest" => (Builtin::Highest, 2),
            "lowest" => (Builtin::Lowest, 2),
            "successes" => (Builtin::Successes, 2),
            "count" => (Builtin::Count, 2),
            "reroll" => (Builtin::Reroll, 2),
            _ => return None,
        };
        if (arity == 0 && args.len() < 2) || (arity != 0 && args.len() != arity) {
            let want = if arity == 0 {
                "at least 2".to_string()
            } else {
                arity.to_string()
            };
            self.diags.push(
                Diagnostic::new(
                    Code::TypeArity,
                    file,
                    span,
                    format!(
                        "`{}` takes {want} arguments; {} given",
                        callee.name,
                        args.len()
                    ),
                )
                .label("wrong number of arguments")
                .help(builtin_help(func)),
            );
            return Some(Typed::error());
        }
        // `pool(n, d6)` and `reroll(d8, …)` take the die itself, not a roll of it.
        let die_arg = |lw: &mut Self, a: &ast::Expr, which: &str, example: &str| -> Option<u32> {
            let die = match &a.kind {
                ExprKind::Dice { count: 1, sides }
                    if *sides >= 1 && *sides <= super::items::MAX_FACES =>
                {
                    Some(lw.std_die(*sides))
                }
                ExprKind::Name(n) => match lw.lookup(n) {
                    Some(Sym::Die(d)) => Some(d),
                    _ => None,
                },
                _ => None,
            };
            if die.is_none() {
                lw.diags.push(
                    Diagnostic::new(
                        Code::TypeNotADie,
                        file,
                        a.span,
                        format!("`{}` needs a die as its {which} argument", callee.name),
                    )
                    .label("not a die")
                    .help(format!("write {example}")),
                );
            }
            die
        };
        match func {
            Builtin::Pool => {
                let n = self.lower_expr(file, scope, &args[0].value, path);
                let Some(die) = die_arg(
                    self,
                    &args[1].value,
                    "second",
                    "`pool(n, d6)` or `pool(n, my_die)`",
                ) else {
                    return Some(Typed::error());
                };
                let (nlo, nhi) = n.reach.bounds();
                if nhi.is_some_and(|h| h > MAX_POOL) || nlo.is_some_and(|l| l < 0) {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LimitTooLarge,
                            file,
                            args[0].value.span,
                            format!(
                                "a pool holds 0 to {MAX_POOL} dice; this count reaches {}",
                                nhi.unwrap_or(0).max(nlo.unwrap_or(0))
                            ),
                        )
                        .label("pool size out of range")
                        .help("bound the count, e.g. with a parameter range `dice: 1..=12`"),
                    );
                }
                let faces = Reach::from_values(self.program.dice[die as usize].faces.clone());
                let (flo, fhi) = faces.bounds();
                let reach = match (nlo, nhi, flo, fhi) {
                    (Some(a), Some(b), Some(c), Some(d)) => Reach::Interval(
                        if c >= 0 {
                            a.max(0).checked_mul(c)
                        } else {
                            b.checked_mul(c)
                        },
                        if d >= 0 {
                            b.checked_mul(d)
                        } else {
                            a.max(0).checked_mul(d)
                        },
                    ),
                    _ => Reach::any(),
                };
                let ex = n.expect_numeric(self, file, args[0].value.span);
                return Some(Typed {
                    expr: Expr::Dice {
                        count: Box::new(ex),
                        die,
                    },
                    ty: Type::Pool,
                    reach,
                    die: true,
                    extremes: None,
                });
            }
            Builtin::Reroll => {
                let Some(die) = die_arg(self, &args[0].value, "first", "`reroll(d8, 1..=3)`")
                else {
                    return Some(Typed::error());
                };
                let r = self.lower_expr(file, scope, &args[1].value, path);
                let faces = self.program.dice[die as usize].faces.clone();
                return Some(Typed {
                    expr: Expr::Builtin {
                        func,
                        args: vec![Expr::Const(Value::Die(die)), r.expr],
                    },
                    ty: Type::Int,
                    reach: Reach::from_values(faces),
                    die: true,
                    extremes: None,
                });
            }
            _ => {}
        }
        let lowered: Vec<Typed> = args
            .iter()
            .map(|a| self.lower_expr(file, scope, &a.value, path))
            .collect();
        let die = lowered.iter().any(|t| t.die);
        let pool_arg = |lw: &mut Self, i: usize| {
            if !matches!(lowered[i].ty, Type::Pool | Type::Any) {
                lw.diags.push(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        args[i].value.span,
                        format!("`{}` needs a dice pool here", callee.name),
                    )
                    .label("not a pool")
                    .help("make a pool with `NdX` or `pool(n, die)`"),
                );
            }
        };
        let (ty, reach) = match func {
            Builtin::Min | Builtin::Max => {
                let mut r = lowered[0].reach.clone();
                for t in &lowered[1..] {
                    r = if func == Builtin::Min {
                        r.min(&t.reach)
                    } else {
                        r.max(&t.reach)
                    };
                }
                (lowered[0].ty.clone(), r)
            }
            Builtin::Clamp => {
                let lo = lowered[1].reach.bounds().0;
                let hi = lowered[2].reach.bounds().1;
                (lowered[0].ty.clone(), lowered[0].reach.clamp(lo, hi))
            }
            Builtin::Abs => (
                lowered[0].ty.clone(),
                lowered[0]
                    .reach
                    .map(|x| x.checked_abs(), |_| Reach::Interval(Some(0), None)),
            ),
            Builtin::DivUp => (
                lowered[0].ty.clone(),
                lowered[0]
                    .reach
                    .combine(&lowered[1].reach, ceil_div, |_, _| Reach::any()),
            ),
            Builtin::Sum => {
                pool_arg(self, 0);
                (Type::Int, lowered[0].reach.clone())
            }
            Builtin::Highest | Builtin::Lowest => {
                pool_arg(self, 1);
                (Type::Int, Reach::any())
            }
            Builtin::Successes | Builtin::Count => {
                pool_arg(self, 0);
                if func == Builtin::Successes {
                    self.lint_success_target(
                        file,
                        &lowered[0].expr,
                        &lowered[1],
                        args[1].value.span,
                    );
                }
                let n = pool_size_bound(&lowered[0].expr);
                (
                    Type::Int,
                    n.map_or(Reach::Interval(Some(0), None), |n| Reach::range(0, n)),
                )
            }
            // `Range` has no name: only a range with computed bounds makes one.
            Builtin::Pool | Builtin::Reroll | Builtin::Range => unreachable!("handled above"),
        };
        let ty = if ty == Type::Pool { Type::Int } else { ty };
        Some(Typed {
            expr: Expr::Builtin {
                func,
                args: lowered.into_iter().map(|t| t.expr).collect(),
            },
            ty,
            reach,
            die,
            extremes: None,
        })
    }
}

impl Lowerer<'_> {
    /// `applicable(table[keys])`: whether the cell is not `-`.
    fn lower_applicable(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Typed {
        let [arg] = args else {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeArity,
                    file,
                    span,
                    format!("`applicable` takes 1 argument; {} given", args.len()),
                )
                .label("wrong number of arguments")
                .help("applicable(table[key, …]): whether that cell is not `-`"),
            );
            return Typed::error();
        };
        if !matches!(arg.value.kind, ExprKind::Index { .. }) {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    arg.value.span,
                    "`applicable` tests a table cell",
                )
                .label("not a table lookup")
                .help("write `applicable(fire_table[weapon, band])`"),
            );
            return Typed::error();
        }
        self.in_applicable = true;
        let t = self.lower_expr(file, scope, &arg.value, path);
        self.in_applicable = false;
        let reach = match &t.expr {
            Expr::Lookup { table, .. } if self.has_not_applicable(*table) => {
                self.na_tested.push(*table);
                Reach::range(0, 1)
            }
            // A table without `-` cells: every cell applies.
            Expr::Lookup { .. } => Reach::constant(1),
            _ => Reach::range(0, 1),
        };
        let die = t.die;
        let mut out = Typed::new(
            Expr::Binary {
                op: ir::BinOp::Ne,
                lhs: Box::new(t.expr),
                rhs: Box::new(Expr::Const(Value::Symbol(ir::NOT_APPLICABLE.into()))),
            },
            Type::Bool,
        )
        .with_reach(reach);
        out.die = die;
        out
    }

    /// `len(list)`, and `count`, `any`, `all` over `NAME in LIST` with a condition:
    /// `count(u in units_within(o, 3in), owner(u) != me)`. `NAME` is bound to each item in a
    /// scope of its own, so it may shadow an outer name only inside the condition.
    fn lower_quantifier(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Option<Typed> {
        let name = callee.name.as_str();
        fn binding(a: &ast::Arg) -> Option<(String, &ast::Expr)> {
            match &a.value.kind {
                ExprKind::Binary {
                    op: ast::BinOp::In,
                    lhs,
                    rhs,
                } => match &lhs.kind {
                    ExprKind::Name(n) => Some((n.clone(), &**rhs)),
                    _ => None,
                },
                _ => None,
            }
        }
        let quant = match name {
            "len" => None,
            "count" | "any" | "all" if args.first().and_then(binding).is_some() => {
                Some(match name {
                    "count" => ir::Quant::Count,
                    "any" => ir::Quant::Any,
                    _ => ir::Quant::All,
                })
            }
            "any" | "all" => {
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeArity,
                        file,
                        span,
                        format!("`{name}` takes `NAME in LIST` and a condition"),
                    )
                    .label("not a quantifier")
                    .help(format!(
                        "write `{name}(u in units_within(objective, 3in), owner(u) != side)`"
                    )),
                );
                return Some(Typed::error());
            }
            _ => return None,
        };
        let want = match quant {
            None => 1,
            Some(ir::Quant::Count) => args.len().clamp(1, 2),
            Some(_) => 2,
        };
        if args.len() != want {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeArity,
                    file,
                    span,
                    format!("`{name}` takes {want} argument(s); {} given", args.len()),
                )
                .label("wrong number of arguments")
                .help(match quant {
                    None => "len(list): how many items a list holds".to_string(),
                    Some(_) => format!("{name}(u in LIST, CONDITION)"),
                }),
            );
            return Some(Typed::error());
        }
        let (var, list_ast) = match quant {
            None => (None, &args[0].value),
            Some(_) => {
                let (n, l) = binding(&args[0]).expect("checked above");
                (Some(n), l)
            }
        };
        let list = self.lower_expr(file, scope, list_ast, path);
        let elem = match &list.ty {
            Type::List(t) => (**t).clone(),
            Type::Range => Type::Int,
            Type::Any => Type::Any,
            other => {
                let tn = self.type_name(other);
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        list_ast.span,
                        format!("`{name}` needs a list; this is {tn}"),
                    )
                    .label(tn)
                    .help("count over a list such as `units_within(piece, 6in)`, `[a, b]` or a range `1..=6`"),
                );
                Type::Any
            }
        };
        // A constant list's length bounds the count.
        let items = match &list.expr {
            Expr::List(v) => Some(v.len() as i64),
            Expr::Const(Value::List(v)) => Some(v.len() as i64),
            Expr::Const(Value::Range(Some(a), Some(b))) => Some((b - a + 1).max(0)),
            _ => None,
        };
        // What an item can be, when the list says: its constants, or its range.
        let item_reach = match &list.expr {
            Expr::Const(Value::Range(Some(a), Some(b))) => Reach::range(*a, *b),
            Expr::Const(Value::List(v)) => {
                let ints: Option<Vec<i64>> = v
                    .iter()
                    .map(|x| match x {
                        Value::Int(n) | Value::Length(n) => Some(*n),
                        _ => None,
                    })
                    .collect();
                ints.filter(|v| !v.is_empty())
                    .map_or(Reach::any(), Reach::from_values)
            }
            Expr::List(v) => {
                let ints: Option<Vec<i64>> = v
                    .iter()
                    .map(|x| match x {
                        Expr::Const(Value::Int(n) | Value::Length(n)) => Some(*n),
                        _ => None,
                    })
                    .collect();
                ints.filter(|v| !v.is_empty())
                    .map_or(Reach::any(), Reach::from_values)
            }
            _ => Reach::any(),
        };
        scope.push();
        let slot = scope.bind(var.as_deref().unwrap_or(""), elem, item_reach, false);
        let cond = match args.get(1) {
            Some(c) => {
                let t = self.lower_expr(file, scope, &c.value, path);
                let (reach, die) = (t.reach.clone(), t.die);
                (t.expect_bool(self, file, c.value.span), reach, die)
            }
            None => (Expr::Const(Value::Bool(true)), Reach::constant(1), false),
        };
        scope.pop();
        let (cond, creach, cdie) = cond;
        // The result when the condition's value is settled: never, always, or either.
        let settled = match creach.bounds() {
            (Some(1), Some(1)) => Some(true),
            (Some(0), Some(0)) => Some(false),
            _ => None,
        };
        let q = quant.unwrap_or(ir::Quant::Count);
        let (ty, reach) = match q {
            ir::Quant::Count => (
                Type::Int,
                match (settled, items) {
                    (Some(false), _) => Reach::constant(0),
                    (Some(true), Some(n)) => Reach::constant(n),
                    (_, Some(n)) => Reach::range(0, n),
                    (_, None) => Reach::Interval(Some(0), None),
                },
            ),
            // Over an empty list `any` is false and `all` true, whatever the condition.
            ir::Quant::Any => (
                Type::Bool,
                match (settled, items) {
                    (Some(false), _) | (_, Some(0)) => Reach::constant(0),
                    (Some(true), Some(_)) => Reach::constant(1),
                    _ => Reach::range(0, 1),
                },
            ),
            ir::Quant::All => (
                Type::Bool,
                match (settled, items) {
                    (Some(true), _) | (_, Some(0)) => Reach::constant(1),
                    (Some(false), Some(_)) => Reach::constant(0),
                    _ => Reach::range(0, 1),
                },
            ),
        };
        Some(Typed {
            expr: Expr::Quant {
                quant: q,
                slot,
                list: Box::new(list.expr),
                cond: Box::new(cond),
            },
            ty,
            reach,
            die: list.die || cdie,
            extremes: None,
        })
    }

    /// `successes(pool, t)` with a target no face of the pool's die reaches (or every face
    /// does) counts nothing (or every die): almost always a misread number.
    fn lint_success_target(&mut self, file: FileId, pool: &Expr, target: &Typed, span: Span) {
        let Expr::Dice { die, .. } = pool else {
            return;
        };
        let d = &self.program.dice[*die as usize];
        let (Some(fmin), Some(fmax)) = (d.faces.iter().min(), d.faces.iter().max()) else {
            return;
        };
        let (lo, hi) = target.reach.bounds();
        let name = d.name.clone();
        if let Some(lo) = lo
            && lo > *fmax
        {
            self.diags.push(
                Diagnostic::new(
                    Code::LintUnreachableTarget,
                    file,
                    span,
                    format!(
                        "no {name} shows {lo} or more (its highest face is {fmax}): `successes` is always 0"
                    ),
                )
                .label("unreachable target")
                .help(format!(
                    "check the book's number; a target on a {name} lies in {fmin}..={fmax}"
                )),
            );
        } else if let Some(hi) = hi
            && hi <= *fmin
        {
            self.diags.push(
                Diagnostic::new(
                    Code::LintCertainTarget,
                    file,
                    span,
                    format!(
                        "every {name} shows {hi} or more: `successes` always counts the whole pool"
                    ),
                )
                .label("always a success")
                .help(format!(
                    "check the book's number; a target on a {name} that can fail lies in {}..={fmax}",
                    fmin + 1
                )),
            );
        }
    }
}

/// `slot == constant`, either way round: the slot a condition tests for one value.
fn equality_on_slot(e: &Expr) -> Option<u32> {
    match e {
        Expr::Binary {
            op: ir::BinOp::Eq,
            lhs,
            rhs,
        } => match (lhs.as_ref(), rhs.as_ref()) {
            (Expr::Local(s), Expr::Const(_)) | (Expr::Const(_), Expr::Local(s)) => Some(*s),
            _ => None,
        },
        _ => None,
    }
}

fn builtin_help(f: Builtin) -> &'static str {
    match f {
        Builtin::Min | Builtin::Max => "min(a, b, …) / max(a, b, …)",
        Builtin::Clamp => "clamp(x, lo, hi)",
        Builtin::Abs => "abs(x)",
        Builtin::DivUp => "div_up(a, b): a / b rounded up",
        Builtin::Pool => "pool(n, die): n dice of one kind",
        Builtin::Sum => "sum(pool)",
        Builtin::Highest => "highest(k, pool): the k highest dice, summed",
        Builtin::Lowest => "lowest(k, pool): the k lowest dice, summed",
        Builtin::Successes => "successes(pool, t): dice showing t or more",
        Builtin::Count => "count(pool, lo..=hi): dice showing a face in the range",
        Builtin::Reroll => {
            "reroll(die, lo..=hi): roll again once when the first roll is in the range"
        }
        Builtin::Range => "lo..=hi: the whole numbers from lo to hi",
    }
}

/// Upper bound of a pool's size when its count is a constant.
fn pool_size_bound(e: &Expr) -> Option<i64> {
    match e {
        Expr::Dice { count, .. } => match count.as_ref() {
            Expr::Const(Value::Int(n)) => Some(*n),
            _ => None,
        },
        _ => None,
    }
}
