//! Statements: blocks, bindings, branches, bands, effects, loops and choice points.

use sandtable_grammar::ast::{self, ExprKind};

use super::expr::{MAX_REPEAT, Scope, numeric};
use super::{Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Expr, Stmt, Type, Value};
use crate::reach::Reach;
use crate::source::FileId;

impl<'a> Lowerer<'a> {
    /// A procedure's or hook's body: the statements a game runs, where a hex label is read
    /// as the hex it names (see [`Lowerer::in_body`]).
    pub(crate) fn lower_body(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        b: &ast::Block,
        path: &str,
    ) -> Vec<Stmt> {
        let outer = std::mem::replace(&mut self.in_body, true);
        let out = self.lower_block(file, scope, b, path);
        self.in_body = outer;
        out
    }

    pub(crate) fn lower_block(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        b: &ast::Block,
        path: &str,
    ) -> Vec<Stmt> {
        scope.push();
        let mut out = Vec::new();
        for s in &b.stmts {
            if let Some(st) = self.lower_stmt(file, scope, s, path) {
                out.push(st);
            }
        }
        scope.pop();
        out
    }

    /// A statement, its line recorded after those of the statements inside it (the order of
    /// [`ir::stmts_post_order`]).
    pub(crate) fn lower_stmt(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        s: &ast::Stmt,
        path: &str,
    ) -> Option<Stmt> {
        let st = self.lower_stmt_inner(file, scope, s, path)?;
        let (line, _) = self.line_of(file, s.span);
        self.stmt_lines.push(line);
        Some(st)
    }

    fn lower_stmt_inner(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        s: &ast::Stmt,
        path: &str,
    ) -> Option<Stmt> {
        use ast::StmtKind as K;
        Some(match &s.kind {
            K::Let { name, value } => {
                let t = self.lower_expr(file, scope, value, &format!("{path}.{}", name.name));
                let ty = if t.ty == Type::Pool {
                    Type::Int
                } else {
                    t.ty.clone()
                };
                let slot = scope.bind(&name.name, ty, t.reach.clone(), t.die);
                Stmt::Let {
                    slot,
                    value: t.expr,
                }
            }
            K::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self
                    .lower_expr(file, scope, cond, path)
                    .expect_bool(self, file, cond.span);
                let then = self.lower_block(file, scope, then, path);
                let otherwise = match otherwise.as_deref() {
                    None => Vec::new(),
                    Some(ast::Else::Block(b)) => self.lower_block(file, scope, b, path),
                    Some(ast::Else::If(st)) => {
                        self.lower_stmt(file, scope, st, path).into_iter().collect()
                    }
                };
                Stmt::If {
                    cond: c,
                    then,
                    otherwise,
                }
            }
            K::Bands { scrutinee, arms } => {
                let t = self.lower_expr(file, scope, scrutinee, path);
                if !numeric(&t.ty) && !matches!(t.ty, Type::Enum(_) | Type::Symbol) {
                    let tn = self.type_name(&t.ty);
                    self.diags.push(
                        Diagnostic::new(
                            Code::TypeMismatch,
                            file,
                            scrutinee.span,
                            format!("bands need a number or a name; this is {tn}"),
                        )
                        .label(tn)
                        .help("bands choose by the value of a number, such as `attack - defence`"),
                    );
                }
                if numeric(&t.ty) && t.ty != Type::Any {
                    for p in arms.iter().flat_map(|a| &a.patterns) {
                        self.check_band_units(file, &t.ty, p);
                    }
                }
                let mut lowered = Vec::new();
                for a in arms {
                    let patterns: Vec<ir::KeyPattern> = a
                        .patterns
                        .iter()
                        .map(|p| self.key_pattern(file, p))
                        .collect();
                    let value = a.value.as_ref().map(|v| {
                        let t = self.lower_expr(file, scope, v, path);
                        self.result_types.push((t.ty, called(&t.expr)));
                        t.expr
                    });
                    let body = a
                        .body
                        .as_ref()
                        .map(|b| self.lower_block(file, scope, b, path))
                        .unwrap_or_default();
                    lowered.push(ir::Arm {
                        patterns,
                        outcome: a.outcome.as_ref().map(|o| o.name.as_str().into()),
                        value,
                        body,
                        cite: ir::Cite {
                            section: None,
                            refs: a.see.iter().map(|r| r.text.clone()).collect(),
                        },
                    });
                }
                for a in arms {
                    for r in &a.see {
                        self.refs.push((file, r.clone()));
                    }
                }
                crate::lints::bands(self, file, scrutinee.span, &t, arms, &lowered);
                Stmt::Bands {
                    length: t.ty == Type::Length,
                    scrutinee: t.expr,
                    arms: lowered,
                }
            }
            K::Result(e) => {
                let t = self.lower_expr(file, scope, e, path);
                self.result_types.push((t.ty, called(&t.expr)));
                Stmt::Result(t.expr)
            }
            K::Outcome(o) => Stmt::Outcome(o.name.as_str().into()),
            K::Eliminate(e) => Stmt::Effect(ir::Effect::Eliminate(
                self.lower_expr(file, scope, e, path).expr,
            )),
            K::Place { marker, target } | K::Remove { marker, target } => {
                let m = self.marker(file, marker)?;
                let t = if matches!(&target.kind, ExprKind::Name(n) if n == "all") {
                    Expr::Const(Value::Symbol("all".into()))
                } else {
                    self.lower_expr(file, scope, target, path).expr
                };
                Stmt::Effect(if matches!(s.kind, K::Place { .. }) {
                    ir::Effect::Place {
                        marker: m,
                        target: t,
                    }
                } else {
                    ir::Effect::Remove {
                        marker: m,
                        target: t,
                    }
                })
            }
            K::Move { what, to } => {
                let w = self.lower_expr(file, scope, what, path).expr;
                let t = self.lower_expr(file, scope, to, path).expr;
                Stmt::Effect(ir::Effect::Move { what: w, to: t })
            }
            K::Score { side, op, value } => {
                let sd = self.side(file, side)?;
                let v = self
                    .lower_expr(file, scope, value, path)
                    .expect_numeric(self, file, value.span);
                Stmt::Effect(ir::Effect::Score {
                    side: sd,
                    op: match op {
                        ast::ScoreOp::Add => ir::ScoreOp::Add,
                        ast::ScoreOp::Sub => ir::ScoreOp::Sub,
                        ast::ScoreOp::Set => ir::ScoreOp::Set,
                    },
                    value: v,
                })
            }
            K::Win(side) => Stmt::Effect(ir::Effect::Win(self.side(file, side)?)),
            K::WinUnknown(note) => {
                let id = self.register_unknown(
                    file,
                    s.span,
                    &format!("{path}.winner"),
                    note.clone(),
                    false,
                );
                Stmt::Effect(ir::Effect::Undecided(id))
            }
            K::Choose {
                var, from, body, ..
            }
            | K::For {
                var,
                iter: from,
                body,
            } => {
                let f = self.lower_expr(file, scope, from, path);
                let by = match &s.kind {
                    K::Choose { by: Some(b), .. } => {
                        let t = self.lower_expr(file, scope, b, path);
                        if !matches!(t.ty, Type::Side | Type::Any) {
                            self.diags.push(
                                Diagnostic::new(
                                    Code::TypeMismatch,
                                    file,
                                    b.span,
                                    "`choose … by` names the side that decides",
                                )
                                .label("not a side")
                                .help("write a side, such as `by enemy(caller)` or `by us`"),
                            );
                        }
                        Some(t.expr)
                    }
                    _ => None,
                };
                let elem = match &f.ty {
                    Type::List(t) => (**t).clone(),
                    Type::Range => Type::Int,
                    _ => Type::Any,
                };
                scope.push();
                let slot = scope.bind(&var.name, elem.clone(), Reach::any(), false);
                let b = self.lower_block(file, scope, body, path);
                scope.pop();
                if matches!(s.kind, K::Choose { .. }) {
                    Stmt::Choose {
                        slot,
                        from: f.expr,
                        by,
                        body: b,
                        length: elem == Type::Length,
                    }
                } else {
                    Stmt::For {
                        slot,
                        iter: f.expr,
                        body: b,
                    }
                }
            }
            K::Repeat { count, body } => {
                let c = self.lower_expr(file, scope, count, path);
                match c.reach.bounds().1 {
                    Some(h) if h <= MAX_REPEAT => {}
                    other => {
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeUnboundedRepeat,
                                file,
                                count.span,
                                match other {
                                    Some(h) => format!("`repeat` may run {h} times; the limit is {MAX_REPEAT}"),
                                    None => "the count of this `repeat` has no known upper bound".to_string(),
                                },
                            )
                            .label("unbounded count")
                            .help("every program must end: bound the count with a die, a constant or a parameter range such as `n: 0..=10`"),
                        );
                    }
                }
                let ex = c.expect_numeric(self, file, count.span);
                let b = self.lower_block(file, scope, body, path);
                Stmt::Repeat { count: ex, body: b }
            }
            K::Require(e) => {
                let t = self.lower_expr(file, scope, e, path);
                if t.reach.bounds() == (Some(0), Some(0)) {
                    crate::lints::never_holds(self, file, e.span, path);
                }
                Stmt::Require(t.expect_bool(self, file, e.span))
            }
            K::See(refs) => {
                for r in refs {
                    self.refs.push((file, r.clone()));
                }
                return None;
            }
            K::Note(_) => return None,
            K::Expr(e) => {
                let t = self.lower_expr(file, scope, e, path);
                if !matches!(e.kind, ExprKind::Call { .. }) {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LintUnusedValue,
                            file,
                            e.span,
                            "this expression's value is not used",
                        )
                        .label("computed and dropped")
                        .help("use `result EXPR` to return it, or `let NAME = EXPR` to keep it"),
                    );
                }
                Stmt::Expr(t.expr)
            }
        })
    }

    pub(crate) fn marker(&mut self, file: FileId, m: &ast::Ident) -> Option<u32> {
        match self.lookup(&m.name) {
            Some(Sym::Entity(id)) => Some(id),
            other => {
                let msg = match other {
                    Some(s) => format!("`{}` is a {}, not a marker", m.name, s.describe()),
                    None => format!("unknown marker `{}`", m.name),
                };
                let help = self
                    .suggest(&m.name, &[])
                    .map_or("declare it: `marker NAME \"Title\"`".to_string(), |s| {
                        format!("did you mean `{s}`?")
                    });
                self.diags.push(
                    Diagnostic::new(Code::ResolveUnknownName, file, m.span, msg)
                        .label("not a marker")
                        .help(help),
                );
                None
            }
        }
    }

    pub(crate) fn side(&mut self, file: FileId, s: &ast::Ident) -> Option<u32> {
        match self.lookup(&s.name) {
            Some(Sym::Side(id)) => Some(id),
            // The side did not parse: its syntax error stands for this use too.
            None if self.broken.contains(&s.name) => None,
            _ => {
                let sides: Vec<String> =
                    self.program.sides.iter().map(|s| s.name.clone()).collect();
                self.diags.push(
                    Diagnostic::new(
                        Code::ResolveUnknownName,
                        file,
                        s.span,
                        format!("unknown side `{}`", s.name),
                    )
                    .label("not a side")
                    .help(if sides.is_empty() {
                        "declare sides with `side NAME \"Title\"`".to_string()
                    } else {
                        format!("sides: {}", sides.join(", "))
                    }),
                );
                None
            }
        }
    }
}

impl Lowerer<'_> {
    /// A band bound must be written in the scrutinee's terms: lengths with a unit, numbers
    /// without. A bare `6` against a length would silently mean 0.6 mm.
    fn check_band_units(&mut self, file: FileId, scrutinee: &Type, p: &ast::Pattern) {
        let bounds: Vec<&ast::Expr> = match &p.kind {
            ast::PatternKind::Value(v) => vec![v],
            ast::PatternKind::Range(r) => match &r.kind {
                ExprKind::Range { lo, hi, .. } => {
                    lo.iter().chain(hi.iter()).map(|b| &**b).collect()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let length = *scrutinee == Type::Length;
        for b in bounds {
            let (is_length, n) = match &b.kind {
                ExprKind::Length(n) => (true, *n),
                ExprKind::Int(n) => (false, *n),
                _ => continue,
            };
            if is_length == length || n == 0 {
                continue;
            }
            let d = if length {
                let help = self.length_help(&Expr::Const(Value::Int(n)));
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    b.span,
                    "a band over a length needs bounds that are lengths",
                )
                .label("a plain number")
                .help(help)
            } else {
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    b.span,
                    "a band over a number has a length as a bound",
                )
                .label("a length")
                .help("drop the unit, or band over a length such as `distance(a, b)`")
            };
            self.diags.push(d);
        }
    }
}

/// The procedure a `result` hands on, when it is exactly another procedure's call.
fn called(e: &ir::Expr) -> Option<ir::ProcId> {
    match e {
        ir::Expr::Call { proc, .. } => Some(*proc),
        _ => None,
    }
}
