//! pest pairs → the owned AST. Each builder function knows the shape its grammar rule
//! guarantees; limits the grammar cannot state (expression size) are checked here.

use pest::iterators::{Pair, Pairs};

use crate::ast::*;
use crate::codes::Code;
use crate::parser::{MAX_EXPR_TOKENS, ParseError, Rule, pratt};

struct Cx {
    base: usize,
    /// Errors found while building (limits the grammar cannot express).
    errors: std::cell::RefCell<Vec<ParseError>>,
}

impl Cx {
    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.base + s.start(), self.base + s.end())
    }
    fn ident(&self, p: Pair<Rule>) -> Ident {
        Ident {
            name: p.as_str().to_string(),
            span: self.span(&p),
        }
    }
    fn string(&self, p: Pair<Rule>) -> StrLit {
        let span = self.span(&p);
        let inner = p.into_inner().next().map(|i| i.as_str()).unwrap_or("");
        StrLit {
            value: unescape(inner),
            span,
        }
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn build_item(p: Pair<Rule>, base: usize, errors: &mut Vec<ParseError>) -> Item {
    let cx = Cx {
        base,
        errors: std::cell::RefCell::new(Vec::new()),
    };
    let item = cx.item(p);
    errors.append(&mut cx.errors.into_inner());
    item
}

/// A section heading read on its own (its body is recovered item by item).
pub(crate) fn build_section_head(
    p: Pair<Rule>,
    base: usize,
    errors: &mut Vec<ParseError>,
) -> Section {
    let cx = Cx {
        base,
        errors: std::cell::RefCell::new(Vec::new()),
    };
    let section = cx.section(p);
    errors.append(&mut cx.errors.into_inner());
    section
}

impl Cx {
    fn item(&self, p: Pair<Rule>) -> Item {
        let span = self.span(&p);
        let inner = p.into_inner().next().expect("item has one alternative");
        let kind = match inner.as_rule() {
            Rule::section_item => ItemKind::Section(self.section(inner)),
            Rule::import_item => {
                let x = inner.into_inner().next().expect("import target");
                ItemKind::Import(match x.as_rule() {
                    Rule::string => Import::File(self.string(x)),
                    _ => {
                        let w = x.into_inner().next().expect("std path word");
                        Import::Std(self.ident(w))
                    }
                })
            }
            Rule::side_item => {
                let mut it = inner.into_inner();
                let name = self.ident(it.next().expect("side name"));
                let title = it.next().map(|s| self.string(s));
                ItemKind::Side(Side { name, title })
            }
            Rule::enum_item => {
                let mut it = inner.into_inner();
                let name = self.ident(it.next().expect("enum name"));
                let mut see = Vec::new();
                let mut members = Vec::new();
                for x in it {
                    match x.as_rule() {
                        Rule::see_clause => see = self.see(x),
                        _ => members.push(self.ident(x)),
                    }
                }
                ItemKind::Enum(EnumDef { name, see, members })
            }
            Rule::kind_item => {
                let mut it = inner.into_inner();
                let name = self.ident(it.next().expect("kind name"));
                let (mut title, mut see, mut fields) = (None, Vec::new(), Vec::new());
                for x in it {
                    match x.as_rule() {
                        Rule::string => title = Some(self.string(x)),
                        Rule::see_clause => see = self.see(x),
                        _ => {
                            let mut f = x.into_inner();
                            let name = self.ident(f.next().expect("field name"));
                            let ty = self.type_expr(f.next().expect("field type"));
                            let default = f.next().map(|d| self.expr(d));
                            fields.push(FieldDecl { name, ty, default });
                        }
                    }
                }
                ItemKind::Kind(KindDef {
                    name,
                    title,
                    see,
                    fields,
                })
            }
            Rule::entity_item => ItemKind::Entity(self.entity(inner)),
            Rule::die_item => {
                let mut it = inner.into_inner();
                let name = self.ident(it.next().expect("die name"));
                let faces_pair = it.next().expect("die faces");
                let faces = match faces_pair.as_rule() {
                    Rule::list => self.primary(faces_pair),
                    Rule::unknown => self.unknown(faces_pair),
                    _ => self.range(faces_pair),
                };
                let see = it.next().map(|s| self.see(s)).unwrap_or_default();
                ItemKind::Die(DieDef { name, faces, see })
            }
            Rule::stack_item => ItemKind::Stack(self.stack(inner)),
            Rule::table_item => ItemKind::Table(self.table(inner)),
            Rule::proc_item => ItemKind::Proc(self.proc_(inner)),
            Rule::config_item => ItemKind::Config(self.config(inner)),
            Rule::note_item => {
                ItemKind::Note(self.string(inner.into_inner().next().expect("note text")))
            }
            Rule::see_item => ItemKind::See(self.see(inner.into_inner().next().expect("see"))),
            Rule::assume_item => {
                let mut it = inner.into_inner();
                let path = self.ident(it.next().expect("assume path"));
                it.next().expect("assume `=`");
                let value = self.expr(it.next().expect("assume value"));
                let reason = it.next().map(|s| self.string(s));
                ItemKind::Assume(Assume {
                    path,
                    value,
                    reason,
                })
            }
            Rule::policy_item => ItemKind::Policy(self.policy(inner)),
            r => unreachable!("item alternative {r:?}"),
        };
        Item { kind, span }
    }

    fn see(&self, p: Pair<Rule>) -> Vec<Ref> {
        p.into_inner()
            .map(|r| {
                let span = self.span(&r);
                let x = r.into_inner().next().expect("reference body");
                match x.as_rule() {
                    Rule::string => Ref {
                        text: self.string(x).value,
                        quoted: true,
                        span,
                    },
                    _ => Ref {
                        text: x.as_str().to_string(),
                        quoted: false,
                        span,
                    },
                }
            })
            .collect()
    }

    fn section(&self, p: Pair<Rule>) -> Section {
        let mut it = p.into_inner().peekable();
        let kw = it.next().expect("section keyword");
        let keyword = match kw.as_str() {
            "section" => SectionKeyword::Section,
            "chapter" => SectionKeyword::Chapter,
            _ => SectionKeyword::Rule,
        };
        let mut head = self.span(&kw);
        let (mut number, mut title, mut see, mut body) = (None, None, Vec::new(), None);
        for x in it {
            match x.as_rule() {
                Rule::rule_num => {
                    head = head.join(self.span(&x));
                    number = Some(self.ident(x));
                }
                Rule::string => {
                    head = head.join(self.span(&x));
                    title = Some(self.string(x));
                }
                Rule::see_clause => see = self.see(x),
                Rule::section_body => body = Some(x.into_inner().map(|i| self.item(i)).collect()),
                r => unreachable!("section part {r:?}"),
            }
        }
        Section {
            keyword,
            number,
            title,
            see,
            body,
            head,
        }
    }

    fn entity(&self, p: Pair<Rule>) -> Entity {
        let mut it = p.into_inner();
        let category = match it.next().expect("entity keyword").as_str() {
            "unit" => EntityCategory::Unit,
            "weapon" => EntityCategory::Weapon,
            "terrain" => EntityCategory::Terrain,
            _ => EntityCategory::Marker,
        };
        let name = self.ident(it.next().expect("entity name"));
        let mut e = Entity {
            category,
            name,
            kind: None,
            side: None,
            title: None,
            see: Vec::new(),
            fields: Vec::new(),
        };
        // `: kind` and `of side` are both bare identifiers; the source text tells them apart.
        let mut saw_kind = false;
        for x in it {
            match x.as_rule() {
                Rule::ident => {
                    let prev = x.as_span().start();
                    let before = x.get_input()[..prev].trim_end();
                    if before.ends_with(':') && !saw_kind {
                        saw_kind = true;
                        e.kind = Some(self.ident(x));
                    } else {
                        e.side = Some(self.ident(x));
                    }
                }
                Rule::string => e.title = Some(self.string(x)),
                Rule::see_clause => e.see = self.see(x),
                Rule::entity_body => {
                    for f in x.into_inner() {
                        let mut fi = f.into_inner();
                        let name = self.ident(fi.next().expect("field name"));
                        let value = self.expr(fi.next().expect("field value"));
                        e.fields.push(FieldInit { name, value });
                    }
                }
                r => unreachable!("entity part {r:?}"),
            }
        }
        e
    }

    fn type_expr(&self, p: Pair<Rule>) -> TypeExpr {
        let x = p.into_inner().next().expect("type body");
        match x.as_rule() {
            Rule::range_lit => TypeExpr::Range(self.range(x)),
            Rule::dice => TypeExpr::Die(self.primary(x)),
            _ => TypeExpr::Named(self.ident(x)),
        }
    }

    fn params(&self, p: Pair<Rule>) -> Vec<Param> {
        p.into_inner()
            .map(|param| {
                let mut it = param.into_inner();
                let name = self.ident(it.next().expect("param name"));
                let ty = self.type_expr(it.next().expect("param type"));
                let default = it.next().map(|d| self.expr(d));
                Param { name, ty, default }
            })
            .collect()
    }

    fn stack(&self, p: Pair<Rule>) -> Stack {
        let mut it = p.into_inner();
        let name = self.ident(it.next().expect("stack name"));
        let mut s = Stack {
            name,
            params: Vec::new(),
            clamp: None,
            see: Vec::new(),
            entries: Vec::new(),
        };
        for x in it {
            match x.as_rule() {
                Rule::params => s.params = self.params(x),
                Rule::range_lit => s.clamp = Some(self.range(x)),
                Rule::see_clause => s.see = self.see(x),
                Rule::stack_entry => s.entries.push(self.stack_entry(x)),
                r => unreachable!("stack part {r:?}"),
            }
        }
        s
    }

    fn stack_entry(&self, p: Pair<Rule>) -> StackEntry {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let value_pair = it.next().expect("stack value");
        let value = {
            let vspan = self.span(&value_pair);
            let mut v = value_pair.into_inner();
            let first = v.next().expect("stack value body");
            match first.as_rule() {
                Rule::bare_unknown => Expr {
                    kind: ExprKind::Unknown(None),
                    span: vspan,
                },
                _ => {
                    let negative = first.as_str() == "-";
                    let operand = self.postfix_expr(v.next().expect("stack operand"));
                    if negative {
                        Expr {
                            kind: ExprKind::Unary {
                                op: UnOp::Neg,
                                operand: Box::new(operand),
                            },
                            span: vspan,
                        }
                    } else {
                        Expr {
                            kind: operand.kind,
                            span: vspan,
                        }
                    }
                }
            }
        };
        let label = self.string(it.next().expect("stack label"));
        let mut e = StackEntry {
            value,
            label,
            per: None,
            when: None,
            see: Vec::new(),
            span,
        };
        // `per` and `when` are both plain expressions; the keyword before each tells them apart.
        for x in it {
            match x.as_rule() {
                Rule::see_clause => e.see = self.see(x),
                Rule::tight_expr => {
                    let before = x.get_input()[..x.as_span().start()].trim_end();
                    let ex = self.expr(x);
                    if before.ends_with("per") {
                        e.per = Some(ex);
                    } else {
                        e.when = Some(ex);
                    }
                }
                r => unreachable!("stack entry part {r:?}"),
            }
        }
        e
    }

    fn postfix_expr(&self, p: Pair<Rule>) -> Expr {
        let mut it = p.into_inner();
        let mut e = self.primary(it.next().expect("primary"));
        for post in it {
            e = self.apply_postfix(e, post);
        }
        e
    }

    fn table(&self, p: Pair<Rule>) -> Table {
        let mut it = p.into_inner();
        let name = self.ident(it.next().expect("table name"));
        let mut t = Table {
            name,
            keys: Vec::new(),
            see: Vec::new(),
            columns: None,
            rows: Vec::new(),
        };
        for x in it {
            match x.as_rule() {
                Rule::table_key => {
                    let mut k = x.into_inner();
                    let name = self.ident(k.next().expect("key name"));
                    let domain = k.next().map(|d| self.type_expr(d));
                    t.keys.push(TableKey { name, domain });
                }
                Rule::see_clause => t.see = self.see(x),
                Rule::table_columns => {
                    let span = self.span(&x);
                    t.columns = Some((x.into_inner().map(|c| self.cell(c)).collect(), span));
                }
                Rule::table_row => {
                    let span = self.span(&x);
                    let mut r = x.into_inner();
                    let keys = self.patterns(r.next().expect("row keys"));
                    let cells = r.map(|c| self.cell(c)).collect();
                    t.rows.push(TableRow { keys, cells, span });
                }
                r => unreachable!("table part {r:?}"),
            }
        }
        t
    }

    fn cell(&self, p: Pair<Rule>) -> Expr {
        let x = p.into_inner().next().expect("cell body");
        if x.as_rule() == Rule::not_applicable {
            // `-` is no name a rules writer can type, so it stands for itself.
            return Expr {
                kind: ExprKind::Name(NOT_APPLICABLE.to_string()),
                span: self.span(&x),
            };
        }
        self.primary(x)
    }

    fn policy(&self, p: Pair<Rule>) -> Policy {
        let mut it = p.into_inner();
        let name = self.ident(it.next().expect("policy name"));
        let side = self.ident(it.next().expect("policy side"));
        let (mut title, mut see, mut rules) = (None, Vec::new(), Vec::new());
        for x in it {
            match x.as_rule() {
                Rule::string => title = Some(self.string(x)),
                Rule::see_clause => see = self.see(x),
                Rule::prefer => rules.push(self.prefer(x)),
                r => unreachable!("policy part {r:?}"),
            }
        }
        Policy {
            name,
            side,
            title,
            see,
            rules,
        }
    }

    fn prefer(&self, p: Pair<Rule>) -> Prefer {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let target = it.next().expect("prefer target");
        let mut last_end = target.as_span().end();
        let what_pair = target.into_inner().next().expect("prefer alternative");
        let call = |c: Pair<Rule>| {
            let mut parts = c.into_inner();
            let name = self.ident(parts.next().expect("action name"));
            (name, parts.map(|b| self.ident(b)).collect::<Vec<_>>())
        };
        let what = match what_pair.as_rule() {
            Rule::prefer_hold => {
                let span = self.span(&what_pair);
                PreferWhat::Hold(span, what_pair.into_inner().next().map(|b| self.ident(b)))
            }
            Rule::prefer_call => {
                let (name, binders) = call(what_pair);
                PreferWhat::Action { name, binders }
            }
            Rule::prefer_pick => {
                let mut parts = what_pair.into_inner();
                let opt = parts.next().expect("pick option");
                let text = opt.as_str();
                let option = Ident {
                    name: text
                        .strip_prefix('"')
                        .and_then(|t| t.strip_suffix('"'))
                        .unwrap_or(text)
                        .to_string(),
                    span: self.span(&opt),
                };
                let (action, binders) = call(parts.next().expect("pick action"));
                PreferWhat::Pick {
                    option,
                    action,
                    binders,
                }
            }
            r => unreachable!("prefer target {r:?}"),
        };
        let (mut when, mut by, mut see) = (None, None, Vec::new());
        // The keywords are silent: the text before an expression says which one it is.
        for x in it {
            match x.as_rule() {
                Rule::expr => {
                    let input = x.as_span().get_input();
                    let between = &input[last_end..x.as_span().start()];
                    let e = self.expr(x.clone());
                    if !between.trim_end().ends_with("by") {
                        when = Some(e);
                    } else {
                        by = Some(e);
                    }
                    last_end = x.as_span().end();
                }
                Rule::see_clause => see = self.see(x),
                r => unreachable!("prefer part {r:?}"),
            }
        }
        Prefer {
            what,
            when,
            by,
            see,
            span,
        }
    }

    fn proc_(&self, p: Pair<Rule>) -> Proc {
        let mut it = p.into_inner();
        let kind = match it.next().expect("proc keyword").as_str() {
            "resolve" => ProcKind::Resolve,
            "action" => ProcKind::Action,
            _ => ProcKind::Procedure,
        };
        let name = self.ident(it.next().expect("proc name"));
        let params = self.params(it.next().expect("params"));
        let mut see = Vec::new();
        let mut body = None;
        for x in it {
            match x.as_rule() {
                Rule::see_clause => see = self.see(x),
                Rule::block => body = Some(self.block(x)),
                r => unreachable!("proc part {r:?}"),
            }
        }
        Proc {
            kind,
            name,
            params,
            see,
            body: body.expect("proc body"),
        }
    }

    fn config(&self, p: Pair<Rule>) -> Config {
        let mut it = p.into_inner();
        let keyword = self.ident(it.next().expect("config keyword"));
        self.config_rest(keyword, it)
    }

    fn config_rest(&self, keyword: Ident, it: Pairs<Rule>) -> Config {
        let mut c = Config {
            keyword,
            name: None,
            scheme: None,
            title: None,
            see: Vec::new(),
            entries: Vec::new(),
        };
        for x in it {
            match x.as_rule() {
                Rule::ident => {
                    let before = x.get_input()[..x.as_span().start()].trim_end();
                    if before.ends_with(':') {
                        c.scheme = Some(self.ident(x));
                    } else {
                        c.name = Some(self.ident(x));
                    }
                }
                Rule::string => c.title = Some(self.string(x)),
                Rule::see_clause => c.see = self.see(x),
                Rule::config_body => {
                    for e in x.into_inner() {
                        c.entries.push(self.config_entry(e));
                    }
                }
                r => unreachable!("config part {r:?}"),
            }
        }
        c
    }

    fn config_entry(&self, p: Pair<Rule>) -> ConfigEntry {
        let x = p.into_inner().next().expect("config entry body");
        let span = self.span(&x);
        match x.as_rule() {
            Rule::hook => {
                let mut it = x.into_inner();
                let event = self.ident(it.next().expect("event"));
                let mut see = Vec::new();
                let mut body = None;
                for y in it {
                    match y.as_rule() {
                        Rule::see_clause => see = self.see(y),
                        _ => body = Some(self.block(y)),
                    }
                }
                ConfigEntry::Hook {
                    event,
                    see,
                    body: body.expect("hook body"),
                }
            }
            Rule::victory => {
                let mut see = Vec::new();
                let mut body = None;
                for y in x.into_inner() {
                    match y.as_rule() {
                        Rule::see_clause => see = self.see(y),
                        _ => body = Some(self.block(y)),
                    }
                }
                ConfigEntry::Victory {
                    see,
                    body: body.expect("victory body"),
                    span,
                }
            }
            Rule::property => {
                let mut it = x.into_inner();
                let key = self.ident(it.next().expect("property key"));
                let mut values = Vec::new();
                let mut see = Vec::new();
                for y in it {
                    match y.as_rule() {
                        Rule::see_clause => see = self.see(y),
                        _ => {
                            let mut v = y.into_inner();
                            let first = v.next().expect("prop value");
                            if first.as_rule() == Rule::word {
                                let name = Some(self.ident(first));
                                let value = self.expr(v.next().expect("named value"));
                                values.push(PropValue { name, value });
                            } else {
                                values.push(PropValue {
                                    name: None,
                                    value: self.expr(first),
                                });
                            }
                        }
                    }
                }
                ConfigEntry::Property {
                    key,
                    values,
                    see,
                    span,
                }
            }
            Rule::item => ConfigEntry::Item(self.item(x)),
            Rule::nested_block => {
                let mut it = x.into_inner();
                let keyword = self.ident(it.next().expect("block word"));
                ConfigEntry::Block(self.config_rest(keyword, it), span)
            }
            r => unreachable!("config entry {r:?}"),
        }
    }

    fn block(&self, p: Pair<Rule>) -> Block {
        let span = self.span(&p);
        Block {
            stmts: p.into_inner().map(|s| self.stmt(s)).collect(),
            span,
        }
    }

    fn stmt(&self, p: Pair<Rule>) -> Stmt {
        let x = p.into_inner().next().expect("stmt body");
        self.stmt_inner(x)
    }

    fn stmt_inner(&self, x: Pair<Rule>) -> Stmt {
        let span = self.span(&x);
        let rule = x.as_rule();
        let mut it = x.into_inner();
        let kind = match rule {
            Rule::let_stmt => StmtKind::Let {
                name: self.ident(it.next().expect("let name")),
                value: self.expr(it.next().expect("let value")),
            },
            Rule::if_stmt => {
                let cond = self.expr(it.next().expect("if cond"));
                let then = self.block(it.next().expect("if block"));
                let otherwise = it.next().map(|e| {
                    Box::new(match e.as_rule() {
                        Rule::if_stmt => Else::If(self.stmt_inner(e)),
                        _ => Else::Block(self.block(e)),
                    })
                });
                StmtKind::If {
                    cond,
                    then,
                    otherwise,
                }
            }
            Rule::bands_stmt => {
                let scrutinee = self.expr(it.next().expect("bands expr"));
                let arms = it.map(|a| self.arm(a)).collect();
                StmtKind::Bands { scrutinee, arms }
            }
            Rule::result_stmt => StmtKind::Result(self.expr(it.next().expect("result"))),
            Rule::outcome_stmt => StmtKind::Outcome(self.ident(it.next().expect("outcome"))),
            Rule::eliminate_stmt => StmtKind::Eliminate(self.expr(it.next().expect("target"))),
            Rule::place_stmt => StmtKind::Place {
                marker: self.ident(it.next().expect("marker")),
                target: self.expr(it.next().expect("target")),
            },
            Rule::remove_stmt => StmtKind::Remove {
                marker: self.ident(it.next().expect("marker")),
                target: self.expr(it.next().expect("target")),
            },
            Rule::move_stmt => StmtKind::Move {
                what: self.expr(it.next().expect("what")),
                to: self.expr(it.next().expect("to")),
            },
            Rule::score_stmt => {
                let side = self.ident(it.next().expect("side"));
                let op = match it.next().expect("op").as_str() {
                    "+=" => ScoreOp::Add,
                    "-=" => ScoreOp::Sub,
                    _ => ScoreOp::Set,
                };
                let value = self.expr(it.next().expect("value"));
                StmtKind::Score { side, op, value }
            }
            Rule::win_stmt => {
                let x = it.next().expect("winner");
                if x.as_rule() == Rule::ident {
                    StmtKind::Win(self.ident(x))
                } else {
                    match self.unknown(x).kind {
                        ExprKind::Unknown(note) => StmtKind::WinUnknown(note),
                        _ => unreachable!("unknown builds an Unknown"),
                    }
                }
            }
            Rule::choose_stmt => {
                let var = self.ident(it.next().expect("var"));
                let from = self.expr(it.next().expect("from"));
                let next = it.next().expect("body");
                let (by, body) = if next.as_rule() == Rule::block {
                    (None, next)
                } else {
                    (Some(Box::new(self.expr(next))), it.next().expect("body"))
                };
                StmtKind::Choose {
                    var,
                    from,
                    by,
                    body: self.block(body),
                }
            }
            Rule::for_stmt => StmtKind::For {
                var: self.ident(it.next().expect("var")),
                iter: self.expr(it.next().expect("iter")),
                body: self.block(it.next().expect("body")),
            },
            Rule::repeat_stmt => StmtKind::Repeat {
                count: self.expr(it.next().expect("count")),
                body: self.block(it.next().expect("body")),
            },
            Rule::require_stmt => StmtKind::Require(self.expr(it.next().expect("cond"))),
            Rule::see_stmt => StmtKind::See(self.see(it.next().expect("see"))),
            Rule::note_stmt => StmtKind::Note(self.string(it.next().expect("note"))),
            Rule::expr_stmt => StmtKind::Expr(self.expr(it.next().expect("expr"))),
            r => unreachable!("stmt {r:?}"),
        };
        Stmt { kind, span }
    }

    fn arm(&self, p: Pair<Rule>) -> Arm {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let patterns = self.patterns(it.next().expect("patterns"));
        let rhs = it.next().expect("arm rhs");
        let mut arm = Arm {
            patterns,
            outcome: None,
            value: None,
            body: None,
            see: Vec::new(),
            span,
        };
        for x in rhs.into_inner() {
            match x.as_rule() {
                Rule::block => arm.body = Some(self.block(x)),
                Rule::ident => arm.outcome = Some(self.ident(x)),
                Rule::tight_expr => arm.value = Some(self.expr(x)),
                r => unreachable!("arm rhs {r:?}"),
            }
        }
        if let Some(s) = it.next() {
            arm.see = self.see(s);
        }
        arm
    }

    fn patterns(&self, p: Pair<Rule>) -> Vec<Pattern> {
        p.into_inner()
            .map(|pat| {
                let span = self.span(&pat);
                let x = pat.into_inner().next().expect("pattern body");
                let kind = match x.as_rule() {
                    Rule::wildcard => PatternKind::Wildcard,
                    Rule::range_lit => PatternKind::Range(self.range(x)),
                    Rule::at_least => {
                        let n = self.int(x.as_str().trim_end_matches('+'), span);
                        let lo = Expr {
                            kind: ExprKind::Int(n),
                            span,
                        };
                        PatternKind::Range(Expr {
                            kind: ExprKind::Range {
                                lo: Some(Box::new(lo)),
                                hi: None,
                                inclusive: true,
                            },
                            span,
                        })
                    }
                    Rule::unknown => match self.unknown(x).kind {
                        ExprKind::Unknown(n) => PatternKind::Unknown(n),
                        _ => unreachable!(),
                    },
                    _ => PatternKind::Value(self.primary(x)),
                };
                Pattern { kind, span }
            })
            .collect()
    }

    fn unknown(&self, p: Pair<Rule>) -> Expr {
        let span = self.span(&p);
        let note = p.into_inner().next().map(|s| self.string(s).value);
        Expr {
            kind: ExprKind::Unknown(note),
            span,
        }
    }

    fn range(&self, p: Pair<Rule>) -> Expr {
        let span = self.span(&p);
        let (mut lo, mut hi, mut inclusive, mut seen_op) = (None, None, false, false);
        for x in p.into_inner() {
            match x.as_rule() {
                Rule::range_op => {
                    seen_op = true;
                    inclusive = x.as_str() == "..=";
                }
                Rule::range_bound => {
                    let b = x.into_inner().next().expect("bound");
                    let e = self.primary(b);
                    if seen_op {
                        hi = Some(Box::new(e));
                    } else {
                        lo = Some(Box::new(e));
                    }
                }
                r => unreachable!("range part {r:?}"),
            }
        }
        Expr {
            kind: ExprKind::Range { lo, hi, inclusive },
            span,
        }
    }

    fn expr(&self, p: Pair<Rule>) -> Expr {
        let span = self.span(&p);
        // Operator chains are flat in the parse but deep once built: bound them so building,
        // checking and running never exhaust the stack.
        let tokens = p.clone().into_inner().count();
        if tokens > MAX_EXPR_TOKENS {
            self.errors.borrow_mut().push(ParseError {
                code: Code::ParseTooLong,
                message: format!("this expression has {tokens} operands and operators; the limit is {MAX_EXPR_TOKENS}"),
                span,
                help: Some("split it with `let` into smaller parts".into()),
            });
            return Expr {
                kind: ExprKind::Int(0),
                span,
            };
        }
        let mut e = pratt()
            .map_primary(|x| self.primary(x))
            .map_prefix(|op, rhs| {
                let s = self.span(&op).join(rhs.span);
                let op = if op.as_rule() == Rule::not_op {
                    UnOp::Not
                } else {
                    UnOp::Neg
                };
                fold_negative_range(op, rhs, s)
            })
            .map_postfix(|lhs, op| self.apply_postfix(lhs, op))
            .map_infix(|lhs, op, rhs| {
                let op = match op.as_rule() {
                    Rule::or_op => BinOp::Or,
                    Rule::and_op => BinOp::And,
                    Rule::eq => BinOp::Eq,
                    Rule::ne => BinOp::Ne,
                    Rule::lt => BinOp::Lt,
                    Rule::le => BinOp::Le,
                    Rule::gt => BinOp::Gt,
                    Rule::ge => BinOp::Ge,
                    Rule::in_op => BinOp::In,
                    Rule::add => BinOp::Add,
                    Rule::sub => BinOp::Sub,
                    Rule::mul => BinOp::Mul,
                    Rule::div => BinOp::Div,
                    _ => BinOp::Rem,
                };
                let s = lhs.span.join(rhs.span);
                Expr {
                    kind: ExprKind::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    span: s,
                }
            })
            .parse(p.into_inner());
        if e.span.is_empty() {
            e.span = span;
        }
        e
    }

    fn apply_postfix(&self, lhs: Expr, op: Pair<Rule>) -> Expr {
        let s = lhs.span.join(self.span(&op));
        match op.as_rule() {
            Rule::field => {
                let f = self.ident(op.into_inner().next().expect("field name"));
                Expr {
                    kind: ExprKind::Field {
                        base: Box::new(lhs),
                        field: f,
                    },
                    span: s,
                }
            }
            _ => {
                let args = op
                    .into_inner()
                    .next()
                    .map(|a| self.args(a))
                    .unwrap_or_default();
                Expr {
                    kind: ExprKind::Index {
                        base: Box::new(lhs),
                        args,
                    },
                    span: s,
                }
            }
        }
    }

    fn args(&self, p: Pair<Rule>) -> Vec<Arg> {
        p.into_inner()
            .map(|a| {
                let mut it = a.into_inner();
                let first = it.next().expect("arg");
                if first.as_rule() == Rule::ident {
                    Arg {
                        name: Some(self.ident(first)),
                        value: self.expr(it.next().expect("arg value")),
                    }
                } else {
                    Arg {
                        name: None,
                        value: self.expr(first),
                    }
                }
            })
            .collect()
    }

    fn primary(&self, p: Pair<Rule>) -> Expr {
        let span = self.span(&p);
        let kind = match p.as_rule() {
            Rule::unknown => return self.unknown(p),
            Rule::range_lit => return self.range(p),
            Rule::if_expr => {
                let mut it = p.into_inner();
                ExprKind::If {
                    cond: Box::new(self.expr(it.next().expect("cond"))),
                    then: Box::new(self.expr(it.next().expect("then"))),
                    otherwise: Box::new(self.expr(it.next().expect("else"))),
                }
            }
            Rule::call => {
                let mut it = p.into_inner();
                let callee = self.ident(it.next().expect("callee"));
                let args = it.next().map(|a| self.args(a)).unwrap_or_default();
                ExprKind::Call { callee, args }
            }
            Rule::list => ExprKind::List(p.into_inner().map(|e| self.expr(e)).collect()),
            Rule::paren => {
                let inner = self.expr(p.into_inner().next().expect("paren body"));
                return Expr {
                    kind: inner.kind,
                    span,
                };
            }
            Rule::length => ExprKind::Length(self.length(p.as_str(), span)),
            Rule::dice => {
                let s = p.as_str();
                let (n, x) = s.split_once('d').unwrap_or(("", s));
                let count = if n.is_empty() {
                    1
                } else {
                    n.parse().unwrap_or(u32::MAX)
                };
                let sides = x.parse().unwrap_or(u32::MAX);
                ExprKind::Dice { count, sides }
            }
            Rule::int => ExprKind::Int(self.int(p.as_str(), span)),
            Rule::boolean => ExprKind::Bool(p.as_str() == "true"),
            Rule::string => ExprKind::Str(self.string(p).value),
            Rule::plus_int | Rule::signed_atom => {
                let negative = p.as_str().starts_with('-');
                let body = p.into_inner().next().expect("signed body");
                // The most negative integer has no positive counterpart to negate.
                if negative
                    && body.as_rule() == Rule::int
                    && let Ok(n) = format!("-{}", body.as_str()).parse::<i64>()
                {
                    return Expr {
                        kind: ExprKind::Int(n),
                        span,
                    };
                }
                let inner = self.primary(body);
                let kind = match inner.kind {
                    ExprKind::Int(n) if negative => ExprKind::Int(n.saturating_neg()),
                    ExprKind::Length(n) if negative => ExprKind::Length(n.saturating_neg()),
                    k => k,
                };
                return Expr { kind, span };
            }
            Rule::ident | Rule::word => ExprKind::Name(p.as_str().to_string()),
            Rule::range_bound => return self.primary(p.into_inner().next().expect("bound")),
            Rule::atom_range | Rule::open_range => {
                let mut it = p.clone().into_inner();
                let first = it.next().expect("atom or operator");
                if p.as_rule() == Rule::atom_range && it.next().is_none() {
                    return self.primary(first);
                }
                return self.range(p);
            }
            Rule::expr | Rule::tight_expr => return self.expr(p),
            r => unreachable!("primary {r:?}"),
        };
        Expr { kind, span }
    }
}

/// `-2..=1` reaches the builder as `-(2..=1)`: the sign belongs to the lower bound.
fn fold_negative_range(op: UnOp, rhs: Expr, span: Span) -> Expr {
    if op == UnOp::Neg
        && let ExprKind::Range {
            lo: Some(lo),
            hi,
            inclusive,
        } = &rhs.kind
        && let ExprKind::Int(n) = lo.kind
    {
        return Expr {
            kind: ExprKind::Range {
                lo: Some(Box::new(Expr {
                    kind: ExprKind::Int(-n),
                    span: Span::new(span.start, lo.span.end),
                })),
                hi: hi.clone(),
                inclusive: *inclusive,
            },
            span,
        };
    }
    Expr {
        kind: ExprKind::Unary {
            op,
            operand: Box::new(rhs),
        },
        span,
    }
}

impl Cx {
    /// An integer literal. One beyond 64 bits is an error: saturating it would silently
    /// change the rule.
    fn int(&self, text: &str, span: Span) -> i64 {
        text.parse().unwrap_or_else(|_| {
            self.number_error(
                format!(
                    "the integer `{text}` is too large; the largest is {}",
                    i64::MAX
                ),
                span,
            )
        })
    }

    /// A length literal in tenths of a millimetre, refused when it does not fit in 64 bits.
    fn length(&self, text: &str, span: Span) -> i64 {
        let (digits, unit) = text.split_at(text.len() - 2);
        let per = match unit {
            "in" => LENGTH_PER_INCH,
            "cm" => LENGTH_PER_CM,
            _ => LENGTH_PER_MM,
        };
        match digits.parse::<i64>().ok().and_then(|n| n.checked_mul(per)) {
            Some(n) => n,
            None => self.number_error(
                format!(
                    "the length `{text}` is too large; the largest is {}{unit}",
                    i64::MAX / per
                ),
                span,
            ),
        }
    }

    fn number_error(&self, message: String, span: Span) -> i64 {
        self.errors.borrow_mut().push(ParseError {
            code: Code::ParseNumberTooLarge,
            message,
            span,
            help: Some("write a smaller number; no game quantity needs more than 18 digits".into()),
        });
        0
    }
}
