//! Command-line inputs typed against a compiled program: `--set NAME=VALUE` for a procedure's
//! parameters, `--assume NAME=VALUE` and assumptions files (`assume NAME = value "why"`) for
//! the book's unknowns. The runtime receives typed IR values ([`ir::Supplied`], argument
//! lists) and never reads these texts itself. Every refusal says what is expected; a problem
//! in an assumptions file is a [`Diagnostic`] with its file, line and column, like a problem
//! in a `.sand` file.

use std::path::Path;

use sandtable_grammar::ast;

use crate::diagnostic::{Code, Diagnostic, render};
use crate::ir::{self, Program, Supplied, Type, Value};
use crate::source::{MAX_FILE_BYTES, SourceDb, SourceFile, read_limited};

/// Why supplied values were refused.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// Problems inside assumptions files; `db` holds those files, for rendering.
    Files {
        db: SourceDb,
        diagnostics: Vec<Diagnostic>,
    },
    /// A problem with a command-line value or with reading a file.
    Message(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Files { db, diagnostics } => {
                for d in diagnostics {
                    write!(f, "{}", render::to_plain_string(d, db))?;
                }
                Ok(())
            }
            Refusal::Message(m) => write!(f, "{m}"),
        }
    }
}

impl From<String> for Refusal {
    fn from(m: String) -> Self {
        Refusal::Message(m)
    }
}

/// `NAME=VALUE` → `(NAME, VALUE)`.
pub fn split_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected NAME=VALUE, found `{s}`")),
    }
}

/// The resolution (or other procedure) called `name`.
pub fn find_proc(program: &Program, name: &str) -> Result<u32, String> {
    if let Some((id, _)) = program.proc_by_name(name) {
        return Ok(id);
    }
    let mut names: Vec<&str> = program
        .procs
        .iter()
        .filter(|p| p.kind == ir::ProcKind::Resolve)
        .map(|p| p.name.as_str())
        .collect();
    names.sort_unstable();
    Err(format!(
        "no resolution named `{name}` in {}; resolutions: {}",
        program.name,
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// An integer with no unit: `3`, `-2`.
fn parse_plain(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if parse_number(t).is_some() && t.parse::<i64>().is_err() {
        return Err(format!(
            "expected a whole number (int), found the length `{t}`; write it without a unit, e.g. `3`"
        ));
    }
    t.parse()
        .map_err(|_| format!("expected a whole number (int), found `{t}`; write e.g. `3` or `-1`"))
}

/// A length with its unit: `6in`, `10cm`, `5mm`.
fn parse_length(program: &Program, text: &str) -> Result<i64, String> {
    let t = text.trim();
    let unit = program.length_unit.as_deref().unwrap_or("in");
    match parse_number(t) {
        // A bare `0` is nothing in any unit.
        Some(0) => Ok(0),
        Some(_) if t.parse::<i64>().is_ok() => Err(format!(
            "expected a length, found the plain number `{t}`; give it a unit, e.g. `{t}{unit}`"
        )),
        Some(n) => Ok(n),
        None => Err(format!(
            "expected a length, found `{t}`; write a number with a unit, e.g. `6{unit}`"
        )),
    }
}

/// Parse a length or integer: `3`, `-2`, `6in`, `10cm`, `5mm`.
pub fn parse_number(text: &str) -> Option<i64> {
    let t = text.trim();
    for (suffix, per) in ir::LENGTH_UNITS {
        if let Some(n) = t.strip_suffix(suffix) {
            return n.trim().parse::<i64>().ok()?.checked_mul(per);
        }
    }
    t.parse().ok()
}

fn named(program: &Program, text: &str) -> Option<Value> {
    if let Some(i) = program.entities.iter().position(|e| e.name == text) {
        return Some(Value::Entity(i as u32));
    }
    if let Some(i) = program.sides.iter().position(|s| s.name == text) {
        return Some(Value::Side(i as u32));
    }
    None
}

/// A value for something of type `ty` (with an optional inclusive range).
pub fn parse_value(
    program: &Program,
    ty: &Type,
    range: Option<(i64, i64)>,
    text: &str,
) -> Result<Value, String> {
    let t = text.trim();
    match ty {
        Type::Int | Type::Length => {
            let n = if *ty == Type::Length {
                parse_length(program, t)?
            } else {
                parse_plain(t)?
            };
            if let Some((lo, hi)) = range
                && !(lo..=hi).contains(&n)
            {
                let show = |v: i64| {
                    if *ty == Type::Length {
                        program.show_length(v)
                    } else {
                        v.to_string()
                    }
                };
                return Err(format!(
                    "{} is outside the declared range {}..={}",
                    show(n),
                    show(lo),
                    show(hi)
                ));
            }
            Ok(if *ty == Type::Length {
                Value::Length(n)
            } else {
                Value::Int(n)
            })
        }
        Type::Bool => match t {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!(
                "expected true or false (bool), found `{t}`; write e.g. `true`"
            )),
        },
        Type::Enum(e) => {
            let en = &program.enums[*e as usize];
            if en.members.iter().any(|m| m == t) {
                Ok(Value::Symbol(t.into()))
            } else {
                Err(format!(
                    "`{t}` is not a member of `{}`; members: {}",
                    en.name,
                    en.members.join(", ")
                ))
            }
        }
        Type::Side => match program.sides.iter().position(|s| s.name == t) {
            Some(i) => Ok(Value::Side(i as u32)),
            None => Err(format!(
                "`{t}` is not a side; sides: {}",
                program
                    .sides
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
        Type::Entity(kind) => {
            let candidates: Vec<&ir::EntityDef> = program
                .entities
                .iter()
                .filter(|e| kind.is_none() || e.kind == *kind)
                .collect();
            match program
                .entities
                .iter()
                .position(|e| e.name == t && (kind.is_none() || e.kind == *kind))
            {
                Some(i) => Ok(Value::Entity(i as u32)),
                None => Err(format!(
                    "`{t}` is not a {}; choose one of: {}",
                    kind.map_or("piece".to_string(), |k| format!(
                        "`{}`",
                        program.kinds[k as usize].name
                    )),
                    candidates
                        .iter()
                        .take(40)
                        .map(|e| e.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        _ => Ok(parse_any(program, t)),
    }
}

/// A value of unknown type: number, boolean, piece or side name, else a symbol.
pub fn parse_any(program: &Program, t: &str) -> Value {
    // A list, `[a, 3 * b]`, with counts expanded (an army list, a side order).
    if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        let mut items = Vec::new();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('*') {
                Some((n, x)) if n.trim().parse::<u16>().is_ok() => {
                    let n: u16 = n.trim().parse().unwrap_or(0);
                    let v = parse_any(program, x.trim());
                    items.extend(std::iter::repeat_n(v, usize::from(n.min(1000))));
                }
                _ => items.push(parse_any(program, part)),
            }
        }
        return Value::List(items);
    }
    if let Some(n) = parse_number(t) {
        return Value::Int(n);
    }
    match t {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    named(program, t).unwrap_or_else(|| Value::Symbol(t.into()))
}

/// A constant as the runtime prints it, or `None` when it rests on an unknown.
fn show_const(program: &Program, v: &Value) -> Option<String> {
    let name = |found: Option<&String>| found.cloned().unwrap_or_else(|| "?".into());
    Some(match v {
        Value::Int(n) | Value::Length(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Symbol(s) => s.to_string(),
        Value::Text(s) => format!("{s:?}"),
        Value::Counter(c) => format!("{:?}", program.counter_name(*c)),
        Value::Hex(h) => h.to_string(),
        Value::Kind(k) => name(program.kinds.get(*k as usize).map(|x| &x.name)),
        Value::Side(s) => name(program.sides.get(*s as usize).map(|x| &x.name)),
        Value::Entity(e) => name(program.entities.get(*e as usize).map(|x| &x.name)),
        Value::Die(d) => name(program.dice.get(*d as usize).map(|x| &x.name)),
        Value::Range(lo, hi) => format!(
            "{}..={}",
            lo.map_or(String::new(), |x| x.to_string()),
            hi.map_or(String::new(), |x| x.to_string())
        ),
        Value::LabelRange(lo, hi) => format!(
            "{}..={}",
            lo.clone().unwrap_or_default(),
            hi.clone().unwrap_or_default()
        ),
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|x| show_const(program, x))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Value::Unknown(_) => return None,
    })
}

fn describe_param(program: &Program, p: &ir::Param) -> String {
    let ty = match (&p.ty, p.range) {
        (_, Some((lo, hi))) => format!("{lo}..={hi}"),
        (Type::Int, _) => "int".into(),
        (Type::Length, _) => "length".into(),
        (Type::Bool, _) => "bool".into(),
        (Type::Enum(e), _) => program.enums[*e as usize].members.join("|"),
        (Type::Side, _) => "side".into(),
        (Type::Entity(Some(k)), _) => program.kinds[*k as usize].name.clone(),
        _ => "value".into(),
    };
    match &p.default {
        Some(d) => format!(
            "{}: {ty} (default {})",
            p.name,
            show_const(program, d).unwrap_or_else(|| "?".into())
        ),
        None => format!("{}: {ty}", p.name),
    }
}

/// Arguments for `proc` from `--set` pairs, defaults filling the rest.
pub fn bind_args(
    program: &Program,
    proc: u32,
    sets: &[(String, String)],
) -> Result<Vec<Value>, String> {
    let p = &program.procs[proc as usize];
    let mut out: Vec<Option<Value>> = vec![None; p.params.len()];
    for (k, v) in sets {
        let Some(i) = p.params.iter().position(|x| &x.name == k) else {
            return Err(format!(
                "`{}` has no parameter `{k}`; parameters: {}",
                p.name,
                p.params
                    .iter()
                    .map(|x| describe_param(program, x))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        let val = parse_value(program, &p.params[i].ty, p.params[i].range, v)
            .map_err(|e| format!("--set {k}: {e}"))?;
        out[i] = Some(val);
    }
    let mut missing = Vec::new();
    let mut args = Vec::with_capacity(out.len());
    for (i, v) in out.into_iter().enumerate() {
        match v.or_else(|| p.params[i].default.clone()) {
            Some(v) => args.push(v),
            None => missing.push(describe_param(program, &p.params[i])),
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "`{}` needs values for: {}; give them with --set NAME=VALUE",
            p.name,
            missing.join(", ")
        ));
    }
    Ok(args)
}

/// An assumptions file's text, read within the file-size limit.
pub fn read(f: &Path) -> Result<String, String> {
    let bytes =
        read_limited(f, MAX_FILE_BYTES).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("cannot read {}: not valid UTF-8", f.display()))
}

/// [`supply`] from the files at `paths`.
pub fn supply_paths(
    program: &Program,
    pairs: &[(String, String)],
    paths: &[&Path],
) -> Result<Supplied, Refusal> {
    let files = paths
        .iter()
        .map(|f| Ok((f.display().to_string(), read(f)?)))
        .collect::<Result<Vec<_>, String>>()?;
    supply(program, pairs, &files)
}

/// Why one value for an unknown was refused.
enum Bad {
    NoSuchUnknown { message: String, help: String },
    Value { message: String, help: String },
}

/// The value `text` for the unknown called `name`.
fn one(program: &Program, name: &str, text: &str) -> Result<(ir::UnknownId, Value), Bad> {
    match program.unknowns.iter().position(|u| u.name == name) {
        Some(i) => {
            let u = &program.unknowns[i];
            let v = match &u.ty {
                Some(ty) => parse_value(program, ty, None, text).map_err(|e| Bad::Value {
                    message: format!("`{name}`: {e}"),
                    help: format!(
                        "`{name}` is the `?` at {}:{}:{}; give a value of its type",
                        u.file, u.line, u.column
                    ),
                })?,
                None => parse_any(program, text),
            };
            Ok((i as u32, v))
        }
        None => {
            let close: Vec<&str> = program
                .unknowns
                .iter()
                .map(|u| u.name.as_str())
                .filter(|n| n.split('.').next() == name.split('.').next())
                .take(10)
                .collect();
            Err(Bad::NoSuchUnknown {
                message: format!(
                    "`{name}` is not an unknown of {}{}",
                    program.name,
                    if close.is_empty() {
                        String::new()
                    } else {
                        format!("; unknowns with that prefix: {}", close.join(", "))
                    }
                ),
                help: format!(
                    "`sandtable check {}` lists the book's unknowns by the names to assume",
                    program.name
                ),
            })
        }
    }
}

/// Values for the program's unknowns from assumptions files, given as `(name, text)` pairs
/// (a replay takes them from its log), then `--assume` pairs, later ones winning. Every
/// problem of every file is reported, each at its place.
pub fn supply(
    program: &Program,
    pairs: &[(String, String)],
    files: &[(String, String)],
) -> Result<Supplied, Refusal> {
    let mut supplied = Supplied::default();
    let mut db = SourceDb::default();
    let mut diagnostics = Vec::new();
    for (name, text) in files {
        let file = db.add(SourceFile::new(name.clone(), None, text.clone()));
        let parsed = sandtable_grammar::parse(text);
        for e in &parsed.errors {
            let mut d = Diagnostic::new(e.code, file, e.span, e.message.clone()).label("here");
            if let Some(h) = &e.help {
                d = d.help(h.clone());
            }
            diagnostics.push(d);
        }
        if !parsed.errors.is_empty() {
            continue;
        }
        for item in &parsed.file.items {
            match &item.kind {
                ast::ItemKind::Assume(x) => {
                    let src = &text[x.value.span.start..x.value.span.end];
                    match one(program, &x.path.name, src.trim()) {
                        Ok((id, v)) => {
                            supplied.values.insert(id, v);
                        }
                        Err(Bad::NoSuchUnknown { message, help }) => diagnostics.push(
                            Diagnostic::new(Code::ResolveUnknownName, file, x.path.span, message)
                                .label("no unknown of this name")
                                .help(help),
                        ),
                        Err(Bad::Value { message, help }) => diagnostics.push(
                            Diagnostic::new(Code::TypeMismatch, file, x.value.span, message)
                                .label("this value")
                                .help(help),
                        ),
                    }
                }
                ast::ItemKind::Note(_) | ast::ItemKind::Section(_) => {}
                _ => diagnostics.push(
                    Diagnostic::new(
                        Code::ParseSyntax,
                        file,
                        item.span,
                        "an assumptions file holds only `assume NAME = value \"why\"` lines",
                    )
                    .label("not an assumption")
                    .help(
                        "move this to the ruleset's `.sand` files; here write only `assume` lines",
                    ),
                ),
            }
        }
    }
    if !diagnostics.is_empty() {
        return Err(Refusal::Files { db, diagnostics });
    }
    for (k, v) in pairs {
        match one(program, k, v) {
            Ok((id, v)) => {
                supplied.values.insert(id, v);
            }
            Err(Bad::NoSuchUnknown { message, .. } | Bad::Value { message, .. }) => {
                return Err(Refusal::Message(format!("--assume: {message}")));
            }
        }
    }
    Ok(supplied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(src: &str) -> Program {
        let c = crate::compile_sources(&[("t.sand", src)]);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        c.program
    }

    const SRC: &str = "board table: open { width: 48in, depth: 48in }\n\
        kind trooper { shots: int, reach: length, veteran: bool }\n\
        unit rifle: trooper { shots: ?, reach: ?, veteran: ? }\n\
        resolve r(range: length, dice: int) { result dice }\n";

    #[test]
    fn set_refuses_a_plain_number_for_a_length() {
        let p = program(SRC);
        let (id, _) = p.proc_by_name("r").unwrap();
        let set = |k: &str, v: &str| bind_args(&p, id, &[(k.into(), v.into())]);
        let e = set("range", "8").unwrap_err();
        assert!(e.contains("length") && e.contains("`8in`"), "{e}");
        assert_eq!(
            bind_args(
                &p,
                id,
                &[("range".into(), "8in".into()), ("dice".into(), "2".into())]
            )
            .unwrap(),
            vec![Value::Length(8 * 254), Value::Int(2)]
        );
        let e = set("dice", "3in").unwrap_err();
        assert!(e.contains("int") && e.contains("`3`"), "{e}");
    }

    #[test]
    fn assume_checks_the_type_of_the_field() {
        let p = program(SRC);
        let pair =
            |k: &str, v: &str| supply(&p, &[(k.into(), v.into())], &[]).map_err(|e| e.to_string());
        let e = pair("rifle.shots", "true").unwrap_err();
        assert!(e.contains("int") && e.contains("e.g. `3`"), "{e}");
        let e = pair("rifle.reach", "6").unwrap_err();
        assert!(e.contains("`6in`"), "{e}");
        let e = pair("rifle.veteran", "2").unwrap_err();
        assert!(e.contains("true or false"), "{e}");
        let a = pair("rifle.shots", "2").unwrap();
        assert_eq!(a.values.values().next(), Some(&Value::Int(2)));
        let a = pair("rifle.reach", "6in").unwrap();
        assert_eq!(a.values.values().next(), Some(&Value::Length(6 * 254)));
    }

    /// Every problem of an assumptions file is a diagnostic at its place, with a code and
    /// help, and one bad line does not hide the next.
    #[test]
    fn an_assumptions_file_reports_each_bad_line_at_its_place() {
        let p = program(SRC);
        let text = "assume rifle.shots = true \"typo\"\nassume rifle.range = 6in \"no such\"\n\
            assume rifle.reach = 6in \"fine\"\n";
        let Err(Refusal::Files { db, diagnostics }) =
            supply(&p, &[], &[("my.assume".into(), text.into())])
        else {
            panic!("the file is refused with diagnostics");
        };
        let at: Vec<(&str, (u32, u32))> = diagnostics
            .iter()
            .map(|d| {
                (
                    d.code.as_str(),
                    db.file(d.primary.file).line_col(d.primary.span.start),
                )
            })
            .collect();
        assert_eq!(
            at,
            vec![
                ("sand::type::mismatch", (1, 22)),
                ("sand::resolve::unknown-name", (2, 8))
            ]
        );
        assert!(diagnostics.iter().all(|d| d.help.is_some()));
        let shown = render::to_plain_string(&diagnostics[0], &db);
        assert!(shown.contains("my.assume:1:22"), "{shown}");
        assert!(
            shown.contains("t.sand:3:"),
            "the help points at the `?`: {shown}"
        );
    }
}
