//! Expressions and statements: name resolution, types and reachable values in one walk, so
//! every lint can point at the exact span it is about.

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::{Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, BinOp, Builtin, Expr, Type, Value};
use crate::reach::{Reach, floor_div};
use crate::source::FileId;

/// Largest pool a `pool(n, die)` may have.
pub(crate) const MAX_POOL: i64 = 1000;
/// Largest bound of a `repeat`.
pub(crate) const MAX_REPEAT: i64 = 10_000;

#[derive(Debug, Clone)]
struct SlotInfo {
    name: String,
    ty: Type,
    reach: Reach,
    die: bool,
}

/// Local names of one procedure, with what the checker knows of each slot.
pub(crate) struct Scope {
    slots: Vec<SlotInfo>,
    frames: Vec<Vec<(String, u32)>>,
}

impl Scope {
    pub(crate) fn new(params: &[ir::Param]) -> Self {
        let mut s = Scope {
            slots: Vec::new(),
            frames: vec![Vec::new()],
        };
        for p in params {
            let reach = match (&p.ty, p.range) {
                (Type::Int | Type::Length, Some((lo, hi))) => Reach::range(lo, hi),
                (Type::Bool, _) => Reach::range(0, 1),
                _ => Reach::any(),
            };
            s.bind(&p.name, p.ty.clone(), reach, false);
        }
        s
    }
    pub(crate) fn bind(&mut self, name: &str, ty: Type, reach: Reach, die: bool) -> u32 {
        let slot = self.slots.len() as u32;
        self.slots.push(SlotInfo {
            name: name.to_string(),
            ty,
            reach,
            die,
        });
        if let Some(f) = self.frames.last_mut() {
            f.push((name.to_string(), slot));
        }
        slot
    }
    pub(crate) fn find(&self, name: &str) -> Option<u32> {
        self.frames
            .iter()
            .rev()
            .flat_map(|f| f.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }
    pub(crate) fn push(&mut self) {
        self.frames.push(Vec::new());
    }
    pub(crate) fn pop(&mut self) {
        self.frames.pop();
    }
    pub(crate) fn n_slots(&self) -> u32 {
        self.slots.len() as u32
    }
    pub(crate) fn slot_names(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.name.clone()).collect()
    }
    pub(crate) fn slot_types(&self) -> Vec<Type> {
        self.slots.iter().map(|s| s.ty.clone()).collect()
    }
    pub(crate) fn visible(&self) -> Vec<String> {
        self.frames
            .iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// A lowered expression with its type and what the checker knows of its values.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub expr: Expr,
    pub ty: Type,
    pub reach: Reach,
    /// Whether a die roll flows into the value.
    pub die: bool,
    /// Reaches with every modifier stack at its lowest / highest total.
    pub extremes: Option<(Reach, Reach)>,
}

impl Typed {
    pub(crate) fn new(expr: Expr, ty: Type) -> Self {
        let reach = if matches!(ty, Type::Bool) {
            Reach::range(0, 1)
        } else {
            Reach::any()
        };
        Typed {
            expr,
            ty,
            reach,
            die: false,
            extremes: None,
        }
    }
    pub(crate) fn any(expr: Expr) -> Self {
        Typed::new(expr, Type::Any)
    }
    pub(crate) fn error() -> Self {
        Typed::any(Expr::Const(Value::Symbol("".into())))
    }
    pub(crate) fn with_reach(mut self, r: Reach) -> Self {
        self.reach = r;
        self
    }
    pub(crate) fn lo_hi(&self) -> (Reach, Reach) {
        self.extremes
            .clone()
            .unwrap_or((self.reach.clone(), self.reach.clone()))
    }

    pub(crate) fn expect_numeric(self, lw: &mut Lowerer, file: FileId, span: Span) -> Expr {
        let ok = numeric(&self.ty);
        self.expect(
            lw,
            file,
            span,
            ok,
            ("a number", ""),
            "modifiers, counts and dice arithmetic take integers or lengths",
        )
    }

    pub(crate) fn expect_int(self, lw: &mut Lowerer, file: FileId, span: Span) -> Expr {
        let ok = matches!(self.ty, Type::Int | Type::Any);
        self.expect(
            lw,
            file,
            span,
            ok,
            ("a whole number", ""),
            "a range's bounds are whole numbers",
        )
    }

    pub(crate) fn expect_bool(self, lw: &mut Lowerer, file: FileId, span: Span) -> Expr {
        let ok = matches!(self.ty, Type::Bool | Type::Any);
        self.expect(
            lw,
            file,
            span,
            ok,
            ("a condition", ", not true/false"),
            "write a comparison such as `d6 >= 4` or `cover == medium`",
        )
    }

    /// The expression, after reporting a type mismatch when it is not what the context wants.
    fn expect(
        self,
        lw: &mut Lowerer,
        file: FileId,
        span: Span,
        ok: bool,
        (want, not): (&str, &str),
        help: &str,
    ) -> Expr {
        if !ok {
            let t = lw.type_name(&self.ty);
            lw.diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    span,
                    format!("expected {want}, found {t}"),
                )
                .label(format!("this is {t}{not}"))
                .help(help),
            );
        }
        self.expr
    }
}

pub(crate) fn numeric(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Length | Type::Pool | Type::Any)
}

pub(crate) fn map_bin(op: ast::BinOp) -> ir::BinOp {
    match op {
        ast::BinOp::Or => ir::BinOp::Or,
        ast::BinOp::And => ir::BinOp::And,
        ast::BinOp::Eq => ir::BinOp::Eq,
        ast::BinOp::Ne => ir::BinOp::Ne,
        ast::BinOp::Lt => ir::BinOp::Lt,
        ast::BinOp::Le => ir::BinOp::Le,
        ast::BinOp::Gt => ir::BinOp::Gt,
        ast::BinOp::Ge => ir::BinOp::Ge,
        ast::BinOp::In => ir::BinOp::In,
        ast::BinOp::Add => ir::BinOp::Add,
        ast::BinOp::Sub => ir::BinOp::Sub,
        ast::BinOp::Mul => ir::BinOp::Mul,
        ast::BinOp::Div => ir::BinOp::Div,
        ast::BinOp::Rem => ir::BinOp::Rem,
    }
}

/// Does a hex coordinate or column letter (`S11`, `M`) look like this name?
pub(crate) fn looks_like_coordinate(name: &str) -> bool {
    let letters = name.chars().take_while(|c| c.is_ascii_uppercase()).count();
    let digits = name[letters..].chars().all(|c| c.is_ascii_digit());
    (1..=2).contains(&letters) && digits && name.len() - letters <= 3
}

impl<'a> Lowerer<'a> {
    pub(crate) fn lower_expr(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        e: &ast::Expr,
        path: &str,
    ) -> Typed {
        match &e.kind {
            ExprKind::Int(n) => {
                Typed::new(Expr::Const(Value::Int(*n)), Type::Int).with_reach(Reach::constant(*n))
            }
            ExprKind::Length(n) => Typed::new(Expr::Const(Value::Length(*n)), Type::Length)
                .with_reach(Reach::constant(*n)),
            ExprKind::Bool(b) => Typed::new(Expr::Const(Value::Bool(*b)), Type::Bool)
                .with_reach(Reach::constant(i64::from(*b))),
            ExprKind::Str(s) => Typed::new(Expr::Const(Value::Text(s.as_str().into())), Type::Text),
            ExprKind::Unknown(note) => {
                let id = self.register_unknown(file, e.span, path, note.clone(), false);
                Typed::any(Expr::Const(Value::Unknown(id)))
            }
            ExprKind::Name(n) => self.lower_name(file, scope, n, e.span),
            ExprKind::Dice { count, sides } => {
                if *sides < 1 || *sides > super::items::MAX_FACES {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LimitTooLarge,
                            file,
                            e.span,
                            format!(
                                "a die has 1 to {} faces; d{sides} has {sides}",
                                super::items::MAX_FACES
                            ),
                        )
                        .label("too many faces")
                        .help("use a custom die (`die NAME = [..]`) or a smaller die"),
                    );
                    return Typed::error();
                }
                if i64::from(*count) > MAX_POOL {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LimitTooLarge,
                            file,
                            e.span,
                            format!("a pool holds at most {MAX_POOL} dice; this one has {count}"),
                        )
                        .label("too many dice")
                        .help("split the roll, or reduce the count"),
                    );
                    return Typed::error();
                }
                let die = self.std_die(*sides);
                self.roll(die, Some(i64::from(*count)), e.span)
            }
            ExprKind::List(items) => {
                let mut lowered = Vec::new();
                let mut elem = Type::Any;
                for (i, it) in items.iter().enumerate() {
                    let t = self.lower_expr(file, scope, it, &format!("{path}[{i}]"));
                    if i == 0 {
                        elem = t.ty.clone();
                    }
                    lowered.push(t.expr);
                }
                Typed::new(Expr::List(lowered), Type::List(Box::new(elem)))
            }
            ExprKind::Range { lo, hi, inclusive } => {
                // A bound naming a local value (`1..=shots`) is computed when the rule runs; it
                // must not read as a hex-label range (`M..=U`).
                let computed = [lo, hi].into_iter().flatten().any(|b| match &b.kind {
                    ExprKind::Name(n) => {
                        scope.find(n).is_some()
                            || matches!(self.lookup(n), Some(Sym::Die(_)))
                            || n.strip_prefix('d').is_some_and(|k| {
                                !k.is_empty() && k.bytes().all(|c| c.is_ascii_digit())
                            })
                    }
                    ExprKind::Dice { .. } => true,
                    _ => false,
                });
                if computed {
                    let (Some(lo), Some(hi)) = (lo, hi) else {
                        let b = lo.as_ref().or(hi.as_ref()).expect("a computed bound");
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeNotConstant,
                                file,
                                e.span,
                                "a range with a computed bound needs both of its bounds",
                            )
                            .label("open range")
                            .help(match &b.kind {
                                ExprKind::Name(n) => format!(
                                    "write both ends, e.g. `1..={n}`, so that the range is finite"
                                ),
                                _ => "write both ends so that the range is finite".to_string(),
                            }),
                        );
                        return Typed::new(
                            Expr::Const(Value::Range(Some(0), Some(-1))),
                            Type::Range,
                        );
                    };
                    // A bound spelled `d3` is the standard die, as it is outside a range.
                    let as_die = |b: &ast::Expr| -> ast::Expr {
                        match &b.kind {
                            ExprKind::Name(n) if scope.find(n).is_none() => n
                                .strip_prefix('d')
                                .and_then(|k| k.parse::<u32>().ok())
                                .map_or_else(
                                    || b.clone(),
                                    |sides| ast::Expr {
                                        kind: ExprKind::Dice { count: 1, sides },
                                        span: b.span,
                                    },
                                ),
                            _ => b.clone(),
                        }
                    };
                    let (lo, hi) = (as_die(lo), as_die(hi));
                    let lo_t = self.lower_expr(file, scope, &lo, path);
                    let lo_e = lo_t.expect_int(self, file, lo.span);
                    let hi_t = self.lower_expr(file, scope, &hi, path);
                    let mut hi_e = hi_t.expect_int(self, file, hi.span);
                    if !*inclusive {
                        hi_e = Expr::Binary {
                            op: BinOp::Sub,
                            lhs: Box::new(hi_e),
                            rhs: Box::new(Expr::Const(Value::Int(1))),
                        };
                    }
                    return Typed::new(
                        Expr::Builtin {
                            func: Builtin::Range,
                            args: vec![lo_e, hi_e],
                        },
                        Type::Range,
                    );
                }
                Typed::new(
                    Expr::Const(self.const_value(file, e, path, None)),
                    Type::Range,
                )
            }
            ExprKind::Unary { op, operand } => {
                let t = self.lower_expr(file, scope, operand, path);
                match op {
                    ast::UnOp::Neg => {
                        if !numeric(&t.ty) {
                            let tn = self.type_name(&t.ty);
                            self.diags.push(
                                Diagnostic::new(
                                    Code::TypeMismatch,
                                    file,
                                    e.span,
                                    format!("cannot negate {tn}"),
                                )
                                .label("not a number")
                                .help("only numbers and lengths have a sign"),
                            );
                        }
                        let (lo, hi) = t.lo_hi();
                        Typed {
                            reach: t.reach.neg(),
                            extremes: t.extremes.as_ref().map(|_| (hi.neg(), lo.neg())),
                            expr: Expr::Unary {
                                op: ir::UnOp::Neg,
                                operand: Box::new(t.expr),
                            },
                            ty: if t.ty == Type::Pool { Type::Int } else { t.ty },
                            die: t.die,
                        }
                    }
                    ast::UnOp::Not => {
                        let die = t.die;
                        let ex = t.expect_bool(self, file, operand.span);
                        let mut r = Typed::new(
                            Expr::Unary {
                                op: ir::UnOp::Not,
                                operand: Box::new(ex),
                            },
                            Type::Bool,
                        );
                        r.die = die;
                        r
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.lower_binary(file, scope, *op, lhs, rhs, e.span, path)
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.lower_expr(file, scope, cond, path);
                let c_die = c.die;
                let c = c.expect_bool(self, file, cond.span);
                let a = self.lower_expr(file, scope, then, path);
                let b = self.lower_expr(file, scope, otherwise, path);
                let ty = self.unify(file, &a.ty, &b.ty, e.span);
                Typed {
                    reach: a.reach.union(&b.reach),
                    die: c_die || a.die || b.die,
                    extremes: None,
                    expr: Expr::If {
                        cond: Box::new(c),
                        then: Box::new(a.expr),
                        otherwise: Box::new(b.expr),
                    },
                    ty,
                }
            }
            ExprKind::Call { callee, args } => {
                self.lower_call(file, scope, callee, args, e.span, path)
            }
            ExprKind::Field { base, field } => {
                // `cover.medium`: a qualified enum member.
                if let ExprKind::Name(n) = &base.kind
                    && scope.find(n).is_none()
                    && let Some(Sym::Enum(en)) = self.globals.get(n).map(|d| d.sym)
                {
                    self.lookup(n);
                    if self.program.enums[en as usize]
                        .members
                        .contains(&field.name)
                    {
                        return Typed::new(
                            Expr::Const(Value::Symbol(field.name.as_str().into())),
                            Type::Enum(en),
                        );
                    }
                    self.diags.push(
                        Diagnostic::new(
                            Code::ResolveUnknownName,
                            file,
                            field.span,
                            format!("enum `{n}` has no member `{}`", field.name),
                        )
                        .label("not a member")
                        .help(format!(
                            "members: {}",
                            self.program.enums[en as usize].members.join(", ")
                        )),
                    );
                    return Typed::error();
                }
                let b = self.lower_expr(file, scope, base, path);
                self.lower_field(file, b, field)
            }
            ExprKind::Index { base, args } => {
                let ExprKind::Name(tname) = &base.kind else {
                    self.diags.push(
                        Diagnostic::new(
                            Code::TypeNotATable,
                            file,
                            base.span,
                            "only tables can be indexed",
                        )
                        .label("not a table name")
                        .help("look up a table by name: `hit_location[d6, craft]`"),
                    );
                    return Typed::error();
                };
                let table = match self.lookup(tname) {
                    Some(Sym::Table(t)) => t,
                    // The table did not parse: its syntax error stands for this look-up too,
                    // and the keys are still checked.
                    None if self.broken.contains(tname.as_str()) => {
                        for a in args {
                            self.lower_expr(file, scope, &a.value, path);
                        }
                        return Typed::error();
                    }
                    other => {
                        let msg = match other {
                            Some(s) => format!("`{tname}` is a {}, not a table", s.describe()),
                            None => format!("unknown table `{tname}`"),
                        };
                        let help = self.suggest(tname, &[]).map_or(
                            "declare it with `table NAME(key) { … }`".to_string(),
                            |s| format!("did you mean `{s}`?"),
                        );
                        self.diags.push(
                            Diagnostic::new(Code::ResolveUnknownName, file, base.span, msg)
                                .label("not a table")
                                .help(help),
                        );
                        return Typed::error();
                    }
                };
                let tb = &self.program.tables[table as usize];
                // A table with column labels is looked up by row and column.
                let nkeys = tb
                    .key_names
                    .len()
                    .max(if tb.columns.is_empty() { 1 } else { 2 });
                if args.len() != nkeys {
                    self.diags.push(
                        Diagnostic::new(
                            Code::TypeArity,
                            file,
                            e.span,
                            format!("table `{tname}` takes {nkeys} key(s); {} given", args.len()),
                        )
                        .label("wrong number of keys")
                        .help(format!(
                            "keys: {}",
                            self.program.tables[table as usize].key_names.join(", ")
                        )),
                    );
                }
                let mut keys = Vec::new();
                let mut die = false;
                for a in args {
                    let t = self.lower_expr(file, scope, &a.value, path);
                    die |= t.die;
                    keys.push(t.expr);
                }
                if !self.in_applicable && self.has_not_applicable(table) {
                    self.na_lookups.push((table, file, e.span));
                }
                // A column named by a constant: the lookup has that column's type.
                let column = match keys.last() {
                    Some(Expr::Const(Value::Symbol(s))) if keys.len() >= 2 => self.program.tables
                        [table as usize]
                        .columns
                        .iter()
                        .position(|c| matches!(c, Value::Symbol(x) if x == s)),
                    _ => None,
                };
                let (ty, reach) = self.table_result(table, column);
                let mut t = Typed::new(Expr::Lookup { table, keys }, ty).with_reach(reach);
                t.die = die;
                t
            }
        }
    }

    pub(crate) fn has_not_applicable(&self, table: u32) -> bool {
        self.program.tables[table as usize]
            .rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|v| matches!(v, Value::Symbol(s) if &**s == ir::NOT_APPLICABLE))
    }

    pub(crate) fn table_result(&self, table: u32, column: Option<usize>) -> (Type, Reach) {
        let t = &self.program.tables[table as usize];
        // `-` cells are tested with `applicable` before use: they give no value.
        let cells: Vec<&Value> = t
            .rows
            .iter()
            .flat_map(|r| match column {
                Some(c) => r.cells.get(c..=c).unwrap_or(&[]).iter(),
                None => r.cells.iter(),
            })
            .filter(|v| !matches!(v, Value::Symbol(s) if &**s == ir::NOT_APPLICABLE))
            .collect();
        let ints: Vec<i64> = cells
            .iter()
            .filter_map(|v| {
                if let Value::Int(n) = v {
                    Some(*n)
                } else {
                    None
                }
            })
            .collect();
        let all_known_ints = cells
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Unknown(_)));
        if all_known_ints && !ints.is_empty() {
            let reach = if cells.iter().any(|v| matches!(v, Value::Unknown(_))) {
                Reach::any()
            } else {
                Reach::from_values(ints)
            };
            (Type::Int, reach)
        } else if cells
            .iter()
            .all(|v| matches!(v, Value::Length(_) | Value::Unknown(_)))
            && cells.iter().any(|v| matches!(v, Value::Length(_)))
        {
            let lengths: Vec<i64> = cells
                .iter()
                .filter_map(|v| match v {
                    Value::Length(n) => Some(*n),
                    _ => None,
                })
                .collect();
            let reach = if lengths.len() == cells.len() {
                Reach::from_values(lengths)
            } else {
                Reach::any()
            };
            (Type::Length, reach)
        } else if cells
            .iter()
            .all(|v| matches!(v, Value::Symbol(_) | Value::Unknown(_)))
        {
            (Type::Symbol, Reach::any())
        } else {
            (Type::Any, Reach::any())
        }
    }

    pub(crate) fn roll(&mut self, die: u32, count: Option<i64>, _span: Span) -> Typed {
        let faces = self.program.dice[die as usize].faces.clone();
        let face_reach = Reach::from_values(faces);
        match count {
            Some(1) => Typed {
                expr: Expr::Roll(die),
                ty: Type::Int,
                reach: face_reach,
                die: true,
                extremes: None,
            },
            Some(n) => {
                let mut r = Reach::constant(0);
                for _ in 0..n.min(64) {
                    r = r.add(&face_reach);
                }
                if n > 64 {
                    let (lo, hi) = face_reach.bounds();
                    r = Reach::Interval(
                        lo.and_then(|l| l.checked_mul(n)),
                        hi.and_then(|h| h.checked_mul(n)),
                    );
                }
                Typed {
                    expr: Expr::Dice {
                        count: Box::new(Expr::Const(Value::Int(n))),
                        die,
                    },
                    ty: Type::Pool,
                    reach: r,
                    die: true,
                    extremes: None,
                }
            }
            None => Typed::new(Expr::Roll(die), Type::Int),
        }
    }

    pub(crate) fn lower_name(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        n: &str,
        span: Span,
    ) -> Typed {
        if let Some(slot) = scope.find(n) {
            let info = scope.slots[slot as usize].clone();
            return Typed {
                expr: Expr::Local(slot),
                ty: info.ty,
                reach: info.reach,
                die: info.die,
                extremes: None,
            };
        }
        match self.lookup(n) {
            Some(Sym::Die(d)) => return self.roll(d, Some(1), span),
            Some(Sym::Entity(id)) => {
                let kind = self.program.entities[id as usize].kind;
                return Typed::new(Expr::Const(Value::Entity(id)), Type::Entity(kind));
            }
            Some(Sym::Side(id)) => return Typed::new(Expr::Const(Value::Side(id)), Type::Side),
            Some(Sym::Config(_)) => return Typed::any(Expr::Const(Value::Symbol(n.into()))),
            // In a rule the engine runs, the kind itself; a property keeps the name, which
            // the typed scenario reads.
            Some(Sym::Kind(id)) if self.in_body => {
                return Typed::new(Expr::Const(Value::Kind(id)), Type::Symbol);
            }
            Some(Sym::Kind(_)) => {
                return Typed::new(Expr::Const(Value::Symbol(n.into())), Type::Symbol);
            }
            Some(other) => {
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeNotAValue,
                        file,
                        span,
                        format!("`{n}` is a {}, not a value", other.describe()),
                    )
                    .label("used as a value")
                    .help(match other {
                        Sym::Stack(_) | Sym::Proc(_) => format!("call it: `{n}(…)`"),
                        Sym::Table(_) => format!("look it up: `{n}[key]`"),
                        _ => "use one of its members or fields".to_string(),
                    }),
                );
                return Typed::error();
            }
            None => {}
        }
        if let Some(enums) = self.members.get(n).cloned() {
            if enums.len() > 1 {
                let names: Vec<String> = enums
                    .iter()
                    .map(|e| format!("`{}.{n}`", self.program.enums[*e as usize].name))
                    .collect();
                self.diags.push(
                    Diagnostic::new(
                        Code::ResolveAmbiguousName,
                        file,
                        span,
                        format!("`{n}` is a member of several enums"),
                    )
                    .label("ambiguous")
                    .help(format!("qualify it: {}", names.join(" or "))),
                );
            }
            self.uses.insert(Sym::Enum(enums[0]), 1);
            return Typed::new(Expr::Const(Value::Symbol(n.into())), Type::Enum(enums[0]));
        }
        if looks_like_coordinate(n) || self.table_symbols.contains(n) {
            if self.in_body
                && self.distance_ty == Type::Int
                && !self.table_symbols.contains(n)
                && let Some(hex) = ir::scenario::HexLabel::parse(n)
            {
                self.rule_labels.push((hex, file, span));
                return Typed::new(Expr::Const(Value::Hex(hex)), Type::Symbol);
            }
            return Typed::new(Expr::Const(Value::Symbol(n.into())), Type::Symbol);
        }
        if self.broken.contains(n) {
            return Typed::error();
        }
        let visible = scope.visible();
        let help = match self.suggest(n, &visible) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "declare it (a parameter, `let`, unit, side, enum member, die…) or check the spelling".to_string(),
        };
        self.diags.push(
            Diagnostic::new(
                Code::ResolveUnknownName,
                file,
                span,
                format!("cannot find `{n}` in this scope"),
            )
            .label("not found")
            .help(help),
        );
        Typed::error()
    }

    pub(crate) fn lower_field(&mut self, file: FileId, b: Typed, field: &ast::Ident) -> Typed {
        let out = |ty: Type, reach: Reach, b: Typed| Typed {
            expr: Expr::Field {
                base: Box::new(b.expr),
                field: field.name.clone(),
            },
            ty,
            reach,
            die: b.die,
            extremes: None,
        };
        match &b.ty {
            Type::Entity(Some(k)) => {
                let kd = &self.program.kinds[*k as usize];
                match kd.fields.iter().find(|f| f.name == field.name) {
                    Some(fd) => {
                        let ty = fd.ty.clone();
                        // What the field can be: the values every entity of this kind gives it.
                        let mut vals = Vec::new();
                        let mut all_known = true;
                        for en in self
                            .program
                            .entities
                            .iter()
                            .filter(|en| en.kind == Some(*k))
                        {
                            match en.field(&field.name) {
                                Some(Value::Int(n)) | Some(Value::Length(n)) => vals.push(*n),
                                Some(Value::Bool(bv)) => vals.push(i64::from(*bv)),
                                _ => all_known = false,
                            }
                        }
                        let reach = if all_known && !vals.is_empty() {
                            Reach::from_values(vals)
                        } else if ty == Type::Bool {
                            Reach::range(0, 1)
                        } else {
                            Reach::any()
                        };
                        out(ty, reach, b)
                    }
                    None => {
                        let names: Vec<&str> = kd.fields.iter().map(|f| f.name.as_str()).collect();
                        self.diags.push(
                            Diagnostic::new(
                                Code::ResolveUnknownField,
                                file,
                                field.span,
                                format!("kind `{}` has no field `{}`", kd.name, field.name),
                            )
                            .label("unknown field")
                            .help(format!(
                                "fields of `{}`: {}",
                                kd.name,
                                names.join(", ")
                            )),
                        );
                        Typed::error()
                    }
                }
            }
            Type::Int | Type::Length | Type::Bool | Type::Pool | Type::Die => {
                let t = self.type_name(&b.ty);
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeNoFields,
                        file,
                        field.span,
                        format!("{t} has no fields"),
                    )
                    .label("no such field")
                    .help("only pieces (units, weapons, terrain, markers) have fields"),
                );
                Typed::error()
            }
            _ => out(Type::Any, Reach::any(), b),
        }
    }

    /// How to fix a plain number that meets a length: give it the ruleset's unit.
    pub(crate) fn length_help(&self, bare: &Expr) -> String {
        let n = match bare {
            Expr::Const(Value::Int(n)) => n.to_string(),
            Expr::Unary {
                op: ir::UnOp::Neg,
                operand,
            } if matches!(operand.as_ref(), Expr::Const(Value::Int(_))) => match operand.as_ref() {
                Expr::Const(Value::Int(n)) => format!("-{n}"),
                _ => unreachable!("matched above"),
            },
            _ => {
                return match self.program.length_unit.as_deref() {
                    Some(u) => format!(
                        "lengths are never plain numbers: write the number with the ruleset's unit (`3{u}`), or multiply a length (`n * 1{u}`)"
                    ),
                    None => "lengths are never plain numbers: write the number with a unit (`3in`, `10cm`), or multiply a length (`n * 1in`)".to_string(),
                };
            }
        };
        match self.program.length_unit.as_deref() {
            Some(u) => format!("give the number the ruleset's unit: `{n}{u}`"),
            None => format!("give the number a unit: `{n}in` or `{n}cm`"),
        }
    }

    pub(crate) fn unify(&mut self, file: FileId, a: &Type, b: &Type, span: Span) -> Type {
        match (a, b) {
            (Type::Any, t) | (t, Type::Any) => t.clone(),
            (Type::Pool, Type::Int) | (Type::Int, Type::Pool) => Type::Int,
            (x, y) if x == y => x.clone(),
            (Type::Entity(_), Type::Entity(_)) => Type::Entity(None),
            (x, y) => {
                let (xn, yn) = (self.type_name(x), self.type_name(y));
                self.diags.push(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        file,
                        span,
                        format!("branches have different types: {xn} and {yn}"),
                    )
                    .label("mixed types")
                    .help("both branches must give the same kind of value"),
                );
                Type::Any
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lower_binary(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        op: ast::BinOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        path: &str,
    ) -> Typed {
        let l = self.lower_expr(file, scope, lhs, path);
        let r = self.lower_expr(file, scope, rhs, path);
        let die = l.die || r.die;
        let extremes = match (&l.extremes, &r.extremes) {
            (None, None) => None,
            _ => Some(()),
        };
        use ast::BinOp as B;
        match op {
            B::And | B::Or => {
                // Settled when one side settles it, or both are settled.
                let settled = |t: &Typed| match t.reach.bounds() {
                    (Some(0), Some(0)) => Some(false),
                    (Some(1), Some(1)) => Some(true),
                    _ => None,
                };
                let value = match (op, settled(&l), settled(&r)) {
                    (B::And, Some(false), _) | (B::And, _, Some(false)) => Some(false),
                    (B::And, Some(true), Some(true)) => Some(true),
                    (B::Or, Some(true), _) | (B::Or, _, Some(true)) => Some(true),
                    (B::Or, Some(false), Some(false)) => Some(false),
                    _ => None,
                };
                let le = l.expect_bool(self, file, lhs.span);
                let re = r.expect_bool(self, file, rhs.span);
                let mut t = Typed::new(
                    Expr::Binary {
                        op: map_bin(op),
                        lhs: Box::new(le),
                        rhs: Box::new(re),
                    },
                    Type::Bool,
                );
                t.die = die;
                if let Some(v) = value {
                    t.reach = Reach::constant(i64::from(v));
                }
                t
            }
            B::Add | B::Sub | B::Mul | B::Div | B::Rem => {
                let ty = match (&l.ty, &r.ty) {
                    (a, b) if !numeric(a) || !numeric(b) => {
                        let bad = if numeric(a) {
                            (rhs.span, &r.ty)
                        } else {
                            (lhs.span, &l.ty)
                        };
                        let tn = self.type_name(bad.1);
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeMismatch,
                                file,
                                bad.0,
                                format!("`{}` needs numbers; this is {tn}", op.symbol()),
                            )
                            .label(tn.to_string())
                            .help("arithmetic works on integers, lengths and dice"),
                        );
                        Type::Any
                    }
                    (Type::Length, Type::Int) | (Type::Int, Type::Length)
                        if matches!(op, B::Mul) =>
                    {
                        Type::Length
                    }
                    (Type::Length, Type::Int) if matches!(op, B::Div) => Type::Length,
                    (Type::Length, Type::Length) if matches!(op, B::Div) => Type::Int,
                    (Type::Length, Type::Int | Type::Pool)
                    | (Type::Int | Type::Pool, Type::Length)
                        if matches!(op, B::Add | B::Sub) =>
                    {
                        // `0` is a length of nothing in any unit.
                        let zero = matches!(l.expr, Expr::Const(Value::Int(0)))
                            || matches!(r.expr, Expr::Const(Value::Int(0)));
                        if !zero {
                            let bare = if l.ty == Type::Length { &r } else { &l };
                            let help = self.length_help(&bare.expr);
                            self.diags.push(
                                Diagnostic::new(
                                    Code::TypeMismatch,
                                    file,
                                    span,
                                    "cannot mix a length and a plain number",
                                )
                                .label("length and integer")
                                .help(help),
                            );
                        }
                        Type::Length
                    }
                    (Type::Length, _) | (_, Type::Length) => Type::Length,
                    (Type::Any, _) | (_, Type::Any) => Type::Any,
                    _ => Type::Int,
                };
                let f = |a: &Reach, b: &Reach| match op {
                    B::Add => a.add(b),
                    B::Sub => a.sub(b),
                    B::Mul => a.mul(b),
                    B::Div => a.combine(b, floor_div, |_, _| Reach::any()),
                    _ => a.combine(
                        b,
                        |x, y| (y != 0).then(|| x.rem_euclid(y)),
                        |_, _| Reach::any(),
                    ),
                };
                let reach = f(&l.reach, &r.reach);
                let ext = extremes.map(|_| {
                    let (ll, lh) = l.lo_hi();
                    let (rl, rh) = r.lo_hi();
                    match op {
                        B::Sub => (f(&ll, &rh), f(&lh, &rl)),
                        _ => (f(&ll, &rl), f(&lh, &rh)),
                    }
                });
                Typed {
                    expr: Expr::Binary {
                        op: map_bin(op),
                        lhs: Box::new(l.expr),
                        rhs: Box::new(r.expr),
                    },
                    ty,
                    reach,
                    die,
                    extremes: ext,
                }
            }
            B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge | B::In => {
                let comparable = match (&l.ty, &r.ty) {
                    (Type::Any, _) | (_, Type::Any) => true,
                    (_, Type::Range) if op == B::In => true,
                    (_, Type::List(_)) if op == B::In => true,
                    (a, b) if numeric(a) && numeric(b) => {
                        let lengthy = (*a == Type::Length) != (*b == Type::Length);
                        let zero = matches!(l.expr, Expr::Const(Value::Int(0)))
                            || matches!(r.expr, Expr::Const(Value::Int(0)));
                        !lengthy || zero
                    }
                    (Type::Enum(a), Type::Enum(b)) => a == b,
                    (Type::Symbol, Type::Enum(_)) | (Type::Enum(_), Type::Symbol) => true,
                    (Type::Entity(_), Type::Entity(_)) => true,
                    // `[]` and lists of engine values have no known element type.
                    (Type::List(a), Type::List(b)) => {
                        **a == Type::Any || **b == Type::Any || a == b
                    }
                    (a, b) => a == b,
                };
                if !comparable {
                    let (ln, rn) = (self.type_name(&l.ty), self.type_name(&r.ty));
                    let lengthy = (l.ty == Type::Length) != (r.ty == Type::Length)
                        && numeric(&l.ty)
                        && numeric(&r.ty);
                    let (code, help) = if lengthy {
                        let bare = if l.ty == Type::Length { &r } else { &l };
                        (Code::TypeMismatch, self.length_help(&bare.expr))
                    } else {
                        (
                            Code::TypeMismatch,
                            "compare values of the same type".to_string(),
                        )
                    };
                    self.diags.push(
                        Diagnostic::new(code, file, span, format!("cannot compare {ln} with {rn}"))
                            .label(if lengthy {
                                "a length against a plain number"
                            } else {
                                "incomparable"
                            })
                            .help(help),
                    );
                }
                let mut t = Typed::new(
                    Expr::Binary {
                        op: map_bin(op),
                        lhs: Box::new(l.expr.clone()),
                        rhs: Box::new(r.expr.clone()),
                    },
                    Type::Bool,
                );
                t.die = die;
                if comparable
                    && matches!(op, B::Lt | B::Le | B::Gt | B::Ge)
                    && numeric(&l.ty)
                    && numeric(&r.ty)
                {
                    crate::lints::comparison(self, file, span, op, &l, &r);
                    let c = compare_reach(op, &l.reach, &r.reach);
                    t.reach = match c {
                        Some(true) => Reach::constant(1),
                        Some(false) => Reach::constant(0),
                        None => Reach::range(0, 1),
                    };
                }
                t
            }
        }
    }
}

/// Whether `a OP b` is settled by the reaches alone.
pub(crate) fn compare_reach(op: ast::BinOp, a: &Reach, b: &Reach) -> Option<bool> {
    let (alo, ahi) = a.bounds();
    let (blo, bhi) = b.bounds();
    let (alo, ahi, blo, bhi) = (alo?, ahi?, blo?, bhi?);
    use ast::BinOp as B;
    match op {
        B::Ge if alo >= bhi => Some(true),
        B::Ge if ahi < blo => Some(false),
        B::Gt if alo > bhi => Some(true),
        B::Gt if ahi <= blo => Some(false),
        B::Le if ahi <= blo => Some(true),
        B::Le if alo > bhi => Some(false),
        B::Lt if ahi < blo => Some(true),
        B::Lt if alo >= bhi => Some(false),
        _ => None,
    }
}
