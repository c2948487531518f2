//! AST → IR. Three passes over every file of a ruleset:
//! 1. `collect`: walk sections and register every definition (with the section it sits in);
//! 2. declarations: sides, enums, kinds, dice, entities, signatures of stacks/tables/procs;
//! 3. bodies: expressions and statements, resolved and type-checked, then configs.
//!
//! Errors never stop a pass: a bad expression lowers to `?`-typed `Any` so later checks go on
//! and every problem in the file is reported.

mod activation;
mod calls;
mod config;
mod deploy;
pub(crate) mod expr;
mod items;
mod playable;
mod policy;
mod room;
mod scenario;
mod stmt;
mod turn;
mod typed;

use std::collections::HashMap;

use sandtable_grammar::ast::{self, Span};

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Cite, Program, SectionId};
use crate::source::{FileId, SourceDb};

pub(crate) use expr::Scope;

/// What a global name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sym {
    Side(ir::SideId),
    Enum(ir::EnumId),
    Kind(ir::KindId),
    Entity(ir::EntityId),
    Die(ir::DieId),
    Stack(ir::StackId),
    Table(ir::TableId),
    Proc(ir::ProcId),
    /// A named config block (board, scenario, activation…): its index in `program.configs`.
    Config(u32),
}

impl Sym {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Sym::Side(_) => "side",
            Sym::Enum(_) => "enum",
            Sym::Kind(_) => "kind",
            Sym::Entity(_) => "entity",
            Sym::Die(_) => "die",
            Sym::Stack(_) => "modifier stack",
            Sym::Table(_) => "table",
            Sym::Proc(_) => "procedure",
            Sym::Config(_) => "block",
        }
    }
}

/// One definition site, for duplicate and unused checks.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    pub sym: Sym,
    pub file: FileId,
    pub span: Span,
}

/// An item with the context it was found in.
pub(crate) struct Located<'a> {
    pub file: FileId,
    pub section: Option<SectionId>,
    pub item: &'a ast::Item,
}

/// A `result`'s type, and the procedure it calls when it is exactly a call.
pub(crate) type ResultOf = (ir::Type, Option<ir::ProcId>);

pub(crate) struct Lowerer<'a> {
    pub db: &'a SourceDb,
    pub program: Program,
    pub diags: Vec<Diagnostic>,
    pub globals: HashMap<String, Def>,
    /// Enum member name → enums that declare it.
    pub members: HashMap<String, Vec<ir::EnumId>>,
    /// How often each global was referenced (for `unused`).
    pub uses: HashMap<Sym, u32>,
    /// Where each section was declared (same index as `program.sections`).
    pub section_sites: Vec<(FileId, Span)>,
    /// Every `see` reference with the file and section it sits in.
    pub refs: Vec<(FileId, ast::Ref)>,
    /// Spans of definitions whose unknowns are table cells (summarised, not listed one by one).
    pub unknown_sites: Vec<(ir::UnknownId, FileId, Span, bool)>,
    /// Labels that tables use as row keys, column labels or cells: valid symbols anywhere.
    pub table_symbols: std::collections::HashSet<String>,
    /// Names given to unknowns so far, so each gets a distinct one.
    pub unknown_names: std::collections::HashSet<String>,
    /// Names whose definitions had syntax errors: the parse error explains them, so uses of
    /// them are not reported again as unknown.
    pub broken: std::collections::HashSet<String>,
    /// Each definition site (file, start of its name) → what it defines, duplicates
    /// included, so a second definition's body is checked against its own signature.
    pub sites: HashMap<(FileId, usize), Sym>,
    /// What `distance` gives: hexes when every board is a grid, a length when every board is
    /// a table, unknown (`Any`) when the ruleset has both or none.
    pub distance_ty: ir::Type,
    /// Lines of the statements lowered so far in the current procedure.
    pub stmt_lines: Vec<u32>,
    /// The type of each `result` (and band value) of the procedure being lowered, and the
    /// procedure it calls when it is a call (whose type is known only once every procedure is
    /// lowered).
    pub result_types: Vec<ResultOf>,
    /// Per procedure, its `result_types`, for [`Lowerer::propagate_result_lengths`].
    pub proc_results: Vec<(ir::ProcId, Vec<ResultOf>)>,
    /// In the current procedure: tables with `-` cells tested with `applicable`, lookups of
    /// such tables outside a test, and whether an `applicable(…)` is being lowered.
    pub na_tested: Vec<ir::TableId>,
    pub na_lookups: Vec<(ir::TableId, FileId, Span)>,
    pub in_applicable: bool,
    /// Lowering a procedure's or hook's body: on a ruleset whose boards are all grids, a
    /// name that reads as a hex label there is the hex it names (a constant the engine need
    /// not parse), not a symbol. Property values keep their labels as written: the typed
    /// scenarios read them.
    pub in_body: bool,
    /// The hex labels read in bodies, where, for [`Lowerer::check_rule_labels`].
    pub rule_labels: Vec<(ir::scenario::HexLabel, FileId, Span)>,
}

/// Compile parsed files into one program. `files` are the parsed ASTs, by file id.
/// `partial` says some file had syntax errors: its items may sit outside their sections, so
/// the numbering and unused lints would only add noise and are skipped.
pub fn lower(
    db: &SourceDb,
    files: &[(FileId, ast::File)],
    partial: bool,
) -> (Program, Vec<Diagnostic>) {
    let mut lw = Lowerer {
        db,
        program: Program {
            ir_version: ir::IR_VERSION,
            ..Program::default()
        },
        diags: Vec::new(),
        globals: HashMap::new(),
        members: HashMap::new(),
        uses: HashMap::new(),
        section_sites: Vec::new(),
        refs: Vec::new(),
        unknown_sites: Vec::new(),
        table_symbols: std::collections::HashSet::new(),
        unknown_names: std::collections::HashSet::new(),
        broken: files
            .iter()
            .flat_map(|(_, f)| f.broken.iter().map(|b| b.name.clone()))
            .collect(),
        sites: HashMap::new(),
        distance_ty: ir::Type::Any,
        stmt_lines: Vec::new(),
        result_types: Vec::new(),
        proc_results: Vec::new(),
        na_tested: Vec::new(),
        na_lookups: Vec::new(),
        in_applicable: false,
        in_body: false,
        rule_labels: Vec::new(),
    };
    let mut located = Vec::new();
    for (file, ast) in files {
        lw.collect(*file, None, &ast.items, &mut located);
    }
    lw.program.length_unit = length_unit(files.iter().map(|(f, _)| db.file(*f).text.as_ref()));
    lw.distance_ty = distance_type(&located);
    lw.declare(&located);
    lw.define(&located);
    lw.define_policies(&located);
    lw.check_scenarios(&located);
    lw.lower_typed_scenarios(&located);
    lw.lower_typed_turn();
    lw.check_rule_labels();
    lw.check_recursion();
    if partial {
        lw.refs.clear();
    } else {
        crate::numbering::check(&mut lw);
    }
    lw.lint_unknowns();
    if !partial {
        lw.lint_unused();
    }
    (lw.program, lw.diags)
}

/// The unit most of the ruleset's length literals are written in (`in` or `cm`; `mm` only
/// when nothing else is used), from the source text outside comments and strings.
fn length_unit<'t>(texts: impl Iterator<Item = &'t str>) -> Option<String> {
    let mut counts = [0usize; 3];
    for text in texts {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                        i += 1;
                    }
                    i += 2;
                }
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                c if c.is_ascii_digit() && (i == 0 || !is_ident_byte(b[i - 1])) => {
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    let rest = &b[i..];
                    for (k, (u, _)) in ir::LENGTH_UNITS.iter().enumerate() {
                        if rest.starts_with(u.as_bytes())
                            && !rest.get(2).is_some_and(|c| is_ident_byte(*c))
                        {
                            counts[k] += 1;
                        }
                    }
                }
                c if is_ident_byte(c) => {
                    while i < b.len() && is_ident_byte(b[i]) {
                        i += 1;
                    }
                }
                _ => i += 1,
            }
        }
    }
    let (inch, cm, mm) = (counts[0], counts[1], counts[2]);
    match (inch, cm, mm) {
        (0, 0, 0) => None,
        (0, 0, _) => Some("mm"),
        _ if inch >= cm => Some("in"),
        _ => Some("cm"),
    }
    .map(String::from)
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The type of `distance` given the ruleset's boards.
fn distance_type(items: &[Located]) -> ir::Type {
    let (mut grid, mut table) = (false, false);
    for loc in items {
        if let ast::ItemKind::Config(c) = &loc.item.kind
            && c.keyword.name == "board"
        {
            match c.scheme.as_ref().map(|s| s.name.as_str()) {
                Some("hex" | "square") => grid = true,
                Some("open" | "sectors") => table = true,
                _ => {}
            }
        }
    }
    match (grid, table) {
        (true, false) => ir::Type::Int,
        (false, true) => ir::Type::Length,
        _ => ir::Type::Any,
    }
}

impl<'a> Lowerer<'a> {
    /// Record where procedure `id` is and the lines of its statements, lowered since the
    /// last call to `stmt_lines.clear()`.
    /// Warn about lookups of tables with `-` cells that the procedure never tests with
    /// `applicable`: reaching such a cell would stop the game with an error.
    pub(crate) fn lint_not_applicable(&mut self) {
        let tested = std::mem::take(&mut self.na_tested);
        for (t, file, span) in std::mem::take(&mut self.na_lookups) {
            if tested.contains(&t) {
                continue;
            }
            let name = self.program.tables[t as usize].name.clone();
            let text = self.db.file(file).text[span.start..span.end].to_string();
            self.diags.push(
                Diagnostic::new(
                    Code::LintUncheckedNotApplicable,
                    file,
                    span,
                    format!("table `{name}` has `-` cells, and nothing here tests for them"),
                )
                .label("may be `-`")
                .help(format!(
                    "test the cell first: `require applicable({text})`, or `if applicable({text}) {{ … }}`"
                )),
            );
        }
    }

    /// Adds a hook procedure (a config block's `on` or `victory` body, an activation's
    /// condition) and places it at `span`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_hook(
        &mut self,
        name: String,
        params: Vec<ir::Param>,
        body: Vec<ir::Stmt>,
        scope: &Scope,
        cite: ir::Cite,
        file: FileId,
        span: Span,
    ) -> u32 {
        let id = self.program.procs.len() as u32;
        self.program.procs.push(ir::ProcDef {
            name,
            kind: ir::ProcKind::Hook,
            params,
            body,
            n_slots: scope.n_slots(),
            slot_names: scope.slot_names(),
            slot_types: scope.slot_types(),
            file: String::new(),
            line: 0,
            lines: Vec::new(),
            result_length: false,
            cite,
        });
        self.place_proc(id, file, span);
        id
    }

    pub(crate) fn place_proc(&mut self, id: u32, file: FileId, span: Span) {
        self.lint_not_applicable();
        let (line, _) = self.line_of(file, span);
        let lines = std::mem::take(&mut self.stmt_lines);
        let name = self.db.file(file).name.clone();
        let pr = &mut self.program.procs[id as usize];
        pr.file = name;
        pr.line = line;
        // Every statement records one line; if some were dropped the table would misname
        // lines, so it is left empty and errors name the procedure's line instead.
        pr.lines = if ir::stmts_post_order(&pr.body).len() == lines.len() {
            lines
        } else {
            Vec::new()
        };
    }

    pub(crate) fn cite(&self, section: Option<SectionId>, see: &[ast::Ref]) -> Cite {
        Cite {
            section,
            refs: see.iter().map(|r| r.text.clone()).collect(),
        }
    }

    pub(crate) fn line_of(&self, file: FileId, span: Span) -> (u32, u32) {
        self.db.file(file).line_col(span.start)
    }

    /// Walk sections, numbering them and flattening the items inside.
    fn collect<'b>(
        &mut self,
        file: FileId,
        parent: Option<SectionId>,
        items: &'b [ast::Item],
        out: &mut Vec<Located<'b>>,
    ) {
        for item in items {
            match &item.kind {
                ast::ItemKind::Section(s) => {
                    let mut path = parent
                        .map(|p| self.program.sections[p as usize].path.clone())
                        .unwrap_or_default();
                    if let Some(n) = &s.number {
                        path.push(n.name.clone());
                    }
                    let (line, _) = self.line_of(file, s.head);
                    let id = self.program.sections.len() as SectionId;
                    self.program.sections.push(ir::SectionInfo {
                        path,
                        title: s.title.as_ref().map(|t| t.value.clone()),
                        parent,
                        file: self.db.file(file).name.clone(),
                        line,
                    });
                    self.section_sites.push((file, s.head));
                    for r in &s.see {
                        self.refs.push((file, r.clone()));
                    }
                    if let Some(body) = &s.body {
                        self.collect(file, Some(id), body, out);
                    }
                }
                ast::ItemKind::See(refs) => {
                    for r in refs {
                        self.refs.push((file, r.clone()));
                    }
                }
                _ => out.push(Located {
                    file,
                    section: parent,
                    item,
                }),
            }
        }
    }

    pub(crate) fn define_global(&mut self, name: &ast::Ident, file: FileId, sym: Sym) {
        self.sites.insert((file, name.span.start), sym);
        if let Some(prev) = self.globals.get(&name.name) {
            let prev = prev.clone();
            self.diags.push(
                Diagnostic::new(
                    Code::ResolveDuplicateDefinition,
                    file,
                    name.span,
                    format!(
                        "`{}` is defined twice ({} and {})",
                        name.name,
                        self.describe_def(prev.sym),
                        self.describe_def(sym)
                    ),
                )
                .label(format!("{} defined here again", self.describe_def(sym)))
                .related(
                    prev.file,
                    prev.span,
                    format!("{} first defined here", self.describe_def(prev.sym)),
                )
                .help("rename one of them; all files of a ruleset share one namespace"),
            );
            return;
        }
        self.globals.insert(
            name.name.clone(),
            Def {
                sym,
                file,
                span: name.span,
            },
        );
    }

    /// What a definition is, with its article: "an action", "a resolution", "a table".
    pub(crate) fn describe_def(&self, sym: Sym) -> String {
        let what = match sym {
            Sym::Proc(id) => match self.program.procs.get(id as usize).map(|p| p.kind) {
                Some(ir::ProcKind::Action) => "action",
                Some(ir::ProcKind::Resolve) => "resolution",
                _ => "procedure",
            },
            Sym::Entity(id) => match self.program.entities.get(id as usize).map(|e| e.category) {
                Some(ir::Category::Unit) => "unit",
                Some(ir::Category::Weapon) => "weapon",
                Some(ir::Category::Terrain) => "terrain",
                Some(ir::Category::Marker) => "marker",
                None => "entity",
            },
            other => other.describe(),
        };
        let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {what}")
    }

    /// The symbol a definition site itself declared (for a duplicate, not the first one).
    pub(crate) fn own_sym(&self, file: FileId, name: &ast::Ident) -> Option<Sym> {
        self.sites.get(&(file, name.span.start)).copied()
    }

    pub(crate) fn lookup(&mut self, name: &str) -> Option<Sym> {
        let sym = self.globals.get(name)?.sym;
        *self.uses.entry(sym).or_default() += 1;
        Some(sym)
    }

    /// Names close to `name`, for "did you mean" help.
    pub(crate) fn suggest(&self, name: &str, locals: &[String]) -> Option<String> {
        let candidates = self
            .globals
            .keys()
            .map(String::as_str)
            .chain(self.members.keys().map(String::as_str))
            .chain(locals.iter().map(String::as_str));
        closest(name, candidates).map(str::to_string)
    }

    /// Every program must end: a procedure may not call itself, directly or through others.
    fn check_recursion(&mut self) {
        let n = self.program.procs.len();
        let edges: Vec<Vec<u32>> = self
            .program
            .procs
            .iter()
            .map(ir::ProcDef::callees)
            .collect();
        // A procedure is recursive when it can reach itself.
        for start in 0..n {
            let mut seen = vec![false; n];
            let mut stack: Vec<(u32, Vec<u32>)> = edges[start]
                .iter()
                .map(|c| (*c, vec![start as u32, *c]))
                .collect();
            let mut cycle = None;
            while let Some((p, path)) = stack.pop() {
                if p as usize == start {
                    cycle = Some(path);
                    break;
                }
                if std::mem::replace(&mut seen[p as usize], true) {
                    continue;
                }
                for c in &edges[p as usize] {
                    let mut next = path.clone();
                    next.push(*c);
                    stack.push((*c, next));
                }
            }
            let Some(path) = cycle else { continue };
            let name = self.program.procs[start].name.clone();
            let Some(def) = self.globals.get(&name).cloned() else {
                continue;
            };
            let chain: Vec<&str> = path
                .iter()
                .map(|p| self.program.procs[*p as usize].name.as_str())
                .collect();
            self.diags.push(
                Diagnostic::new(Code::TypeRecursion, def.file, def.span, format!("`{name}` calls itself: {}", chain.join(" → ")))
                    .label("recursive procedure")
                    .help("every program must end: replace the recursion with `repeat N { … }` or `for x in … { … }`"),
            );
        }
    }

    fn lint_unknowns(&mut self) {
        // A piece whose stat line is unknown field after field (values printed on counters,
        // not in the book) gets one warning listing the fields, not one per field.
        let mut grouped: Vec<(String, FileId, Span, Vec<String>)> = Vec::new();
        let mut single = Vec::new();
        // A `?` that an error already refuses (a deck's card count, a `max_per_hex`) is not
        // also an unknown to supply: the error says it cannot stay `?`.
        let refused: Vec<(FileId, Span)> = self
            .diags
            .iter()
            .filter(|d| d.severity == crate::diagnostic::Severity::Error)
            .map(|d| (d.primary.file, d.primary.span))
            .collect();
        for (id, file, span, in_table) in self.unknown_sites.clone() {
            if in_table || refused.contains(&(file, span)) {
                continue;
            }
            let name = &self.program.unknowns[id as usize].name;
            let has_note = self.program.unknowns[id as usize].note.is_some();
            match name.split_once('.') {
                Some((owner, field))
                    if !has_note
                        && !field.contains('.')
                        && matches!(
                            self.globals.get(owner).map(|d| d.sym),
                            Some(Sym::Entity(_))
                        ) =>
                {
                    match grouped.iter_mut().find(|g| g.0 == owner && g.1 == file) {
                        Some(g) => g.3.push(field.to_string()),
                        None => {
                            grouped.push((owner.to_string(), file, span, vec![field.to_string()]))
                        }
                    }
                }
                _ => single.push((id, file, span)),
            }
        }
        for (owner, file, span, fields) in grouped {
            let (what, help_name) = if fields.len() == 1 {
                (
                    format!("`{owner}.{}` is unknown (`?`)", fields[0]),
                    format!("{owner}.{}", fields[0]),
                )
            } else {
                (
                    format!(
                        "{} fields of `{owner}` are unknown (`?`): {}",
                        fields.len(),
                        fields.join(", ")
                    ),
                    format!("{owner}.{}", fields[0]),
                )
            };
            self.diags.push(
                Diagnostic::new(Code::LintUnknownValue, file, span, what)
                    .label("unknown value")
                    .help(format!(
                        "running anything that needs them asks for values: `--assume {help_name}=VALUE` or an assumptions file"
                    )),
            );
        }
        for (id, file, span) in single {
            let u = &self.program.unknowns[id as usize];
            let mut d = Diagnostic::new(
                Code::LintUnknownValue,
                file,
                span,
                format!("`{}` is unknown (`?`)", u.name),
            )
            .label(u.note.clone().unwrap_or_else(|| "unknown value".into()));
            d = d.help(format!(
                "running anything that needs it asks for a value: `--assume {}=VALUE` or an assumptions file",
                u.name
            ));
            self.diags.push(d);
        }
    }

    fn lint_unused(&mut self) {
        let mut unused: Vec<(String, Def)> = self
            .globals
            .iter()
            .filter(|(_, d)| {
                matches!(
                    d.sym,
                    Sym::Stack(_) | Sym::Table(_) | Sym::Die(_) | Sym::Kind(_) | Sym::Enum(_)
                ) || matches!(d.sym, Sym::Proc(p) if self.program.procs[p as usize].kind == ir::ProcKind::Procedure)
            })
            .filter(|(_, d)| self.uses.get(&d.sym).copied().unwrap_or(0) == 0)
            .map(|(n, d)| (n.clone(), d.clone()))
            .collect();
        unused.sort_by_key(|(_, d)| (d.file, d.span.start));
        for (name, def) in unused {
            // Tables are data a reader consults even when no mechanic looks them up.
            if matches!(def.sym, Sym::Table(_)) {
                continue;
            }
            self.diags.push(
                Diagnostic::new(
                    Code::LintUnused,
                    def.file,
                    def.span,
                    format!("{} `{}` is never used", def.sym.describe(), name),
                )
                .label("defined here")
                .help("use it, or remove it if the book does not need it"),
            );
        }
    }
}

/// The candidate nearest `name` within a third of its length in changes (at least one), the
/// alphabetically first of equals.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(name, c);
        let limit = (name.len().max(c.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, bc)| (d, c) < (bd, bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance (optimal string alignment), for suggestions only.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    // Optimal string alignment: two neighbouring letters swapped (`strat` for `start`, the
    // commonest slip of a typist) count as one change, not two.
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut before: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                cur[j + 1] = cur[j + 1].min(before[j - 1] + 1);
            }
        }
        before = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn edit_distance_counts_single_changes() {
        assert_eq!(super::edit_distance("fire", "fir"), 1);
        assert_eq!(super::edit_distance("melee", "melee"), 0);
        assert_eq!(super::edit_distance("", "abc"), 3);
        assert_eq!(super::edit_distance("strat", "start"), 1);
        assert_eq!(super::edit_distance("ab", "ba"), 1);
        assert_eq!(super::edit_distance("abc", "ca"), 3);
    }

    /// Names the engine would otherwise look up while playing are resolved here: counters to
    /// ids shared by every call that names them, hex labels in rules to hexes, kinds to ids. A property's
    /// labels stay as written (the typed scenario reads them).
    #[test]
    fn counters_and_hex_labels_in_rules_are_resolved_when_compiled() {
        use crate::ir::{Expr, Value, scenario::HexLabel};
        let c = crate::compile_sources(&[(
            "r.sand",
            r#"
side reds
kind soldier { fire: int }
unit rifleman: soldier of reds { fire: 1 }
enum ground { paddy }
board map: hex { columns: A..=H, rows: 1..=6, default: paddy }
action rest(p: soldier) {
  require counter(p, "tired") == 0 and not adjacent(p, C4) and is(p, soldier)
  add_counter(p, "tired", 1)
}
"#,
        )]);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        let p = &c.program;
        assert_eq!(p.counters, vec![crate::ir::Str::from("tired")]);
        let mut consts = Vec::new();
        crate::ir::visit_stmts(
            &p.proc_by_name("rest").unwrap().1.body,
            false,
            &mut |e, _| {
                e.walk(&mut |x| {
                    if let Expr::Const(v) = x {
                        consts.push(v.clone());
                    }
                })
            },
        );
        assert_eq!(
            consts.iter().filter(|v| **v == Value::Counter(0)).count(),
            2
        );
        let c4 = HexLabel { column: 3, row: 4 };
        assert!(consts.contains(&Value::Hex(c4)), "{consts:?}");
        assert!(consts.contains(&Value::Kind(0)), "{consts:?}");
        assert!(
            !consts
                .iter()
                .any(|v| matches!(v, Value::Symbol(_) | Value::Text(_)))
        );
    }
}
