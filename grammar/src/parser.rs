//! pest pairs → owned AST. Parsing never panics: it returns the items it could read and one
//! error per region it could not, resynchronising at the next top-level item.

use std::sync::OnceLock;

use pest::Parser;

use pest::pratt_parser::{Assoc, Op, PrattParser};

use crate::ast::*;
use crate::build::{build_item, build_section_head};
use crate::codes::Code;

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
/// Most syntax errors listed for one file; one more error says how many were left out.
pub const MAX_PARSE_ERRORS: usize = 100;

/// The code of an ordinary syntax error.
pub const SYNTAX: Code = Code::ParseSyntax;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ParseError {
    /// A stable diagnostic code (`sand::parse::…`).
    pub code: Code,
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
    parse_counting(src).0
}

/// [`parse`], also returning how many bytes of input pest was handed in all (the work done).
fn parse_counting(src: &str) -> (Parsed, usize) {
    let mut out = Parsed::default();
    if src.len() > MAX_SOURCE_BYTES {
        out.errors.push(ParseError {
            code: Code::ParseTooLarge,
            message: format!(
                "file is {} bytes; the limit is {} bytes",
                src.len(),
                MAX_SOURCE_BYTES
            ),
            span: Span::new(0, 0),
            help: Some("split the ruleset into several files".into()),
        });
        return (out, 0);
    }
    if let Some(err) = nesting_error(src) {
        out.errors.push(err);
        return (out, 0);
    }
    pest::set_call_limit(std::num::NonZeroUsize::new(CALL_LIMIT));
    let mut work = src.len();
    match SandParser::parse(Rule::file, src) {
        Ok(mut pairs) => {
            let file = pairs.next().expect("file rule always yields one pair");
            for p in file.into_inner() {
                if p.as_rule() == Rule::item {
                    out.file.items.push(build_item(p, 0, &mut out.errors));
                }
            }
        }
        Err(_) => work += parse_with_recovery(src, &mut out),
    }
    cap_errors(&mut out.errors);
    (out, work)
}

/// Keeps the first [`MAX_PARSE_ERRORS`] errors and replaces the rest with one that counts them.
fn cap_errors(errors: &mut Vec<ParseError>) {
    if errors.len() <= MAX_PARSE_ERRORS {
        return;
    }
    let more = errors.len() - MAX_PARSE_ERRORS;
    let first_hidden = errors[MAX_PARSE_ERRORS].span;
    errors.truncate(MAX_PARSE_ERRORS);
    errors.push(ParseError {
        code: Code::ParseTooManyErrors,
        message: format!(
            "{more} more syntax error{} from here on are not shown",
            if more == 1 { "" } else { "s" }
        ),
        span: first_hidden,
        help: Some(format!(
            "only the first {MAX_PARSE_ERRORS} syntax errors of a file are listed; fix those and check again"
        )),
    });
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
                        code: Code::ParseTooDeep,
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

/// Reads one item at a time. A failed item is reported and skipped up to the next line that
/// begins an item; a section whose heading reads is entered instead, so the items beside the
/// error inside it are kept.
fn parse_with_recovery(src: &str, out: &mut Parsed) -> usize {
    let mut r = Recovery {
        src,
        last_comment_close: src.rfind("*/"),
        errors: std::mem::take(&mut out.errors),
        broken: Vec::new(),
        pest_bytes: 0,
        pending_closes: 0,
    };
    let (items, _) = r.items(0, None);
    out.file.items = items;
    out.file.broken = r.broken;
    out.errors = r.errors;
    r.pest_bytes
}

struct Recovery<'s> {
    src: &'s str,
    /// Where the last `*/` of the file starts: a `/*` after it is never closed.
    last_comment_close: Option<usize>,
    errors: Vec<ParseError>,
    broken: Vec<Ident>,
    /// Bytes of input handed to pest, summed over every attempt: recovery must stay linear in
    /// the size of the file, and the tests check it through this figure.
    pest_bytes: usize,
    /// `}` left over from items skipped after an error: they close blocks of the skipped text
    /// and are not stray.
    pending_closes: usize,
}

impl Recovery<'_> {
    /// Items from `pos` up to the end of the file, or up to the `}` closing the section body
    /// opened at `open` (its heading's span). Returns the items and the position after them.
    fn items(&mut self, mut pos: usize, open: Option<Span>) -> (Vec<Item>, usize) {
        let src = self.src;
        let mut items = Vec::new();
        let errors_before = self.errors.len();
        loop {
            pos = self.skip_trivia(pos, open.is_some());
            if pos >= src.len() {
                if let Some(head) = open
                    && self.errors.len() == errors_before
                {
                    self.errors.push(ParseError {
                        code: SYNTAX,
                        message: "this section is never closed".into(),
                        span: head,
                        help: Some("add the `}` that ends its body".into()),
                    });
                }
                return (items, pos);
            }
            if src[pos..].starts_with('}') {
                if self.pending_closes > 0 {
                    self.pending_closes -= 1;
                } else if open.is_some() {
                    return (items, pos + 1);
                } else {
                    self.errors.push(ParseError {
                        code: Code::ParseUnmatchedBrace,
                        message: "this `}` closes nothing".into(),
                        span: Span::new(pos, pos + 1),
                        help: Some(
                            "remove it, or add the `{` it was meant to close; the items after it are still read"
                                .into(),
                        ),
                    });
                }
                pos += 1;
                continue;
            }
            pos = self.item(pos, open.is_some(), &mut items);
        }
    }

    /// Reads the item at `pos` (or recovers from it); returns where the next one may start.
    fn item(&mut self, pos: usize, nested: bool, items: &mut Vec<Item>) -> usize {
        let src = self.src;
        // A section is read item by item as soon as its heading reads, never whole first:
        // tried whole, a section holding an error would be read again item by item, and so
        // would each section nested in it, so pest's work grew with the depth of sections
        // times the size of the file.
        if let Some(next) = self.section(pos, window_end(src, pos, 1), items) {
            return next;
        }
        let mut min_len = 1;
        loop {
            let end = window_end(src, pos, min_len);
            let window = &src[pos..end];
            self.pest_bytes += window.len();
            match SandParser::parse(Rule::lone_item, window) {
                Ok(mut pairs) => {
                    let lone = pairs.next().expect("lone_item yields one pair");
                    let item = lone.into_inner().next().expect("lone_item holds an item");
                    let item_end = pos + item.as_span().end();
                    items.push(build_item(item, pos, &mut self.errors));
                    return item_end;
                }
                Err(e) => {
                    let failed_at = pos + error_offset(&e);
                    // An item cut by the window fails where the window ends: read more of it.
                    if end < src.len() && skip_trivia(src, failed_at).0 >= end {
                        min_len = 2 * (end - pos);
                        continue;
                    }
                    if let Some((open, next)) =
                        unclosed_before_sibling(src, pos, failed_at, self.last_comment_close)
                    {
                        let line = src[..next].matches('\n').count() + 1;
                        self.errors.push(ParseError {
                            code: Code::ParseUnmatchedBrace,
                            message: "this `{` is never closed".into(),
                            span: Span::new(open, open + 1),
                            help: Some(format!(
                                "add the `}}` that ends it before line {line}, where the next item begins; the items from there on are still read"
                            )),
                        });
                        if let Some(name) = defined_name(src, pos) {
                            self.broken.push(name);
                        }
                        return next;
                    }
                    self.errors
                        .push(convert_error(&e, src, pos, self.last_comment_close));
                    if let Some(name) = defined_name(src, pos) {
                        self.broken.push(name);
                    }
                    let (next, open_braces) =
                        resync(src, pos, failed_at, nested, self.last_comment_close);
                    self.pending_closes += open_braces;
                    return next.max(pos + 1);
                }
            }
        }
    }

    /// A section whose heading reads but whose body does not: its items are read one by one.
    fn section(&mut self, pos: usize, end: usize, items: &mut Vec<Item>) -> Option<usize> {
        let window = &self.src[pos..end];
        let head = match SandParser::parse(Rule::section_head, window) {
            Ok(mut pairs) => pairs.next().expect("section_head yields one pair"),
            Err(e) => {
                // pest reads up to the token it fails at (and the line it is on, for the
                // error's position).
                self.pest_bytes += window.len().min(line_end(window, error_offset(&e)));
                return None;
            }
        };
        self.pest_bytes += head.as_span().end();
        let body_start = pos + head.as_span().end();
        let mut section = build_section_head(head, pos, &mut self.errors);
        let pending = std::mem::take(&mut self.pending_closes);
        let (body, next) = self.items(body_start, Some(section.head));
        self.pending_closes = pending;
        section.body = Some(body);
        items.push(Item {
            kind: ItemKind::Section(section),
            span: Span::new(pos, next),
        });
        Some(next)
    }

    /// Whitespace and comments; an unclosed `/*` is reported and reading goes on at the next
    /// line that begins an item, so the rest of the file is still checked.
    fn skip_trivia(&mut self, pos: usize, nested: bool) -> usize {
        let (next, unclosed) = skip_trivia(self.src, pos);
        let Some(at) = unclosed else {
            return next;
        };
        self.errors.push(ParseError {
            code: Code::ParseUnterminatedComment,
            message: "this `/*` comment is never closed".into(),
            span: Span::new(at, at + 2),
            help: Some(
                "close it with `*/`; until then everything after it would be a comment".into(),
            ),
        });
        let (next, open_braces) = resync(self.src, at, at + 2, nested, self.last_comment_close);
        self.pending_closes += open_braces;
        next
    }
}

/// The name an item that failed to parse was going to define (`action fire(` → `fire`), so
/// later uses of it are not reported as missing on top of the syntax error.
fn defined_name(src: &str, pos: usize) -> Option<Ident> {
    let rest = &src[pos..];
    let kw = ITEM_STARTS.iter().find(|kw| {
        !NOT_DEFINING.contains(kw)
            && rest.starts_with(*kw)
            && rest[kw.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == ' ' || c == '\t')
    })?;
    let after = pos + kw.len();
    let start = after + (src[after..].len() - src[after..].trim_start_matches([' ', '\t']).len());
    let len = src[start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(src.len() - start);
    let name = &src[start..start + len];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some(Ident {
        name: name.to_string(),
        span: Span::new(start, start + len),
    })
}

/// End of the text pest is given for the item at `pos`: the first line at least `min_len`
/// bytes on that begins an item, or the end of the file. pest's error path scans its whole
/// input (to find the line of the error), so handing it the rest of the file at each error
/// would make recovery quadratic.
fn window_end(src: &str, pos: usize, min_len: usize) -> usize {
    let bytes = src.as_bytes();
    let mut i = pos.saturating_add(min_len);
    loop {
        let Some(nl) = bytes
            .get(i..)
            .and_then(|b| b.iter().position(|&c| c == b'\n'))
        else {
            return src.len();
        };
        i += nl + 1;
        let indent = bytes[i..]
            .iter()
            .take_while(|c| **c == b' ' || **c == b'\t')
            .count();
        if starts_item(&src[i + indent..]) {
            return i;
        }
    }
}

/// Where the line holding `at` ends (its newline, or the end of the text).
fn line_end(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| rest.find('\n'))
        .map_or(text.len(), |n| at + n)
}

/// Indentation (spaces and tabs) of the line `pos` is on, when only indentation precedes it.
fn indent_at(src: &str, pos: usize) -> Option<usize> {
    let line_start = src[..pos].rfind('\n').map_or(0, |n| n + 1);
    let lead = &src[line_start..pos];
    lead.bytes()
        .all(|c| c == b' ' || c == b'\t')
        .then_some(lead.len())
}

/// An item that failed at `failed_at` because a `}` of it is missing: a line before the
/// failure begins an item no deeper than this one while one of its `{` is still open, in a
/// text that indents bodies. Returns the `{` to blame and where the line's item starts, so the
/// sibling is read rather than lost inside the broken item. The `{` blamed is the first one
/// that a `}` at a shallower indentation passed over (`bands … {` whose arms end at the
/// resolution's own `}`), else the innermost still open.
fn unclosed_before_sibling(
    src: &str,
    pos: usize,
    failed_at: usize,
    last_comment_close: Option<usize>,
) -> Option<(usize, usize)> {
    let own = indent_at(src, pos)?;
    // The body must be indented deeper than the item, or indentation says nothing.
    let first_nl = pos + src[pos..].find('\n')?;
    let body_line = src[first_nl + 1..]
        .split_inclusive('\n')
        .scan(first_nl + 1, |at, l| {
            let start = *at;
            *at += l.len();
            Some((start, l))
        })
        .find(|(_, l)| !l.trim().is_empty())?;
    let body_indent = body_line.1.len() - body_line.1.trim_start_matches([' ', '\t']).len();
    if body_indent <= own || body_line.0 >= failed_at {
        return None;
    }
    let bytes = src.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    // Open `{` with the indentation of their lines, and the first passed over.
    let mut indented: Vec<(usize, usize)> = Vec::new();
    let mut blamed: Option<usize> = None;
    let mut i = pos;
    let mut line_start = false;
    while i < failed_at.min(bytes.len()) {
        let c = bytes[i];
        if line_start && c != b' ' && c != b'\t' && c != b'\n' && c != b'\r' {
            line_start = false;
            let indent = i - src[..i].rfind('\n').map_or(0, |n| n + 1);
            if let Some(&brace) = open.last()
                && indent <= own
                && starts_item(&src[i..])
            {
                return Some((blamed.unwrap_or(brace), i));
            }
        }
        if let Some(next) = skip_literal(src, i, last_comment_close) {
            i = next;
            continue;
        }
        match c {
            b'\n' => line_start = true,
            b'{' => {
                open.push(i);
                indented.push((i, indent_of_line(src, i)));
            }
            b'}' => {
                open.pop();
                let here = indent_at(src, i);
                while let Some(&(b, ind)) = indented.last() {
                    match here {
                        Some(h) if ind > h => {
                            blamed.get_or_insert(b);
                            indented.pop();
                        }
                        _ => break,
                    }
                }
                indented.pop();
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Indentation of the line `pos` is on.
fn indent_of_line(src: &str, pos: usize) -> usize {
    let line_start = src[..pos].rfind('\n').map_or(0, |n| n + 1);
    src[line_start..pos].len() - src[line_start..pos].trim_start_matches([' ', '\t']).len()
}

/// Skips whitespace and comments; also returns where an unclosed `/*` starts, if one does.
fn skip_trivia(src: &str, mut pos: usize) -> (usize, Option<usize>) {
    let bytes = src.as_bytes();
    loop {
        while pos < bytes.len() && (bytes[pos] as char).is_ascii_whitespace() {
            pos += 1;
        }
        if src[pos..].starts_with("//") {
            pos = src[pos..].find('\n').map_or(src.len(), |n| pos + n);
        } else if src[pos..].starts_with("/*") {
            match src[pos + 2..].find("*/") {
                Some(n) => pos = pos + 2 + n + 2,
                None => return (pos, Some(pos)),
            }
        } else if src[pos..].starts_with('\u{FEFF}') {
            pos += '\u{FEFF}'.len_utf8();
        } else {
            return (pos, None);
        }
    }
}

/// Item keywords that do not introduce a name of their own (everything else in `ITEM_STARTS`
/// defines the name that follows it).
const NOT_DEFINING: &[&str] = &[
    "ruleset", "import", "section", "chapter", "rule", "turn", "note", "see", "assume",
];

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
    "policy",
];

/// The next place to try after an error, and how many `{` the skipped text leaves open: the
/// first line after the error that begins an item (at any depth, so the rest of a block is
/// still read), or, inside a section, a `}` that closes the section.
fn resync(
    src: &str,
    item_start: usize,
    failed_at: usize,
    nested: bool,
    last_comment_close: Option<usize>,
) -> (usize, usize) {
    let mut line_start = true;
    let mut depth = 0usize;
    let bytes = src.as_bytes();
    let mut i = item_start;
    while i < bytes.len() {
        let c = bytes[i];
        if line_start && !c.is_ascii_whitespace() {
            line_start = false;
            if i > failed_at.max(item_start) && starts_item(&src[i..]) {
                return (i, depth);
            }
        }
        if let Some(next) = skip_literal(src, i, last_comment_close) {
            i = next;
            continue;
        }
        match c {
            b'\n' => line_start = true,
            b'{' => depth += 1,
            // At the top level such a `}` belongs to the broken item (its `{` is what is
            // missing); inside a section it may be the section's own end.
            b'}' if depth == 0 && nested && i > failed_at => return (i, 0),
            b'}' if depth == 0 => {}
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    (src.len(), 0)
}

/// Where the recovery scanners go on when `i` starts a string or a comment: past it, or at
/// the newline that ends an unterminated string (a string ends at its line here, so one stray
/// quote cannot hide the rest of the file from recovery). `None` when `i` starts neither.
/// A `/*` counts only when a `*/` follows somewhere (`last_comment_close`).
fn skip_literal(src: &str, i: usize, last_comment_close: Option<usize>) -> Option<usize> {
    let bytes = src.as_bytes();
    match bytes[i] {
        b'"' => {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' && bytes[j] != b'\n' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            Some(if j < bytes.len() && bytes[j] == b'\n' {
                j
            } else {
                j + 1
            })
        }
        b'/' if src[i..].starts_with("//") => {
            Some(src[i..].find('\n').map_or(src.len(), |n| i + n))
        }
        b'/' if src[i..].starts_with("/*") && last_comment_close.is_some_and(|c| c >= i + 2) => {
            Some(src[i + 2..].find("*/").map_or(src.len(), |n| i + 2 + n + 2))
        }
        _ => None,
    }
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

fn convert_error(
    e: &pest::error::Error<Rule>,
    src: &str,
    base: usize,
    last_comment_close: Option<usize>,
) -> ParseError {
    let at = base + error_offset(e);
    if src[at.min(src.len())..].starts_with("/*") && last_comment_close.is_none_or(|c| c < at + 2) {
        return ParseError {
            code: Code::ParseUnterminatedComment,
            message: "this `/*` comment is never closed".into(),
            span: Span::new(at, at + 2),
            help: Some(
                "close it with `*/`; until then everything after it would be a comment".into(),
            ),
        };
    }
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
        code: SYNTAX,
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
        Rule::assume_eq => "`=`",
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
    if found.starts_with('#') {
        return "`#` cannot appear in a name: names hold letters, digits and `_`; unknowns that share a name are numbered `NAME_2`, `NAME_3`, …".into();
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
    fn a_source_of_exactly_the_byte_limit_parses_and_one_byte_more_is_refused() {
        let line = format!("// {}\n", "x".repeat(1021));
        let mut src = line.repeat(MAX_SOURCE_BYTES / line.len());
        src.push_str(&" ".repeat(MAX_SOURCE_BYTES - src.len()));
        assert_eq!(src.len(), MAX_SOURCE_BYTES);
        assert!(parse(&src).errors.is_empty());
        src.push(' ');
        let p = parse(&src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseTooLarge);
        assert!(p.errors[0].message.contains("the limit is 8388608 bytes"));
    }

    #[test]
    fn an_expression_of_exactly_the_token_limit_parses_and_one_token_more_is_refused() {
        // `-1 + 1 + …` with 1,000 operands: the sign, 1,000 operands and 999 operators.
        let at = format!("resolve r() {{ result -{} }}", vec!["1"; 1000].join(" + "));
        assert!(parse(&at).errors.is_empty(), "{:?}", parse(&at).errors);
        // One operand and one operator more, no sign: 2,001.
        let past = format!("resolve r() {{ result {} }}", vec!["1"; 1001].join(" + "));
        let p = parse(&past);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseTooLong);
        assert!(
            p.errors[0]
                .message
                .contains("has 2001 operands and operators; the limit is 2000"),
            "{:?}",
            p.errors
        );
    }

    #[test]
    fn brackets_nested_exactly_to_the_limit_parse_and_one_deeper_are_refused() {
        // The resolution's `{` is the first level.
        let nested = |n: usize| {
            format!(
                "resolve r() {{ result {}1{} }}",
                "(".repeat(n),
                ")".repeat(n)
            )
        };
        let at = nested(MAX_NESTING - 1);
        assert!(parse(&at).errors.is_empty(), "{:?}", parse(&at).errors);
        let p = parse(&nested(MAX_NESTING));
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseTooDeep);
        assert_eq!(p.errors[0].message, "brackets nested more than 256 deep");
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

    fn side_names(f: &File) -> Vec<&str> {
        let mut out = Vec::new();
        fn walk<'a>(items: &'a [Item], out: &mut Vec<&'a str>) {
            for i in items {
                match &i.kind {
                    ItemKind::Side(s) => out.push(s.name.name.as_str()),
                    ItemKind::Proc(p) => out.push(p.name.name.as_str()),
                    ItemKind::Section(s) => walk(s.body.as_deref().unwrap_or_default(), out),
                    _ => {}
                }
            }
        }
        walk(&f.items, &mut out);
        out
    }

    #[test]
    fn an_unclosed_comment_at_the_start_is_an_error_and_the_items_after_it_are_read() {
        let p = parse("/* setup\nside us \"US\"\nresolve r() { result 1 }\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseUnterminatedComment);
        assert_eq!(p.errors[0].span, Span::new(0, 2));
        assert_eq!(side_names(&p.file), ["us", "r"]);
    }

    #[test]
    fn an_unclosed_comment_inside_an_item_is_named() {
        let p = parse("side us \"US\"\nresolve r() { /* half\n result 1 }\nside nva\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseUnterminatedComment);
        assert_eq!(side_names(&p.file), ["us", "nva"]);
    }

    #[test]
    fn a_stray_closing_brace_is_an_error_and_the_items_after_it_are_read() {
        let src = "side us \"US\"\n}\nresolve r() { result 1 }\n";
        let p = parse(src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseUnmatchedBrace);
        assert_eq!(p.errors[0].span, Span::new(13, 14));
        assert_eq!(side_names(&p.file), ["us", "r"]);
        let p = parse("}\nside us\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(side_names(&p.file), ["us"]);
    }

    #[test]
    fn an_error_inside_a_section_keeps_the_items_beside_it() {
        let src = "section 4 \"Actions\" {\n  action move(u: unit) { require true }\n  action fire(u: unit) { require u >> 3 }\n  action rally(u: unit) { require true }\n}\nside us\n";
        let p = parse(src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(side_names(&p.file), ["move", "rally", "us"]);
        let ItemKind::Section(s) = &p.file.items[0].kind else {
            panic!("a section")
        };
        assert_eq!(s.number.as_ref().unwrap().name, "4");
        assert_eq!(
            p.file
                .broken
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>(),
            ["fire"]
        );
    }

    #[test]
    fn a_missing_brace_inside_a_section_keeps_the_next_sibling() {
        let src = "section 4 \"Actions\" {\n  action move(s: soldier) {\n    require s.moves > 0\n  action fire(s: soldier) {\n    require s.moves > 1\n  }\n  action rally(s: soldier) {\n    require true\n  }\n}\nside us\n";
        let p = parse(src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseUnmatchedBrace);
        assert_eq!(p.errors[0].message, "this `{` is never closed");
        // The `{` of `move`, on line 2.
        assert_eq!(p.errors[0].span.start, src.find("soldier) {").unwrap() + 9);
        assert!(p.errors[0].help.as_ref().unwrap().contains("before line 4"));
        assert_eq!(side_names(&p.file), ["fire", "rally", "us"]);
        let broken: Vec<&str> = p.file.broken.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(broken, ["move"]);
        // Without indentation there is nothing to tell a sibling from a nested item by.
        let flat: String = src
            .lines()
            .map(|l| format!("{}\n", l.trim_start()))
            .collect();
        let p = parse(&flat);
        assert!(!p.errors.is_empty());
        assert!(
            p.errors.iter().all(|e| e.code != Code::ParseUnmatchedBrace),
            "{:?}",
            p.errors
        );
    }

    #[test]
    fn an_unclosed_section_is_reported_at_its_heading() {
        let p = parse("section 4 \"Actions\" {\n  side us\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].message, "this section is never closed");
        assert_eq!(side_names(&p.file), ["us"]);
    }

    #[test]
    fn recovery_from_many_errors_is_linear_and_the_list_is_capped() {
        // Each line is an item with an error; before, pest was handed the rest of the file at
        // each of them (and scanned it), quadratic in the number of errors.
        let lines = 20_000;
        let src = "side us \"US\"\nkind k { a int }\n".repeat(lines / 2);
        let (p, work) = parse_counting(&src);
        assert!(
            work <= 8 * src.len(),
            "pest was handed {work} bytes for a {}-byte file",
            src.len()
        );
        assert_eq!(p.errors.len(), MAX_PARSE_ERRORS + 1);
        let last = p.errors.last().unwrap();
        assert_eq!(last.code, Code::ParseTooManyErrors);
        assert!(
            last.message.starts_with(&format!(
                "{} more syntax errors",
                lines / 2 - MAX_PARSE_ERRORS
            )),
            "{}",
            last.message
        );
        assert_eq!(side_names(&p.file).len(), lines / 2);
    }

    #[test]
    fn unclosed_config_blocks_nested_deep_stay_within_the_call_limit() {
        // Found by fuzzing (`parse`, 2026-12-04): every unclosed `turn {` / `force us {` was
        // tried as a config item and again as a nested block, so the work doubled per level
        // and 30 levels spent pest's whole call limit several times (34 s in release).
        let mut src = String::from("scenario s \"S\" {\n");
        for _ in 0..40 {
            src += "  turn {\n      force us {\n";
        }
        src += "        units: a, b\n";
        let p = parse(&src);
        assert!(!p.errors.is_empty());
        assert!(
            p.errors.iter().all(|e| !e.message.contains("call limit")),
            "{:?}",
            p.errors
        );
    }

    #[test]
    fn recovery_in_nested_sections_stays_linear() {
        // A section holding an error was read whole, then item by item, and so was each
        // section nested in it: pest's work grew with the depth of sections times the size of
        // the file (fuzzed inputs of 4 KB took 15 times their size).
        let depth = 200;
        let mut src = String::new();
        for i in 0..depth {
            src += &format!("{}section {} {{\n", "  ".repeat(i), i + 1);
            src += &format!("{}side s{i}\n", "  ".repeat(i + 1));
        }
        src += "kind k { a int }\n";
        for i in (0..depth).rev() {
            src += &format!("{}}}\n", "  ".repeat(i));
        }
        let (p, work) = parse_counting(&src);
        assert!(
            work <= 8 * src.len(),
            "pest was handed {work} bytes for a {}-byte file",
            src.len()
        );
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(side_names(&p.file).len(), depth);
    }

    #[test]
    fn a_large_item_after_an_error_is_read_whole() {
        // The window pest sees grows until the item fits.
        let body = "  rule a { note \"x\" }\n".repeat(500);
        let src = format!("kind k {{ a int }}\nsection 1 {{\n{body}}}\nside us\n");
        let p = parse(&src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(side_names(&p.file), ["us"]);
        let ItemKind::Section(s) = &p.file.items[0].kind else {
            panic!("a section, got {:?}", p.file.items[0].kind)
        };
        assert_eq!(s.body.as_ref().unwrap().len(), 500);
    }

    #[test]
    fn integer_literals_beyond_64_bits_are_errors_with_their_position() {
        let src = "resolve r() { result 99999999999999999999 }\n";
        let p = parse(src);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].code, Code::ParseNumberTooLarge);
        assert_eq!(
            &src[p.errors[0].span.start..p.errors[0].span.end],
            "99999999999999999999"
        );
        let p = parse("kind k { r: 0..=9999999999999999999in }\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert!(p.errors[0].message.contains("length"), "{:?}", p.errors);
        let p = parse("resolve r() { bands d6 { 99999999999999999999+ => a } }\n");
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        // The smallest integer is written with its sign and still fits.
        let f = ok("stack m() clamp -9223372036854775808..=0 {\n  +1 \"x\"\n}\n");
        assert_eq!(f.items.len(), 1);
    }
}
