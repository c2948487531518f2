//! pest pairs → owned AST. Parsing never panics: it returns the items it could read and one
//! error per region it could not, resynchronising at the next top-level item.

use std::sync::OnceLock;

use pest::Parser;

use pest::pratt_parser::{Assoc, Op, PrattParser};

use crate::ast::*;
use crate::build::build_item;

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

pub(crate) fn pratt() -> &'static PrattParser<Rule> {
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
