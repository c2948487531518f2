//! Declarations and data: sides, enums, kinds, dice, entities, stacks, tables, procedure
//! signatures and bodies.

use std::collections::HashMap;

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::{Located, Lowerer, Scope, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Type, Value};
use crate::source::FileId;

/// Largest number of faces a die may have.
pub(crate) const MAX_FACES: u32 = 1000;
/// Largest face value (either sign).
pub(crate) const MAX_FACE_VALUE: i64 = 1_000_000_000;

impl<'a> Lowerer<'a> {
    /// Pass 2: give every definition an index, then fill in what declarations need.
    pub(crate) fn declare(&mut self, items: &[Located]) {
        for loc in items {
            let f = loc.file;
            match &loc.item.kind {
                ast::ItemKind::Side(s) => {
                    let id = self.program.sides.len() as u32;
                    self.program.sides.push(ir::SideDef {
                        name: s.name.name.clone(),
                        title: s.title.as_ref().map(|t| t.value.clone()),
                    });
                    self.define_global(&s.name, f, Sym::Side(id));
                    // Sides are referenced by scenarios and the engine, not always by rules.
                    self.uses.insert(Sym::Side(id), 1);
                }
                ast::ItemKind::Enum(e) => {
                    let id = self.program.enums.len() as u32;
                    let mut members: Vec<String> = Vec::new();
                    for m in &e.members {
                        if members.contains(&m.name) {
                            self.diags.push(
                                Diagnostic::new(
                                    Code::ResolveDuplicateDefinition,
                                    f,
                                    m.span,
                                    format!("`{}` is listed twice in enum `{}`", m.name, e.name.name),
                                )
                                .label("repeated member")
                                .help("remove the repeated member"),
                            );
                            continue;
                        }
                        members.push(m.name.clone());
                        self.members.entry(m.name.clone()).or_default().push(id);
                    }
                    self.program.enums.push(ir::EnumDef {
                        name: e.name.name.clone(),
                        members,
                        cite: self.cite(loc.section, &e.see),
                    });
                    self.define_global(&e.name, f, Sym::Enum(id));
                }
                ast::ItemKind::Kind(k) => {
                    let id = self.program.kinds.len() as u32;
                    self.program.kinds.push(ir::KindDef {
                        name: k.name.name.clone(),
                        title: k.title.as_ref().map(|t| t.value.clone()),
                        fields: Vec::new(),
                        cite: self.cite(loc.section, &k.see),
                    });
                    self.define_global(&k.name, f, Sym::Kind(id));
                }
                ast::ItemKind::Entity(e) => {
                    let id = self.program.entities.len() as u32;
                    self.program.entities.push(ir::EntityDef {
                        name: e.name.name.clone(),
                        category: match e.category {
                            ast::EntityCategory::Unit => ir::Category::Unit,
                            ast::EntityCategory::Weapon => ir::Category::Weapon,
                            ast::EntityCategory::Terrain => ir::Category::Terrain,
                            ast::EntityCategory::Marker => ir::Category::Marker,
                        },
                        kind: None,
                        side: None,
                        title: e.title.as_ref().map(|t| t.value.clone()),
                        fields: Vec::new(),
                        cite: self.cite(loc.section, &e.see),
                    });
                    self.define_global(&e.name, f, Sym::Entity(id));
                }
                ast::ItemKind::Die(d) => {
                    let id = self.program.dice.len() as u32;
                    self.program.dice.push(ir::DieDef {
                        name: d.name.name.clone(),
                        faces: Vec::new(),
                        cite: self.cite(loc.section, &d.see),
                    });
                    self.define_global(&d.name, f, Sym::Die(id));
                }
                ast::ItemKind::Stack(s) => {
                    let id = self.program.stacks.len() as u32;
                    self.program.stacks.push(ir::StackDef {
                        name: s.name.name.clone(),
                        params: Vec::new(),
                        clamp: (None, None),
                        entries: Vec::new(),
                        n_slots: 0,
                        cite: self.cite(loc.section, &s.see),
                    });
                    self.define_global(&s.name, f, Sym::Stack(id));
                }
                ast::ItemKind::Table(t) => {
                    let id = self.program.tables.len() as u32;
                    self.program.tables.push(ir::TableDef {
                        name: t.name.name.clone(),
                        key_names: t.keys.iter().map(|k| k.name.name.clone()).collect(),
                        columns: Vec::new(),
                        rows: Vec::new(),
                        cite: self.cite(loc.section, &t.see),
                    });
                    self.define_global(&t.name, f, Sym::Table(id));
                }
                ast::ItemKind::Proc(p) => {
                    let id = self.program.procs.len() as u32;
                    self.program.procs.push(ir::ProcDef {
                        name: p.name.name.clone(),
                        kind: match p.kind {
                            ast::ProcKind::Resolve => ir::ProcKind::Resolve,
                            ast::ProcKind::Action => ir::ProcKind::Action,
                            ast::ProcKind::Procedure => ir::ProcKind::Procedure,
                        },
                        params: Vec::new(),
                        body: Vec::new(),
                        n_slots: 0,
                        slot_names: Vec::new(),
                        slot_types: Vec::new(),
                        file: String::new(),
                        line: 0,
                        lines: Vec::new(),
                        result_length: false,
                        cite: self.cite(loc.section, &p.see),
                    });
                    self.define_global(&p.name, f, Sym::Proc(id));
                }
                ast::ItemKind::Config(c) => self.declare_config(f, c),
                ast::ItemKind::Import(_)
                | ast::ItemKind::Note(_)
                | ast::ItemKind::See(_)
                | ast::ItemKind::Policy(_)
                | ast::ItemKind::Section(_) => {}
                ast::ItemKind::Assume(a) => self.diags.push(
                    Diagnostic::new(
                        Code::ResolveAssumeOutsideAssumptions,
                        f,
                        a.path.span,
                        "`assume` belongs in an assumptions file, not in the ruleset",
                    )
                    .label("assumption inside the rules")
                    .help("move it to a file ending in `.assume` and pass it with `--assumptions FILE`; the rules keep `?`"),
                ),
            }
        }
        // Kind fields and signatures can refer to any declared name, so they come second.
        for loc in items {
            match &loc.item.kind {
                ast::ItemKind::Kind(k) => self.declare_kind_fields(loc.file, k),
                ast::ItemKind::Die(d) => self.declare_die(loc.file, d),
                ast::ItemKind::Stack(s) => {
                    let id = self.stack_id(loc.file, &s.name);
                    let params = self.params(loc.file, &s.params);
                    let clamp = s
                        .clamp
                        .as_ref()
                        .map(|c| {
                            let (lo, hi) = self.const_range(loc.file, c);
                            self.check_not_inverted(loc.file, c, lo, hi, "clamp");
                            (lo, hi)
                        })
                        .unwrap_or((None, None));
                    let st = &mut self.program.stacks[id as usize];
                    st.params = params;
                    st.clamp = clamp;
                }
                ast::ItemKind::Proc(p) => {
                    let id = self.proc_id(loc.file, &p.name);
                    let params = self.params(loc.file, &p.params);
                    self.program.procs[id as usize].params = params;
                }
                _ => {}
            }
        }
    }

    fn stack_id(&self, file: FileId, name: &ast::Ident) -> u32 {
        match self.own_sym(file, name) {
            Some(Sym::Stack(id)) => id,
            _ => self.program.stacks.len().saturating_sub(1) as u32,
        }
    }
    fn proc_id(&self, file: FileId, name: &ast::Ident) -> u32 {
        match self.own_sym(file, name) {
            Some(Sym::Proc(id)) => id,
            _ => self.program.procs.len().saturating_sub(1) as u32,
        }
    }

    /// Resolve a written type.
    pub(crate) fn resolve_type(
        &mut self,
        file: FileId,
        ty: &ast::TypeExpr,
    ) -> (Type, Option<(i64, i64)>) {
        match ty {
            ast::TypeExpr::Range(r) => {
                let (lo, hi) = self.const_range(file, r);
                let ty = match &r.kind {
                    ExprKind::Range { lo: Some(l), .. }
                        if matches!(l.kind, ExprKind::Length(_)) =>
                    {
                        Type::Length
                    }
                    _ => Type::Int,
                };
                match (lo, hi) {
                    (Some(l), Some(h)) => (ty, Some((l, h))),
                    _ => (ty, None),
                }
            }
            ast::TypeExpr::Die(_) => (Type::Int, None),
            ast::TypeExpr::Named(n) => {
                let t = match n.name.as_str() {
                    "int" => Type::Int,
                    "length" => Type::Length,
                    "bool" => Type::Bool,
                    "text" => Type::Text,
                    "die" => Type::Die,
                    "side" => Type::Side,
                    "any" => Type::Any,
                    "unit" | "weapon" | "terrain" | "marker" | "entity" | "hex" | "piece"
                    | "place" => Type::Entity(None),
                    other => match self.lookup(other) {
                        Some(Sym::Enum(e)) => Type::Enum(e),
                        Some(Sym::Kind(k)) => Type::Entity(Some(k)),
                        Some(s) => {
                            self.diags.push(
                                Diagnostic::new(
                                    Code::TypeNotAType,
                                    file,
                                    n.span,
                                    format!("`{other}` is a {}, not a type", s.describe()),
                                )
                                .label("used as a type")
                                .help("types are int, length, bool, text, die, side, an enum, a kind, or a range such as 0..=10"),
                            );
                            Type::Any
                        }
                        // Its definition has a syntax error, reported already.
                        None if self.broken.contains(other) => Type::Any,
                        None => {
                            let mut d = Diagnostic::new(
                                Code::ResolveUnknownType,
                                file,
                                n.span,
                                format!("unknown type `{other}`"),
                            )
                            .label("not a type");
                            d = d.help(match self.suggest(other, &[]) {
                                Some(s) => format!("did you mean `{s}`? types are int, length, bool, text, die, side, an enum, a kind, or a range"),
                                None => "types are int, length, bool, text, die, side, an enum, a kind, or a range such as 0..=10".into(),
                            });
                            self.diags.push(d);
                            Type::Any
                        }
                    },
                };
                (t, None)
            }
        }
    }

    fn declare_kind_fields(&mut self, file: FileId, k: &ast::KindDef) {
        let Some(Sym::Kind(id)) = self.own_sym(file, &k.name) else {
            return;
        };
        let mut fields: Vec<ir::FieldDef> = Vec::new();
        for fd in &k.fields {
            if fields.iter().any(|f| f.name == fd.name.name) {
                self.diags.push(
                    Diagnostic::new(
                        Code::ResolveDuplicateDefinition,
                        file,
                        fd.name.span,
                        format!(
                            "field `{}` is declared twice in kind `{}`",
                            fd.name.name, k.name.name
                        ),
                    )
                    .label("repeated field")
                    .help("remove or rename one of the two"),
                );
                continue;
            }
            let (ty, _) = self.resolve_type(file, &fd.ty);
            let path = format!("{}.{}", k.name.name, fd.name.name);
            let default = fd
                .default
                .as_ref()
                .map(|d| self.const_value(file, d, &path, None));
            fields.push(ir::FieldDef {
                name: fd.name.name.clone(),
                ty,
                default,
            });
        }
        self.program.kinds[id as usize].fields = fields;
    }

    fn declare_die(&mut self, file: FileId, d: &ast::DieDef) {
        let Some(Sym::Die(id)) = self.own_sym(file, &d.name) else {
            return;
        };
        let faces: Vec<i64> = match &d.faces.kind {
            ExprKind::List(items) => items
                .iter()
                .filter_map(|e| match self.const_value(file, e, &d.name.name, None) {
                    Value::Int(n) => Some(n),
                    _ => {
                        self.diags.push(
                            Diagnostic::new(
                                Code::TypeMismatch,
                                file,
                                e.span,
                                "a die face must be an integer",
                            )
                            .label("not an integer")
                            .help("write faces as integers: `die deviation = [0, 1, 1, 2, 2, 3]`"),
                        );
                        None
                    }
                })
                .collect(),
            ExprKind::Range { .. } => match self.const_range(file, &d.faces) {
                (Some(lo), Some(hi)) if hi >= lo && hi.saturating_sub(lo) < MAX_FACES as i64 => {
                    (lo..=hi).collect()
                }
                _ => Vec::new(),
            },
            ExprKind::Unknown(note) => {
                // A die the book names but never describes: rolling it needs an assumption.
                self.register_unknown(
                    file,
                    d.faces.span,
                    &format!("{}.faces", d.name.name),
                    note.clone(),
                    false,
                );
                return;
            }
            _ => Vec::new(),
        };
        // Bounded faces keep every sum of a bounded pool inside 64 bits.
        if let Some(f) = faces
            .iter()
            .find(|f| f.unsigned_abs() > MAX_FACE_VALUE as u64)
        {
            self.diags.push(
                Diagnostic::new(Code::LimitTooLarge, file, d.faces.span, format!("a die face is at most {MAX_FACE_VALUE} in size; this one is {f}"))
                    .label("face too large")
                    .help("dice faces are small numbers; scale the value elsewhere (a modifier or a multiplier)"),
            );
            self.program.dice[id as usize].faces = Vec::new();
            return;
        }
        if faces.is_empty() || faces.len() > MAX_FACES as usize {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeBadDie,
                    file,
                    d.faces.span,
                    format!("a die needs 1 to {MAX_FACES} faces"),
                )
                .label(format!("{} faces", faces.len()))
                .help("list the faces, `[1, 2, 3]`, or give a bounded range, `1..=6`"),
            );
        }
        self.program.dice[id as usize].faces = faces;
    }

    /// The die for `dN`, created on first use so every die has one id.
    pub(crate) fn std_die(&mut self, sides: u32) -> ir::DieId {
        let name = format!("d{sides}");
        if let Some(i) = self.program.dice.iter().position(|d| d.name == name) {
            return i as u32;
        }
        self.program.dice.push(ir::DieDef {
            name,
            faces: (1..=i64::from(sides)).collect(),
            cite: ir::Cite::default(),
        });
        (self.program.dice.len() - 1) as u32
    }

    pub(crate) fn params(&mut self, file: FileId, params: &[ast::Param]) -> Vec<ir::Param> {
        let mut out: Vec<ir::Param> = Vec::new();
        for p in params {
            if out.iter().any(|q| q.name == p.name.name) {
                self.diags.push(
                    Diagnostic::new(
                        Code::ResolveDuplicateDefinition,
                        file,
                        p.name.span,
                        format!("parameter `{}` is declared twice", p.name.name),
                    )
                    .label("repeated parameter")
                    .help("rename one of them"),
                );
            }
            let (ty, range) = self.resolve_type(file, &p.ty);
            let default = p
                .default
                .as_ref()
                .map(|d| self.const_value(file, d, &p.name.name, None));
            out.push(ir::Param {
                name: p.name.name.clone(),
                ty,
                range,
                default,
            });
        }
        out
    }

    /// Evaluate a constant: literals, names of entities/sides/enum members/dice, lists,
    /// ranges, `?`. Bare names that resolve to nothing are symbols (labels, outcomes).
    pub(crate) fn const_value(
        &mut self,
        file: FileId,
        e: &ast::Expr,
        path: &str,
        in_table: Option<()>,
    ) -> Value {
        match &e.kind {
            ExprKind::Int(n) => Value::Int(*n),
            ExprKind::Length(n) => Value::Length(*n),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Str(s) => Value::Text(s.as_str().into()),
            ExprKind::Unknown(note) => Value::Unknown(self.register_unknown(
                file,
                e.span,
                path,
                note.clone(),
                in_table.is_some(),
            )),
            ExprKind::Unary {
                op: ast::UnOp::Neg,
                operand,
            } => match self.const_value(file, operand, path, in_table) {
                Value::Int(n) => Value::Int(-n),
                Value::Length(n) => Value::Length(-n),
                v @ Value::Unknown(_) => v,
                _ => self.not_constant(file, e.span),
            },
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Sym::Entity(id)) => Value::Entity(id),
                Some(Sym::Side(id)) => Value::Side(id),
                Some(Sym::Die(id)) => Value::Die(id),
                _ => {
                    if let Some(en) = self.members.get(n).and_then(|v| v.first()).copied() {
                        self.uses.insert(Sym::Enum(en), 1);
                    }
                    Value::Symbol(n.as_str().into())
                }
            },
            ExprKind::Dice { count: 1, sides } if *sides >= 1 && *sides <= MAX_FACES => {
                Value::Die(self.std_die(*sides))
            }
            ExprKind::List(items) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.const_value(file, x, &format!("{path}[{i}]"), in_table))
                    .collect(),
            ),
            ExprKind::Range { lo, hi, .. } if is_label(lo) || is_label(hi) => {
                let label = |b: &Option<Box<ast::Expr>>| match b.as_deref().map(|x| &x.kind) {
                    Some(ExprKind::Name(n)) => Some(n.clone()),
                    _ => None,
                };
                Value::LabelRange(label(lo), label(hi))
            }
            ExprKind::Range { .. } => {
                let (lo, hi) = self.const_range(file, e);
                Value::Range(lo, hi)
            }
            ExprKind::Field { base, field } => match (&base.kind, self.members.get(&field.name)) {
                (ExprKind::Name(_), Some(_)) => Value::Symbol(field.name.as_str().into()),
                _ => self.not_constant(file, e.span),
            },
            _ => self.not_constant(file, e.span),
        }
    }

    fn not_constant(&mut self, file: FileId, span: Span) -> Value {
        self.diags.push(
            Diagnostic::new(Code::TypeNotConstant, file, span, "expected a constant value here")
                .label("computed value")
                .help("stat lines, table cells and defaults hold literals: numbers, lengths, names, lists, ranges or `?`"),
        );
        Value::Symbol("".into())
    }

    /// Inclusive integer bounds of a range literal; letter ranges (`M..=U`) are not numeric
    /// and give `(None, None)`.
    pub(crate) fn const_range(
        &mut self,
        file: FileId,
        e: &ast::Expr,
    ) -> (Option<i64>, Option<i64>) {
        let ExprKind::Range { lo, hi, inclusive } = &e.kind else {
            self.diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    e.span,
                    "expected a range such as `1..=6`",
                )
                .label("not a range")
                .help("ranges are `a..=b`, `a..` or `..=b`"),
            );
            return (None, None);
        };
        let num = |x: &Option<Box<ast::Expr>>| -> Option<i64> {
            match x.as_deref().map(|b| &b.kind) {
                Some(ExprKind::Int(n)) | Some(ExprKind::Length(n)) => Some(*n),
                _ => None,
            }
        };
        let lo_v = num(lo);
        let mut hi_v = num(hi);
        if !inclusive {
            hi_v = hi_v.map(|h| h - 1);
        }
        (lo_v, hi_v)
    }

    /// A range whose upper bound is below its lower one holds no value: a clamp to it would
    /// give its upper bound for every input.
    fn check_not_inverted(
        &mut self,
        file: FileId,
        e: &ast::Expr,
        lo: Option<i64>,
        hi: Option<i64>,
        what: &str,
    ) {
        let (Some(l), Some(h)) = (lo, hi) else {
            return;
        };
        if l <= h {
            return;
        }
        let ExprKind::Range { inclusive, .. } = e.kind else {
            return;
        };
        let text = self
            .db
            .file(file)
            .text
            .get(e.span.start..e.span.end)
            .unwrap_or("");
        let help = match text.split_once(if inclusive { "..=" } else { ".." }) {
            Some((a, b)) if inclusive => {
                format!(
                    "write the smaller bound first: `{}..={}`",
                    b.trim(),
                    a.trim()
                )
            }
            _ => "write the smaller bound first".to_string(),
        };
        self.diags.push(
            Diagnostic::new(
                Code::TypeInvertedRange,
                file,
                e.span,
                format!("this {what} range is inverted: its upper bound is below its lower bound, so no value lies in it"),
            )
            .label("upper bound below lower bound")
            .help(help),
        );
    }

    pub(crate) fn register_unknown(
        &mut self,
        file: FileId,
        span: Span,
        path: &str,
        note: Option<String>,
        in_table: bool,
    ) -> ir::UnknownId {
        let (line, column) = self.line_of(file, span);
        // Names are what users type after `--assume` and `assume` in an assumptions file, so
        // they keep to the characters a name there may hold (letters, digits, `_ . [ ] ,`).
        let mut name = path.to_string();
        let mut i = 2;
        while self.unknown_names.contains(&name) {
            name = format!("{path}_{i}");
            i += 1;
        }
        self.unknown_names.insert(name.clone());
        let id = self.program.unknowns.len() as u32;
        self.program.unknowns.push(ir::UnknownDef {
            name,
            note,
            file: self.db.file(file).name.clone(),
            line,
            column,
            cite: ir::Cite::default(),
            ty: None,
        });
        self.unknown_sites.push((id, file, span, in_table));
        id
    }

    /// Pass 3: bodies and data.
    pub(crate) fn define(&mut self, items: &[Located]) {
        // Data before the mechanics that read it, whatever the order in the files: a
        // resolution's checks need the values of the pieces, tables and stacks it uses.
        for loc in items {
            if let ast::ItemKind::Entity(e) = &loc.item.kind {
                self.define_entity(loc.file, e);
            }
        }
        for loc in items {
            if let ast::ItemKind::Table(t) = &loc.item.kind {
                self.define_table(loc.file, t);
            }
        }
        for loc in items {
            if let ast::ItemKind::Stack(s) = &loc.item.kind {
                self.define_stack(loc.file, loc.section, s);
            }
        }
        for loc in items {
            if let ast::ItemKind::Proc(p) = &loc.item.kind {
                self.define_proc(loc.file, p);
            }
        }
        self.propagate_result_lengths();
        for loc in items {
            if let ast::ItemKind::Config(c) = &loc.item.kind {
                self.define_config(loc.file, loc.section, c, None);
            }
        }
    }

    fn define_entity(&mut self, file: FileId, e: &ast::Entity) {
        let Some(Sym::Entity(id)) = self.own_sym(file, &e.name) else {
            return;
        };
        let kind = e.kind.as_ref().and_then(|k| match self.lookup(&k.name) {
            Some(Sym::Kind(kid)) => Some(kid),
            None if self.broken.contains(&k.name) => None,
            other => {
                let msg = match other {
                    Some(s) => format!("`{}` is a {}, not a kind", k.name, s.describe()),
                    None => format!("unknown kind `{}`", k.name),
                };
                let help = match self.suggest(&k.name, &[]) {
                    Some(s) => format!(
                        "did you mean `{s}`? declare stat lines with `kind NAME {{ field: type }}`"
                    ),
                    None => "declare the stat line first: `kind NAME { field: type }`".into(),
                };
                self.diags.push(
                    Diagnostic::new(Code::ResolveUnknownName, file, k.span, msg)
                        .label("not a kind")
                        .help(help),
                );
                None
            }
        });
        let side = e.side.as_ref().and_then(|s| self.side(file, s));
        let mut given: HashMap<String, (Value, Span)> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        for fi in &e.fields {
            let path = format!("{}.{}", e.name.name, fi.name.name);
            let v = self.const_value(file, &fi.value, &path, None);
            if given.contains_key(&fi.name.name) {
                self.diags.push(
                    Diagnostic::new(
                        Code::ResolveDuplicateDefinition,
                        file,
                        fi.name.span,
                        format!("field `{}` is given twice", fi.name.name),
                    )
                    .label("repeated field")
                    .help("keep one value"),
                );
                continue;
            }
            order.push(fi.name.name.clone());
            given.insert(fi.name.name.clone(), (v, fi.value.span));
        }
        let mut fields = Vec::new();
        if let Some(kid) = kind {
            let kdef = self.program.kinds[kid as usize].clone();
            for fd in &kdef.fields {
                match given.remove(&fd.name) {
                    Some((v, span)) => {
                        self.check_value_type(file, span, &v, &fd.ty, &fd.name);
                        if let Value::Unknown(u) = v
                            && !matches!(fd.ty, Type::Any)
                        {
                            self.program.unknowns[u as usize].ty = Some(fd.ty.clone());
                        }
                        fields.push((fd.name.clone(), v));
                    }
                    None => match &fd.default {
                        Some(d) => fields.push((fd.name.clone(), d.clone())),
                        None => {
                            self.diags.push(
                                Diagnostic::new(
                                    Code::ResolveMissingField,
                                    file,
                                    e.name.span,
                                    format!(
                                        "`{}` does not give field `{}` of kind `{}`",
                                        e.name.name, fd.name, kdef.name
                                    ),
                                )
                                .label("missing field")
                                .help(format!(
                                    "add `{}: VALUE`, or `{}: ?` if the book does not give it",
                                    fd.name, fd.name
                                )),
                            );
                        }
                    },
                }
            }
            for name in order {
                if let Some((_, span)) = given.remove(&name) {
                    let fd: Vec<&str> = kdef.fields.iter().map(|f| f.name.as_str()).collect();
                    self.diags.push(
                        Diagnostic::new(
                            Code::ResolveUnknownField,
                            file,
                            e.fields
                                .iter()
                                .find(|f| f.name.name == name)
                                .map_or(span, |f| f.name.span),
                            format!("kind `{}` has no field `{}`", kdef.name, name),
                        )
                        .label("unknown field")
                        .help(format!(
                            "fields of `{}`: {}",
                            kdef.name,
                            fd.join(", ")
                        )),
                    );
                }
            }
        } else {
            for name in order {
                if let Some((v, _)) = given.remove(&name) {
                    fields.push((name, v));
                }
            }
        }
        let ent = &mut self.program.entities[id as usize];
        ent.kind = kind;
        ent.side = side;
        ent.fields = fields;
    }

    pub(crate) fn check_value_type(
        &mut self,
        file: FileId,
        span: Span,
        v: &Value,
        ty: &Type,
        what: &str,
    ) {
        let ok = match (v, ty) {
            (Value::Unknown(_), _) | (_, Type::Any) => true,
            (Value::Int(_), Type::Int) => true,
            (Value::Length(_), Type::Length) => true,
            (Value::Int(0), Type::Length) => true,
            (Value::Bool(_), Type::Bool) => true,
            (Value::Text(_), Type::Text) => true,
            (Value::Side(_), Type::Side) => true,
            (Value::Die(_), Type::Die) => true,
            (Value::Entity(e), Type::Entity(k)) => {
                k.is_none() || self.program.entities[*e as usize].kind == *k
            }
            (Value::Symbol(s), Type::Enum(en)) => self.program.enums[*en as usize]
                .members
                .iter()
                .any(|m| **m == **s),
            (Value::List(_), Type::List(_)) => true,
            (Value::Range(..) | Value::LabelRange(..), Type::Range) => true,
            _ => false,
        };
        if !ok && let Type::Enum(en) = ty {
            // `ground: woods` where `woods` is both a member of `ground` and a terrain: the
            // definition hides the member, and the qualified form reaches it.
            let shadow = match v {
                Value::Entity(e) => Some(self.program.entities[*e as usize].name.clone()),
                Value::Side(s) => Some(self.program.sides[*s as usize].name.clone()),
                Value::Die(d) => Some(self.program.dice[*d as usize].name.clone()),
                _ => None,
            };
            let enum_def = &self.program.enums[*en as usize];
            if let Some(name) = shadow
                && enum_def.members.contains(&name)
            {
                let enum_name = enum_def.name.clone();
                let def_kind = self
                    .globals
                    .get(&name)
                    .map(|d| self.describe_def(d.sym))
                    .unwrap_or_else(|| "a definition".into());
                let mut d = Diagnostic::new(
                    Code::ResolveShadowedMember,
                    file,
                    span,
                    format!(
                        "`{name}` here is {def_kind}, which hides the member `{name}` of enum `{enum_name}` that `{what}` expects"
                    ),
                )
                .label(format!("{def_kind} `{name}`"))
                .help(format!(
                    "write `{enum_name}.{name}` for the enum member, or rename the {} `{name}`",
                    def_kind.split_once(' ').map_or(def_kind.as_str(), |(_, w)| w)
                ));
                if let Some(def) = self.globals.get(&name) {
                    d = d.related(
                        def.file,
                        def.span,
                        format!("{def_kind} `{name}` defined here"),
                    );
                }
                self.diags.push(d);
                return;
            }
        }
        if !ok {
            let expected = self.type_name(ty);
            self.diags.push(
                Diagnostic::new(
                    Code::TypeMismatch,
                    file,
                    span,
                    format!("`{what}` expects {expected}, found {}", self.value_name(v)),
                )
                .label(format!("expected {expected}"))
                .help(match ty {
                    Type::Length => "lengths carry a unit: `6in`, `10cm`, `5mm`".to_string(),
                    Type::Enum(en) => format!(
                        "members of `{}`: {}",
                        self.program.enums[*en as usize].name,
                        self.program.enums[*en as usize].members.join(", ")
                    ),
                    _ => format!("give {expected}, or `?` if the book does not say"),
                }),
            );
        }
    }

    pub(crate) fn type_name(&self, ty: &Type) -> String {
        match ty {
            Type::Int => "an integer".into(),
            Type::Length => "a length".into(),
            Type::Bool => "true or false".into(),
            Type::Text => "text".into(),
            Type::Die => "a die".into(),
            Type::Side => "a side".into(),
            Type::Enum(e) => format!("a `{}`", self.program.enums[*e as usize].name),
            Type::Entity(Some(k)) => format!("a `{}`", self.program.kinds[*k as usize].name),
            Type::Entity(None) => "a piece".into(),
            Type::Pool => "a dice pool".into(),
            Type::Symbol => "a name".into(),
            Type::List(_) => "a list".into(),
            Type::Range => "a range".into(),
            Type::Any => "anything".into(),
        }
    }

    fn value_name(&self, v: &Value) -> String {
        match v {
            Value::Int(n) => format!("the integer {n}"),
            Value::Length(_) => "a length".into(),
            Value::Bool(b) => format!("`{b}`"),
            Value::Text(_) => "text".into(),
            Value::Symbol(s) => format!("`{s}`"),
            Value::Counter(c) => format!("the counter `{}`", self.program.counter_name(*c)),
            Value::Hex(h) => format!("hex `{h}`"),
            Value::Kind(k) => format!("kind `{}`", self.program.kinds[*k as usize].name),
            Value::Side(s) => format!("side `{}`", self.program.sides[*s as usize].name),
            Value::Entity(e) => format!("`{}`", self.program.entities[*e as usize].name),
            Value::Die(_) => "a die".into(),
            Value::Unknown(_) => "`?`".into(),
            Value::List(_) => "a list".into(),
            Value::Range(..) | Value::LabelRange(..) => "a range".into(),
        }
    }

    fn define_stack(&mut self, file: FileId, section: Option<ir::SectionId>, s: &ast::Stack) {
        let id = match self.own_sym(file, &s.name) {
            Some(Sym::Stack(id)) => id,
            _ => return,
        };
        let params = self.program.stacks[id as usize].params.clone();
        let mut scope = Scope::new(&params);
        let mut entries = Vec::new();
        let mut seen_labels: HashMap<String, Span> = HashMap::new();
        let mut seen_conds: HashMap<String, Span> = HashMap::new();
        for (i, en) in s.entries.iter().enumerate() {
            let path = format!("{}.{}", s.name.name, slug(&en.label.value, i));
            let value = self
                .lower_expr(file, &mut scope, &en.value, &path)
                .expect_numeric(self, file, en.value.span);
            let per = en.per.as_ref().map(|p| {
                let t = self.lower_expr(file, &mut scope, p, &path);
                t.expect_numeric(self, file, p.span)
            });
            let when = en.when.as_ref().map(|w| {
                let t = self.lower_expr(file, &mut scope, w, &path);
                t.expect_bool(self, file, w.span)
            });
            if let Some(prev) = seen_labels.insert(en.label.value.to_lowercase(), en.label.span) {
                self.diags.push(
                    Diagnostic::new(
                        Code::LintDuplicateModifier,
                        file,
                        en.label.span,
                        format!("modifier \"{}\" appears twice in stack `{}`", en.label.value, s.name.name),
                    )
                    .label("repeated modifier")
                    .related(file, prev, "first listed here")
                    .help("if the book lists it twice, keep one and note it; otherwise give each a distinct label"),
                );
            }
            if let Some(w) = &en.when {
                let key = self.db.file(file).text[w.span.start..w.span.end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                if let Some(prev) = seen_conds.insert(key.clone(), w.span) {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LintDuplicateModifier,
                            file,
                            w.span,
                            format!(
                                "two modifiers of `{}` apply under the same condition `{key}`",
                                s.name.name
                            ),
                        )
                        .label("same condition")
                        .related(file, prev, "also used here")
                        .help("merge them into one entry, or make the conditions differ"),
                    );
                }
            }
            entries.push((
                ir::StackEntry {
                    label: en.label.value.clone(),
                    value,
                    per,
                    when,
                    cite: self.cite(section, &en.see),
                },
                en.span,
            ));
        }
        let n_slots = scope.n_slots();
        let st = &mut self.program.stacks[id as usize];
        st.entries = entries.iter().map(|(e, _)| e.clone()).collect();
        st.n_slots = n_slots;
        crate::lints::stack_entries(self, file, id, &entries);
    }

    fn define_table(&mut self, file: FileId, t: &ast::Table) {
        let id = match self.own_sym(file, &t.name) {
            Some(Sym::Table(id)) => id,
            _ => return,
        };
        let columns: Vec<Value> = t
            .columns
            .as_ref()
            .map(|(cols, _)| {
                cols.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        self.const_value(
                            file,
                            c,
                            &format!("{}.column{}", t.name.name, i + 1),
                            Some(()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if t.keys.len() == 2 && t.columns.is_none() {
            self.diags.push(
                Diagnostic::new(
                    Code::TableMissingColumns,
                    file,
                    t.name.span,
                    format!("table `{}` has two keys but no `columns` line", t.name.name),
                )
                .label("two-key table")
                .help("list the column labels first: `columns monitor, pbr, acv`"),
            );
        }
        // With a `columns` line every row holds one cell per column, whatever the number of keys.
        let width = if t.columns.is_some() {
            columns.len().max(1)
        } else {
            1
        };
        for k in &t.keys {
            if let Some(ast::TypeExpr::Named(n)) = &k.domain {
                match self.lookup(&n.name) {
                    Some(Sym::Enum(_) | Sym::Die(_) | Sym::Kind(_)) => {}
                    _ if matches!(n.name.as_str(), "int" | "text" | "bool" | "side") => {}
                    other => {
                        let what = other.map_or("nothing defined".to_string(), |s| {
                            format!("a {}", s.describe())
                        });
                        self.diags.push(
                            Diagnostic::new(
                                Code::ResolveUnknownType,
                                file,
                                n.span,
                                format!("table key `{}` ranges over `{}`, which is {what}", k.name.name, n.name),
                            )
                            .label("not a key domain")
                            .help("a key ranges over a die (`roll: d6`), an int range (`1..=6`), an enum, or is left bare for labels"),
                        );
                    }
                }
            }
        }
        for v in &columns {
            if let Value::Symbol(sym) = v {
                self.table_symbols.insert(sym.to_string());
            }
        }
        let mut rows = Vec::new();
        let mut seen: Vec<(String, Span)> = Vec::new();
        for (ri, row) in t.rows.iter().enumerate() {
            let keys: Vec<ir::KeyPattern> =
                row.keys.iter().map(|p| self.key_pattern(file, p)).collect();
            let row_label =
                self.db.file(file).text[row.keys.first().map_or(row.span, |k| k.span).start
                    ..row.keys.last().map_or(row.span, |k| k.span).end]
                    .to_string();
            if let Some((_, prev)) = seen.iter().find(|(l, _)| *l == row_label) {
                self.diags.push(
                    Diagnostic::new(
                        Code::TableDuplicateKey,
                        file,
                        row.keys.first().map_or(row.span, |k| k.span),
                        format!("row `{row_label}` appears twice in table `{}`", t.name.name),
                    )
                    .label("repeated row key")
                    .related(file, *prev, "first row with this key")
                    .help("each row key may appear once; merge the rows"),
                );
            }
            seen.push((
                row_label.clone(),
                row.keys.first().map_or(row.span, |k| k.span),
            ));
            let cells: Vec<Value> = row
                .cells
                .iter()
                .enumerate()
                .map(|(ci, c)| {
                    let col = if t.keys.len() == 2 {
                        format!(",{}", ci + 1)
                    } else {
                        String::new()
                    };
                    self.const_value(
                        file,
                        c,
                        &format!("{}[{}{}]", t.name.name, slug(&row_label, ri), col),
                        Some(()),
                    )
                })
                .collect();
            if cells.len() != width && !(t.keys.len() == 2 && t.columns.is_none()) {
                self.diags.push(
                    Diagnostic::new(
                        Code::TableRowWidth,
                        file,
                        row.span,
                        format!(
                            "row `{row_label}` has {} cells; table `{}` has {} columns",
                            cells.len(),
                            t.name.name,
                            width
                        ),
                    )
                    .label(format!("{} cells", cells.len()))
                    .help("give one cell per column; write `?` for a cell the book leaves empty"),
                );
            }
            for k in &keys {
                if let ir::KeyPattern::Symbol(sym) = k {
                    self.table_symbols.insert(sym.clone());
                }
            }
            for c in &cells {
                if let Value::Symbol(sym) = c {
                    self.table_symbols.insert(sym.to_string());
                }
            }
            rows.push(ir::TableRow { keys, cells });
        }
        self.check_cell_types(file, t, &rows);
        let tb = &mut self.program.tables[id as usize];
        tb.columns = columns;
        tb.rows = rows;
        crate::lints::table(self, file, id, t);
    }

    /// A lookup has one type, so a column's cells are all numbers, all lengths or all names
    /// (`?` and `-` aside): a name in a number column would pass `check` and fail only when
    /// the game reaches that cell. Columns may differ (a record per row).
    fn check_cell_types(&mut self, file: FileId, t: &ast::Table, rows: &[ir::TableRow]) {
        let class = |v: &Value| match v {
            Value::Int(_) => Some(("a number", "numbers")),
            Value::Length(_) => Some(("a length", "lengths")),
            Value::Symbol(s) if &**s == ir::NOT_APPLICABLE => None,
            Value::Symbol(_) | Value::Entity(_) | Value::Side(_) | Value::Die(_) => {
                Some(("a name", "names"))
            }
            Value::Bool(_) => Some(("true/false", "true/false values")),
            Value::Text(_) => Some(("a text", "texts")),
            _ => None,
        };
        let width = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
        for col in 0..width {
            self.check_column(file, t, rows, col, &class);
        }
    }

    fn check_column(
        &mut self,
        file: FileId,
        t: &ast::Table,
        rows: &[ir::TableRow],
        col: usize,
        class: &dyn Fn(&Value) -> Option<(&'static str, &'static str)>,
    ) {
        let mut first: Option<((&str, &str), Span)> = None;
        for (row, ar) in rows.iter().zip(&t.rows) {
            if let (Some(c), Some(ac)) = (row.cells.get(col), ar.cells.get(col)) {
                let Some(k) = class(c) else {
                    continue;
                };
                match first {
                    None => first = Some((k, ac.span)),
                    Some((k0, s0)) if k0 != k => {
                        let ((k0, k0s), (k, _)) = (k0, k);
                        let text = &self.db.file(file).text[ac.span.start..ac.span.end];
                        self.diags.push(
                            Diagnostic::new(
                                Code::TableMixedCells,
                                file,
                                ac.span,
                                if width_of(t) > 1 {
                                    format!(
                                        "column {} of table `{}` holds {k0s}, but this cell is {k}",
                                        col + 1,
                                        t.name.name
                                    )
                                } else {
                                    format!(
                                        "table `{}` holds {k0s}, but this cell is {k}",
                                        t.name.name
                                    )
                                },
                            )
                            .label(format!("`{text}` is {k}"))
                            .related(file, s0, format!("the first cell is {k0}"))
                            .help(if k0 == "a number" || k == "a number" {
                                format!(
                                    "a lookup gives one type of value; for a cell that does not apply write `-` and test it with `applicable({}[…])`",
                                    t.name.name
                                )
                            } else {
                                "a lookup gives one type of value: split the table, or write every cell the same way".to_string()
                            }),
                        );
                        return;
                    }
                    Some(_) => {}
                }
            }
        }
    }

    pub(crate) fn key_pattern(&mut self, file: FileId, p: &ast::Pattern) -> ir::KeyPattern {
        match &p.kind {
            ast::PatternKind::Wildcard => ir::KeyPattern::Any,
            ast::PatternKind::Unknown(_) => ir::KeyPattern::Unknown,
            ast::PatternKind::Range(r) => {
                let (lo, hi) = self.const_range(file, r);
                ir::KeyPattern::Range(lo, hi)
            }
            ast::PatternKind::Value(v) => match &v.kind {
                ExprKind::Int(n) | ExprKind::Length(n) => ir::KeyPattern::Range(Some(*n), Some(*n)),
                ExprKind::Name(n) => ir::KeyPattern::Symbol(n.clone()),
                ExprKind::Bool(b) => ir::KeyPattern::Symbol(b.to_string()),
                ExprKind::Str(s) => ir::KeyPattern::Symbol(s.clone()),
                _ => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::TypeBadPattern,
                            file,
                            p.span,
                            "a pattern is a number, a range, a name or `_`",
                        )
                        .label("not a pattern")
                        .help("patterns are `n`, `a..=b`, `a..`, `..=b`, `n+`, a name, or `_`"),
                    );
                    ir::KeyPattern::Any
                }
            },
        }
    }

    /// A procedure whose every result is a length, or a call of a procedure whose results are
    /// lengths (`result reach()`), has a length for its result too: its outcomes are shown in
    /// the ruleset's unit. Calls may name procedures lowered later, so this runs to a fixpoint.
    fn propagate_result_lengths(&mut self) {
        let results = std::mem::take(&mut self.proc_results);
        loop {
            let mut changed = false;
            for (id, rs) in &results {
                let procs = &self.program.procs;
                if procs[*id as usize].result_length || rs.is_empty() {
                    continue;
                }
                let length = rs.iter().all(|(t, call)| {
                    *t == Type::Length
                        || call
                            .is_some_and(|c| procs.get(c as usize).is_some_and(|p| p.result_length))
                });
                if length {
                    self.program.procs[*id as usize].result_length = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn define_proc(&mut self, file: FileId, p: &ast::Proc) {
        let id = match self.own_sym(file, &p.name) {
            Some(Sym::Proc(id)) => id,
            _ => return,
        };
        let params = self.program.procs[id as usize].params.clone();
        let mut scope = Scope::new(&params);
        self.stmt_lines.clear();
        self.result_types.clear();
        let body = self.lower_body(file, &mut scope, &p.body, &p.name.name);
        let pr = &mut self.program.procs[id as usize];
        pr.body = body;
        pr.result_length = !self.result_types.is_empty()
            && self.result_types.iter().all(|(t, _)| *t == Type::Length);
        self.proc_results
            .push((id, std::mem::take(&mut self.result_types)));
        pr.n_slots = scope.n_slots();
        pr.slot_names = scope.slot_names();
        pr.slot_types = scope.slot_types();
        self.place_proc(id, file, p.name.span);
        crate::lints::same_outcome(self, file, id, p.name.span);
        crate::lints::joint_requires(self, file, id, &p.body);
    }
}

/// Cells per row of a table as written (its widest row).
fn width_of(t: &ast::Table) -> usize {
    t.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0)
}

fn is_label(b: &Option<Box<ast::Expr>>) -> bool {
    matches!(b.as_deref().map(|x| &x.kind), Some(ExprKind::Name(_)))
}

/// A short, stable identifier made from a label, for unknown names.
pub(crate) fn slug(label: &str, index: usize) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let s = s
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() {
        format!("entry{}", index + 1)
    } else {
        s
    }
}
