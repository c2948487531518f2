//! pest pairs → owned AST. Parsing never panics: it returns the items it could read and one
//! error per region it could not, resynchronising at the next top-level item.

use std::sync::OnceLock;

use pest::Parser;
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};

use crate::ast::*;

#[derive(pest_derive::Parser)]
#[grammar = "sand.pest"]
struct SandParser;

/// Largest source accepted, so a huge input fails with a figure instead of exhausting memory.
pub const MAX_SOURCE_BYTES: usize = 8 * 1024 * 1024;
/// Bound on pest's rule calls per parse: deeply nested input fails cleanly instead of
/// overflowing the stack.
const CALL_LIMIT: usize = 20_000_000;
/// Most operands and operators in one expression.
pub const MAX_EXPR_TOKENS: usize = 2_000;
/// Bound on nesting depth of brackets, braces and parentheses.
pub const MAX_NESTING: usize = 256;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ParseError {
    pub message: String,
    pub span: Span,
    pub help: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, Default)]
pub struct Parsed {
    pub file: File,
    pub errors: Vec<ParseError>,
}

fn pratt() -> &'static PrattParser<Rule> {
    static PRATT: OnceLock<PrattParser<Rule>> = OnceLock::new();
    PRATT.get_or_init(|| {
        PrattParser::new()
            .op(Op::infix(Rule::or_op, Assoc::Left))
            .op(Op::infix(Rule::and_op, Assoc::Left))
            .op(Op::prefix(Rule::not_op))
            .op(Op::infix(Rule::eq, Assoc::Left)
                | Op::infix(Rule::ne, Assoc::Left)
                | Op::infix(Rule::lt, Assoc::Left)
                | Op::infix(Rule::le, Assoc::Left)
                | Op::infix(Rule::gt, Assoc::Left)
                | Op::infix(Rule::ge, Assoc::Left)
                | Op::infix(Rule::in_op, Assoc::Left))
            .op(Op::infix(Rule::add, Assoc::Left) | Op::infix(Rule::sub, Assoc::Left))
            .op(Op::infix(Rule::mul, Assoc::Left)
                | Op::infix(Rule::div, Assoc::Left)
                | Op::infix(Rule::rem, Assoc::Left))
            .op(Op::prefix(Rule::neg))
            .op(Op::postfix(Rule::field) | Op::postfix(Rule::index))
    })
}

/// Parse one file. Items before, between and after syntax errors are kept.
pub fn parse(src: &str) -> Parsed {
    let mut out = Parsed::default();
    if src.len() > MAX_SOURCE_BYTES {
        out.errors.push(ParseError {
            message: format!(
                "file is {} bytes; the limit is {} bytes",
                src.len(),
                MAX_SOURCE_BYTES
            ),
            span: Span::new(0, 0),
            help: Some("split the ruleset into several files".into()),
        });
        return out;
    }
    if let Some(err) = nesting_error(src) {
        out.errors.push(err);
        return out;
    }
    pest::set_call_limit(std::num::NonZeroUsize::new(CALL_LIMIT));
    match SandParser::parse(Rule::file, src) {
        Ok(mut pairs) => {
            let file = pairs.next().expect("file rule always yields one pair");
            for p in file.into_inner() {
                if p.as_rule() == Rule::item {
                    out.file.items.push(build_item(p, 0, &mut out.errors));
                }
            }
        }
        Err(_) => parse_with_recovery(src, &mut out),
    }
    out
}

/// Brackets nested deeper than `MAX_NESTING` are refused before pest recurses into them.
fn nesting_error(src: &str) -> Option<ParseError> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in src.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(ParseError {
                        message: format!("brackets nested more than {MAX_NESTING} deep"),
                        span: Span::new(i, i + 1),
                        help: Some("flatten the expression or split the block".into()),
                    });
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads one item at a time; after a failure it records the error and skips to the next line
/// that begins an item.
fn parse_with_recovery(src: &str, out: &mut Parsed) {
    let mut pos = skip_trivia(src, 0);
    while pos < src.len() {
        // After an error inside a block we resume at its next item; its closing brace is
        // left over and skipped here.
        if src[pos..].starts_with('}') {
            pos = skip_trivia(src, pos + 1);
            continue;
        }
        match SandParser::parse(Rule::lone_item, &src[pos..]) {
            Ok(mut pairs) => {
                let lone = pairs.next().expect("lone_item yields one pair");
                let item = lone.into_inner().next().expect("lone_item holds an item");
                let end = pos + item.as_span().end();
                out.file.items.push(build_item(item, pos, &mut out.errors));
                pos = skip_trivia(src, end);
            }
            Err(e) => {
                out.errors.push(convert_error(&e, src, pos));
                let failed_at = pos + error_offset(&e);
                let next = resync(src, pos, failed_at);
                if next <= pos {
                    break;
                }
                pos = skip_trivia(src, next);
            }
        }
    }
}

fn skip_trivia(src: &str, mut pos: usize) -> usize {
    let bytes = src.as_bytes();
    loop {
        while pos < bytes.len() && (bytes[pos] as char).is_ascii_whitespace() {
            pos += 1;
        }
        if src[pos..].starts_with("//") {
            pos = src[pos..].find('\n').map_or(src.len(), |n| pos + n);
        } else if src[pos..].starts_with("/*") {
            pos = src[pos + 2..]
                .find("*/")
                .map_or(src.len(), |n| pos + 2 + n + 2);
        } else if src[pos..].starts_with('\u{FEFF}') {
            pos += '\u{FEFF}'.len_utf8();
        } else {
            return pos;
        }
    }
}

const ITEM_STARTS: &[&str] = &[
    "ruleset",
    "import",
    "section",
    "chapter",
    "rule",
    "side",
    "enum",
    "kind",
    "unit",
    "weapon",
    "terrain",
    "marker",
    "die",
    "stack",
    "table",
    "resolve",
    "action",
    "procedure",
    "scenario",
    "board",
    "turn",
    "phase",
    "activation",
    "force",
    "note",
    "see",
    "assume",
];

/// The next place to try after an error: the next line, after the error position, that starts
/// with an item keyword (at any depth, so the rest of an enclosing section is still read).
fn resync(src: &str, item_start: usize, failed_at: usize) -> usize {
    let mut line_start = true;
    let mut in_str = false;
    let bytes = src.as_bytes();
    let mut i = item_start;
    while i < bytes.len() {
        let c = bytes[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            if c == b'\n' {
                line_start = true;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b'/' if src[i..].starts_with("//") => {
                i = src[i..].find('\n').map_or(src.len(), |n| i + n);
                continue;
            }
            _ => {}
        }
        if line_start && !c.is_ascii_whitespace() {
            line_start = false;
            if i > failed_at.max(item_start) && starts_item(&src[i..]) {
                return i;
            }
        }
        i += 1;
    }
    src.len()
}

fn starts_item(rest: &str) -> bool {
    ITEM_STARTS.iter().any(|kw| {
        rest.starts_with(kw)
            && rest[kw.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
    })
}

fn error_offset(e: &pest::error::Error<Rule>) -> usize {
    match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    }
}

fn convert_error(e: &pest::error::Error<Rule>, src: &str, base: usize) -> ParseError {
    let at = base + error_offset(e);
    let end = next_token_end(src, at);
    let found = if at >= src.len() {
        "end of file".to_string()
    } else {
        format!("`{}`", &src[at..end])
    };
    let expected = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => describe_expected(positives),
        pest::error::ErrorVariant::CustomError { message } => message.clone(),
    };
    let message = if expected.is_empty() {
        format!("unexpected {found}")
    } else {
        format!("expected {expected}, found {found}")
    };
    ParseError {
        message,
        span: Span::new(at, end.max(at)),
        help: Some(help_for(&e.variant, src, at)),
    }
}

fn next_token_end(src: &str, at: usize) -> usize {
    if at >= src.len() {
        return src.len();
    }
    let rest = &src[at..];
    let mut chars = rest.char_indices();
    let Some((_, first)) = chars.next() else {
        return src.len();
    };
    if first.is_alphanumeric() || first == '_' {
        let len = rest
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        at + len
    } else {
        at + first.len_utf8()
    }
}

fn describe_expected(positives: &[Rule]) -> String {
    let mut names: Vec<&str> = positives.iter().filter_map(|r| rule_name(*r)).collect();
    names.sort_unstable();
    names.dedup();
    match names.len() {
        0 => String::new(),
        1 => names[0].to_string(),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!("{} or {}", names.join(", "), last)
        }
    }
}

fn rule_name(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::item | Rule::lone_item => "an item (section, rule, kind, unit, table, resolve, …)",
        Rule::ident => "a name",
        Rule::word => "a name",
        Rule::int | Rule::int_text => "a number",
        Rule::string | Rule::str_inner => "a string",
        Rule::expr | Rule::tight_expr | Rule::stmt | Rule::expr_stmt => "an expression",
        Rule::block => "`{`",
        Rule::config_body | Rule::section_body | Rule::entity_body => "`{`",
        Rule::type_expr => "a type",
        Rule::params => "`(`",
        Rule::param => "a parameter",
        Rule::arm => "a band (`PATTERN => outcome`)",
        Rule::patterns | Rule::pattern => "a pattern",
        Rule::table_row => "a table row (`KEY => cells`)",
        Rule::cell => "a table cell",
        Rule::stack_entry => "a modifier (`+1 \"label\"`)",
        Rule::stack_value => "a signed modifier value",
        Rule::bare_unknown => "`?`",
        Rule::field_decl => "a field (`name: type`)",
        Rule::field_init => "a field (`name: value`)",
        Rule::config_entry => "a property (`key: value`) or block",
        Rule::reference => "a rule reference",
        Rule::range_lit => "a range",
        Rule::EOI => "end of file",
        Rule::rule_num => "a rule number",
        _ => return None,
    })
}

fn help_for(variant: &pest::error::ErrorVariant<Rule>, src: &str, at: usize) -> String {
    let found = &src[at.min(src.len())..next_token_end(src, at)];
    let at_line_start = src[..at.min(src.len())]
        .rsplit('\n')
        .next()
        .is_some_and(|l| l.trim().is_empty());
    if at_line_start && ITEM_STARTS.contains(&found) {
        return format!(
            "`{found}` starts a new item, but the block above is still open: is a closing `}}` missing before this line?"
        );
    }
    if KEYWORD_LIST.contains(&found) {
        return format!(
            "`{found}` is a keyword and cannot be used as a name here; rename it (e.g. `{found}_`)"
        );
    }
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = variant {
        if positives.contains(&Rule::EOI) || positives.contains(&Rule::item) {
            return "a file holds items: `section`, `rule`, `kind`, `unit`, `table`, `stack`, `resolve`, `scenario`, … — check for an unclosed or extra brace".into();
        }
        if positives.contains(&Rule::arm) {
            return "bands look like `1..=4 => pinned_down`; patterns are `n`, `a..=b`, `a..`, `..=b`, `n+` or `_`".into();
        }
        if positives.contains(&Rule::stack_entry) {
            return "modifier entries look like `-1 \"target in cover\" when cover == medium see 5.1`".into();
        }
    }
    "see docs/language.md for the syntax of this construct".into()
}

/// Words reserved in expressions (the grammar's `keyword` rule); item keywords are not
/// reserved, so `weapon` or `turn` may name a parameter.
const KEYWORD_LIST: &[&str] = &[
    "see", "note", "let", "if", "then", "else", "bands", "result", "outcome", "on", "from", "to",
    "choose", "for", "in", "repeat", "require", "when", "per", "columns", "true", "false", "and",
    "or", "not", "of",
];

// ---------------------------------------------------------------- builders

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

fn build_item(p: Pair<Rule>, base: usize, errors: &mut Vec<ParseError>) -> Item {
    let cx = Cx {
        base,
        errors: std::cell::RefCell::new(Vec::new()),
    };
    let item = cx.item(p);
    errors.append(&mut cx.errors.into_inner());
    item
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
                let value = self.expr(it.next().expect("assume value"));
                let reason = it.next().map(|s| self.string(s));
                ItemKind::Assume(Assume {
                    path,
                    value,
                    reason,
                })
            }
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
        self.primary(x)
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
            Rule::choose_stmt => StmtKind::Choose {
                var: self.ident(it.next().expect("var")),
                from: self.expr(it.next().expect("from")),
                body: self.block(it.next().expect("body")),
            },
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
                        let n = parse_int(x.as_str().trim_end_matches('+'));
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
            Rule::length => ExprKind::Length(parse_length(p.as_str())),
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
            Rule::int => ExprKind::Int(parse_int(p.as_str())),
            Rule::boolean => ExprKind::Bool(p.as_str() == "true"),
            Rule::string => ExprKind::Str(self.string(p).value),
            Rule::plus_int | Rule::signed_atom => {
                let negative = p.as_str().starts_with('-');
                let inner = self.primary(p.into_inner().next().expect("signed body"));
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

/// Integers beyond i64 saturate: the compiler's range checks then report them.
fn parse_int(s: &str) -> i64 {
    s.parse().unwrap_or(i64::MAX)
}

fn parse_length(s: &str) -> i64 {
    let (digits, unit) = s.split_at(s.len() - 2);
    let n = parse_int(digits);
    let per = match unit {
        "in" => LENGTH_PER_INCH,
        "cm" => LENGTH_PER_CM,
        _ => LENGTH_PER_MM,
    };
    n.saturating_mul(per)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> File {
        let p = parse(src);
        assert!(p.errors.is_empty(), "{src}\n{:?}", p.errors);
        p.file
    }

    #[test]
    fn sections_keep_their_printed_numbers_and_spans() {
        let src = "section 7 \"How to Fire\" {\n  rule a \"General\"\n}\n";
        let f = ok(src);
        let ItemKind::Section(s) = &f.items[0].kind else {
            panic!("a section")
        };
        assert_eq!(s.number.as_ref().unwrap().name, "7");
        assert_eq!(&src[s.head.start..s.head.end], "section 7 \"How to Fire\"");
        let ItemKind::Section(r) = &s.body.as_ref().unwrap()[0].kind else {
            panic!("a rule")
        };
        assert_eq!(r.keyword, SectionKeyword::Rule);
    }

    #[test]
    fn modifier_entries_starting_with_a_sign_do_not_run_together() {
        let f = ok("stack m(c: bool) {\n  -1 \"a\" when c\n  +1 \"b\" when c\n}\n");
        let ItemKind::Stack(s) = &f.items[0].kind else {
            panic!("a stack")
        };
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.entries[1].label.value, "b");
    }

    #[test]
    fn negative_range_bounds_belong_to_the_range() {
        let f = ok("stack m() clamp -2..=1 {\n  +1 \"x\"\n}\nresolve r() { result 3 in -2..=1 }\n");
        let ItemKind::Stack(s) = &f.items[0].kind else {
            panic!("a stack")
        };
        let ExprKind::Range { lo: Some(lo), .. } = &s.clamp.as_ref().unwrap().kind else {
            panic!("a range")
        };
        assert_eq!(lo.kind, ExprKind::Int(-2));
    }

    #[test]
    fn references_and_dice_literals() {
        let f = ok("see 6e, 7.a.2, \"Riverine Craft\"\nresolve r() { result 3d6 + d10 }\n");
        let ItemKind::See(refs) = &f.items[0].kind else {
            panic!("a see")
        };
        assert_eq!(
            refs.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(),
            ["6e", "7.a.2", "Riverine Craft"]
        );
        assert!(refs[2].quoted);
    }

    #[test]
    fn item_keywords_are_not_reserved_in_expressions() {
        ok("resolve r(weapon: int, turn: int) { result weapon + turn }\n");
    }

    #[test]
    fn an_error_is_reported_and_the_following_items_are_still_read() {
        let p = parse("kind soldier {\n  fire int\n}\nside us \"US\"\nside nva \"NVA\"\n");
        assert_eq!(p.errors.len(), 1);
        assert!(
            p.file
                .items
                .iter()
                .any(|i| matches!(&i.kind, ItemKind::Side(s) if s.name.name == "nva"))
        );
    }

    #[test]
    fn deep_nesting_fails_cleanly_with_the_figure() {
        let src = format!(
            "resolve r() {{ result {}1{} }}",
            "(".repeat(300),
            ")".repeat(300)
        );
        let p = parse(&src);
        assert!(p.errors[0].message.contains("256"), "{:?}", p.errors);
        let long = format!("resolve r() {{ result {} }}", vec!["1"; 5000].join(" + "));
        let p = parse(&long);
        assert!(
            p.errors[0].message.contains("limit is 2000"),
            "{:?}",
            p.errors
        );
        let nots = format!("resolve r() {{ result {} true }}", "not ".repeat(5000));
        assert!(!parse(&nots).errors.is_empty());
    }

    #[test]
    fn odd_inputs_never_panic() {
        for s in [
            "",
            "{",
            "}",
            "\"",
            "section",
            "?",
            "resolve r(",
            "bands",
            "1..",
            "/*",
            "\u{FEFF}",
            "table t(",
            "a\0b",
        ] {
            let _ = parse(s);
        }
    }

    #[test]
    fn lengths_are_exact_in_tenths_of_a_millimetre() {
        let f = ok("resolve r() { result 3in + 10cm + 5mm }\n");
        let ItemKind::Proc(p) = &f.items[0].kind else {
            panic!("a proc")
        };
        let StmtKind::Result(e) = &p.body.stmts[0].kind else {
            panic!("a result")
        };
        let ExprKind::Binary { lhs, rhs, .. } = &e.kind else {
            panic!("a sum")
        };
        assert_eq!(rhs.kind, ExprKind::Length(50));
        let ExprKind::Binary { lhs: a, rhs: b, .. } = &lhs.kind else {
            panic!("a sum")
        };
        assert_eq!(
            (a.kind.clone(), b.kind.clone()),
            (ExprKind::Length(762), ExprKind::Length(1000))
        );
    }
}
