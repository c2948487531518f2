//! Expressions and statements: name resolution, types and reachable values in one walk, so
//! every lint can point at the exact span it is about.

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::{Lowerer, Sym};
use crate::diagnostic::Diagnostic;
use crate::ir::{self, Builtin, Expr, Stmt, Type, Value};
use crate::reach::{Reach, floor_div};
use crate::source::FileId;

/// Largest pool a `pool(n, die)` may have.
pub(crate) const MAX_POOL: i64 = 1000;
/// Largest bound of a `repeat`.
pub(crate) const MAX_REPEAT: i64 = 10_000;

/// Functions of the game engine. Their values need a game state; the checker only counts
/// their arguments.
pub const HOST_FUNCTIONS: &[(&str, usize, usize)] = &[
    ("eliminated", 0, 3),
    ("exited", 0, 3),
    ("alive", 0, 3),
    ("units", 0, 3),
    ("count_units", 0, 3),
    ("distance", 2, 2),
    ("adjacent", 2, 2),
    ("in_los", 2, 2),
    ("jungle_between", 2, 2),
    ("route_blocked", 2, 2),
    ("units_in", 1, 2),
    ("has_marker", 2, 2),
    ("owner", 1, 1),
    ("free_action", 1, 2),
    ("terrain_of", 1, 1),
    ("hexes_within", 2, 2),
    ("score_of", 1, 1),
    ("turn_number", 0, 0),
    ("retreat", 1, 2),
    ("reveal", 1, 1),
];

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
    fn bind(&mut self, name: &str, ty: Type, reach: Reach, die: bool) -> u32 {
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
    fn find(&self, name: &str) -> Option<u32> {
        self.frames
            .iter()
            .rev()
            .flat_map(|f| f.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }
    fn push(&mut self) {
        self.frames.push(Vec::new());
    }
    fn pop(&mut self) {
        self.frames.pop();
    }
    pub(crate) fn n_slots(&self) -> u32 {
        self.slots.len() as u32
    }
    pub(crate) fn slot_names(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.name.clone()).collect()
    }
    fn visible(&self) -> Vec<String> {
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
    fn new(expr: Expr, ty: Type) -> Self {
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
    fn any(expr: Expr) -> Self {
        Typed::new(expr, Type::Any)
    }
    fn error() -> Self {
        Typed::any(Expr::Const(Value::Symbol(String::new())))
    }
    fn with_reach(mut self, r: Reach) -> Self {
        self.reach = r;
        self
    }
    fn lo_hi(&self) -> (Reach, Reach) {
        self.extremes
            .clone()
            .unwrap_or((self.reach.clone(), self.reach.clone()))
    }

    pub(crate) fn expect_numeric(self, lw: &mut Lowerer, file: FileId, span: Span) -> Expr {
        if !matches!(self.ty, Type::Int | Type::Length | Type::Any | Type::Pool) {
            let t = lw.type_name(&self.ty);
            lw.diags.push(
                Diagnostic::error(
                    "sand::type::mismatch",
                    file,
                    span,
                    format!("expected a number, found {t}"),
                )
                .label(format!("this is {t}"))
                .help("modifiers, counts and dice arithmetic take integers or lengths"),
            );
        }
        self.expr
    }
    pub(crate) fn expect_bool(self, lw: &mut Lowerer, file: FileId, span: Span) -> Expr {
        if !matches!(self.ty, Type::Bool | Type::Any) {
            let t = lw.type_name(&self.ty);
            lw.diags.push(
                Diagnostic::error(
                    "sand::type::mismatch",
                    file,
                    span,
                    format!("expected a condition, found {t}"),
                )
                .label(format!("this is {t}, not true/false"))
                .help("write a comparison such as `d6 >= 4` or `cover == medium`"),
            );
        }
        self.expr
    }
}

fn numeric(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Length | Type::Pool | Type::Any)
}

fn map_bin(op: ast::BinOp) -> ir::BinOp {
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
            ExprKind::Str(s) => Typed::new(Expr::Const(Value::Text(s.clone())), Type::Text),
            ExprKind::Unknown(note) => {
                let id = self.register_unknown(file, e.span, path, note.clone(), false);
                Typed::any(Expr::Const(Value::Unknown(id)))
            }
            ExprKind::Name(n) => self.lower_name(file, scope, n, e.span),
            ExprKind::Dice { count, sides } => {
                if *sides < 1 || *sides > super::items::MAX_FACES {
                    self.diags.push(
                        Diagnostic::error(
                            "sand::limit::too-large",
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
                        Diagnostic::error(
                            "sand::limit::too-large",
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
            ExprKind::Range { .. } => Typed::new(
                Expr::Const(self.const_value(file, e, path, None)),
                Type::Range,
            ),
            ExprKind::Unary { op, operand } => {
                let t = self.lower_expr(file, scope, operand, path);
                match op {
                    ast::UnOp::Neg => {
                        if !numeric(&t.ty) {
                            let tn = self.type_name(&t.ty);
                            self.diags.push(
                                Diagnostic::error(
                                    "sand::type::mismatch",
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
                            Expr::Const(Value::Symbol(field.name.clone())),
                            Type::Enum(en),
                        );
                    }
                    self.diags.push(
                        Diagnostic::error(
                            "sand::resolve::unknown-name",
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
                        Diagnostic::error(
                            "sand::type::not-a-table",
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
                            Diagnostic::error("sand::resolve::unknown-name", file, base.span, msg)
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
                        Diagnostic::error(
                            "sand::type::arity",
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
                let (ty, reach) = self.table_result(table);
                let mut t = Typed::new(Expr::Lookup { table, keys }, ty).with_reach(reach);
                t.die = die;
                t
            }
        }
    }

    fn table_result(&self, table: u32) -> (Type, Reach) {
        let t = &self.program.tables[table as usize];
        let cells: Vec<&Value> = t.rows.iter().flat_map(|r| r.cells.iter()).collect();
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
            .all(|v| matches!(v, Value::Symbol(_) | Value::Unknown(_)))
        {
            (Type::Symbol, Reach::any())
        } else {
            (Type::Any, Reach::any())
        }
    }

    fn roll(&mut self, die: u32, count: Option<i64>, _span: Span) -> Typed {
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

    fn lower_name(&mut self, file: FileId, scope: &mut Scope, n: &str, span: Span) -> Typed {
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
            Some(Sym::Config(_)) => return Typed::any(Expr::Const(Value::Symbol(n.to_string()))),
            Some(Sym::Kind(_)) => {
                return Typed::new(Expr::Const(Value::Symbol(n.to_string())), Type::Symbol);
            }
            Some(other) => {
                self.diags.push(
                    Diagnostic::error(
                        "sand::type::not-a-value",
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
                    Diagnostic::error(
                        "sand::resolve::ambiguous-name",
                        file,
                        span,
                        format!("`{n}` is a member of several enums"),
                    )
                    .label("ambiguous")
                    .help(format!("qualify it: {}", names.join(" or "))),
                );
            }
            self.uses.insert(Sym::Enum(enums[0]), 1);
            return Typed::new(
                Expr::Const(Value::Symbol(n.to_string())),
                Type::Enum(enums[0]),
            );
        }
        if looks_like_coordinate(n) || self.table_symbols.contains(n) {
            return Typed::new(Expr::Const(Value::Symbol(n.to_string())), Type::Symbol);
        }
        let visible = scope.visible();
        let help = match self.suggest(n, &visible) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "declare it (a parameter, `let`, unit, side, enum member, die…) or check the spelling".to_string(),
        };
        self.diags.push(
            Diagnostic::error(
                "sand::resolve::unknown-name",
                file,
                span,
                format!("cannot find `{n}` in this scope"),
            )
            .label("not found")
            .help(help),
        );
        Typed::error()
    }

    fn lower_field(&mut self, file: FileId, b: Typed, field: &ast::Ident) -> Typed {
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
                            Diagnostic::error(
                                "sand::resolve::unknown-field",
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
                    Diagnostic::error(
                        "sand::type::no-fields",
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

    fn unify(&mut self, file: FileId, a: &Type, b: &Type, span: Span) -> Type {
        match (a, b) {
            (Type::Any, t) | (t, Type::Any) => t.clone(),
            (Type::Pool, Type::Int) | (Type::Int, Type::Pool) => Type::Int,
            (x, y) if x == y => x.clone(),
            (Type::Entity(_), Type::Entity(_)) => Type::Entity(None),
            (x, y) => {
                let (xn, yn) = (self.type_name(x), self.type_name(y));
                self.diags.push(
                    Diagnostic::error(
                        "sand::type::mismatch",
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
    fn lower_binary(
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
                            Diagnostic::error(
                                "sand::type::mismatch",
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
                            self.diags.push(
                                Diagnostic::error(
                                    "sand::type::mismatch",
                                    file,
                                    span,
                                    "cannot mix a length and a plain number",
                                )
                                .label("length and integer")
                                .help("give the number a unit: `3in`, `10cm`"),
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
                    (a, b) => a == b,
                };
                if !comparable {
                    let (ln, rn) = (self.type_name(&l.ty), self.type_name(&r.ty));
                    self.diags.push(
                        Diagnostic::error(
                            "sand::type::mismatch",
                            file,
                            span,
                            format!("cannot compare {ln} with {rn}"),
                        )
                        .label("incomparable")
                        .help(
                            if ln.contains("length") || rn.contains("length") {
                                "give numbers a unit when comparing with lengths: `range <= 3in`"
                                    .to_string()
                            } else {
                                "compare values of the same type".to_string()
                            },
                        ),
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

    fn lower_call(
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
                        Diagnostic::error(
                            "sand::type::not-callable",
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
        if let Some((_, min, max)) = HOST_FUNCTIONS.iter().find(|(n, _, _)| *n == name) {
            if args.len() < *min || args.len() > *max {
                self.diags.push(
                    Diagnostic::error(
                        "sand::type::arity",
                        file,
                        span,
                        format!(
                            "`{name}` takes {min} to {max} arguments; {} given",
                            args.len()
                        ),
                    )
                    .label("wrong number of arguments")
                    .help("see the list of engine functions in docs/language.md"),
                );
            }
            let lowered: Vec<Expr> = args
                .iter()
                .map(|a| self.lower_expr(file, scope, &a.value, path).expr)
                .collect();
            let ty = match name {
                "adjacent" | "in_los" | "route_blocked" | "has_marker" => Type::Bool,
                "owner" => Type::Side,
                "units" | "units_in" | "hexes_within" => Type::List(Box::new(Type::Entity(None))),
                "free_action" | "retreat" | "reveal" | "terrain_of" => Type::Any,
                _ => Type::Int,
            };
            let mut t = Typed::new(
                Expr::Host {
                    name: name.to_string(),
                    args: lowered,
                },
                ty,
            );
            if matches!(
                name,
                "eliminated" | "exited" | "alive" | "count_units" | "distance" | "turn_number"
            ) {
                t.reach = Reach::Interval(Some(0), None);
            }
            return t;
        }
        let visible = scope.visible();
        let help = match self.suggest(name, &visible) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "define it with `procedure NAME(…) { … }`, or use a built-in: min, max, clamp, abs, div_up, pool, sum, highest, lowest, successes, count, reroll".to_string(),
        };
        self.diags.push(
            Diagnostic::error(
                "sand::resolve::unknown-name",
                file,
                callee.span,
                format!("cannot find function `{name}`"),
            )
            .label("not found")
            .help(help),
        );
        for a in args {
            self.lower_expr(file, scope, &a.value, path);
        }
        Typed::error()
    }

    #[allow(clippy::too_many_arguments)]
    fn lower_args(
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
                            Diagnostic::error(
                                "sand::type::arity",
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
                    Diagnostic::error(
                        "sand::type::arity",
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
                    Diagnostic::error(
                        "sand::type::mismatch",
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
                            Diagnostic::error(
                                "sand::type::arity",
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
    fn lower_stack_call(
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
    fn const_reach(&self, e: &Expr, args: &[Typed]) -> Reach {
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

    fn lower_builtin(
        &mut self,
        file: FileId,
        scope: &mut Scope,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        path: &str,
    ) -> Option<Typed> {
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
                Diagnostic::error(
                    "sand::type::arity",
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
        let die_arg = |lw: &mut Self, a: &ast::Expr| -> Option<u32> {
            match &a.kind {
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
            }
        };
        match func {
            Builtin::Pool => {
                let n = self.lower_expr(file, scope, &args[0].value, path);
                let Some(die) = die_arg(self, &args[1].value) else {
                    self.diags.push(
                        Diagnostic::error(
                            "sand::type::not-a-die",
                            file,
                            args[1].value.span,
                            "`pool` needs a die as its second argument",
                        )
                        .label("not a die")
                        .help("write `pool(n, d6)` or `pool(n, my_die)`"),
                    );
                    return Some(Typed::error());
                };
                let (nlo, nhi) = n.reach.bounds();
                if nhi.is_some_and(|h| h > MAX_POOL) || nlo.is_some_and(|l| l < 0) {
                    self.diags.push(
                        Diagnostic::error(
                            "sand::limit::too-large",
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
                let Some(die) = die_arg(self, &args[0].value) else {
                    self.diags.push(
                        Diagnostic::error(
                            "sand::type::not-a-die",
                            file,
                            args[0].value.span,
                            "`reroll` needs a die as its first argument",
                        )
                        .label("not a die")
                        .help("write `reroll(d8, 1..=3)`"),
                    );
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
                    Diagnostic::error(
                        "sand::type::mismatch",
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
                lowered[0].reach.combine(
                    &lowered[1].reach,
                    |x, y| floor_div(x, y).map(|q| if q * y != x { q + 1 } else { q }),
                    |_, _| Reach::any(),
                ),
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
                let n = pool_size_bound(&lowered[0].expr);
                (
                    Type::Int,
                    n.map_or(Reach::Interval(Some(0), None), |n| Reach::range(0, n)),
                )
            }
            Builtin::Pool | Builtin::Reroll => unreachable!("handled above"),
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

    // ------------------------------------------------------------ statements

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

    fn lower_stmt(
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
                        Diagnostic::error(
                            "sand::type::mismatch",
                            file,
                            scrutinee.span,
                            format!("bands need a number or a name; this is {tn}"),
                        )
                        .label(tn)
                        .help("bands choose by the value of a number, such as `attack - defence`"),
                    );
                }
                let mut lowered = Vec::new();
                for a in arms {
                    let patterns: Vec<ir::KeyPattern> = a
                        .patterns
                        .iter()
                        .map(|p| self.key_pattern(file, p))
                        .collect();
                    let value = a
                        .value
                        .as_ref()
                        .map(|v| self.lower_expr(file, scope, v, path).expr);
                    let body = a
                        .body
                        .as_ref()
                        .map(|b| self.lower_block(file, scope, b, path))
                        .unwrap_or_default();
                    lowered.push(ir::Arm {
                        patterns,
                        outcome: a.outcome.as_ref().map(|o| o.name.clone()),
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
                    scrutinee: t.expr,
                    arms: lowered,
                }
            }
            K::Result(e) => Stmt::Result(self.lower_expr(file, scope, e, path).expr),
            K::Outcome(o) => Stmt::Outcome(o.name.clone()),
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
            K::Choose { var, from, body }
            | K::For {
                var,
                iter: from,
                body,
            } => {
                let f = self.lower_expr(file, scope, from, path);
                let elem = match &f.ty {
                    Type::List(t) => (**t).clone(),
                    Type::Range => Type::Int,
                    _ => Type::Any,
                };
                scope.push();
                let slot = scope.bind(&var.name, elem, Reach::any(), false);
                let b = self.lower_block(file, scope, body, path);
                scope.pop();
                if matches!(s.kind, K::Choose { .. }) {
                    Stmt::Choose {
                        slot,
                        from: f.expr,
                        body: b,
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
                            Diagnostic::error(
                                "sand::type::unbounded-repeat",
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
            K::Require(e) => Stmt::Require(
                self.lower_expr(file, scope, e, path)
                    .expect_bool(self, file, e.span),
            ),
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
                        Diagnostic::warning(
                            "sand::lint::unused-value",
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

    fn marker(&mut self, file: FileId, m: &ast::Ident) -> Option<u32> {
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
                    Diagnostic::error("sand::resolve::unknown-name", file, m.span, msg)
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
            _ => {
                let sides: Vec<String> =
                    self.program.sides.iter().map(|s| s.name.clone()).collect();
                self.diags.push(
                    Diagnostic::error(
                        "sand::resolve::unknown-name",
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
