//! Binding command-line inputs to a procedure: `--set NAME=VALUE` for parameters, `--assume
//! NAME=VALUE` and assumptions files for the book's unknowns. Every refusal says what is
//! expected.

use std::path::Path;

use sandtable_ir::{self as ir, Program, Type};

use crate::interp::Assumptions;
use crate::value::Val;

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
    for (suffix, per) in [("in", 254i64), ("cm", 100), ("mm", 10)] {
        if let Some(n) = t.strip_suffix(suffix) {
            return n.trim().parse::<i64>().ok()?.checked_mul(per);
        }
    }
    t.parse().ok()
}

fn named(program: &Program, text: &str) -> Option<Val> {
    if let Some(i) = program.entities.iter().position(|e| e.name == text) {
        return Some(Val::Entity(i as u32));
    }
    if let Some(i) = program.sides.iter().position(|s| s.name == text) {
        return Some(Val::Side(i as u32));
    }
    None
}

/// A value for something of type `ty` (with an optional inclusive range).
pub fn parse_value(
    program: &Program,
    ty: &Type,
    range: Option<(i64, i64)>,
    text: &str,
) -> Result<Val, String> {
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
            Ok(Val::Int(n))
        }
        Type::Bool => match t {
            "true" | "yes" | "1" => Ok(Val::Bool(true)),
            "false" | "no" | "0" => Ok(Val::Bool(false)),
            _ => Err(format!(
                "expected true or false (bool), found `{t}`; write e.g. `true`"
            )),
        },
        Type::Enum(e) => {
            let en = &program.enums[*e as usize];
            if en.members.iter().any(|m| m == t) {
                Ok(Val::Sym(t.to_string()))
            } else {
                Err(format!(
                    "`{t}` is not a member of `{}`; members: {}",
                    en.name,
                    en.members.join(", ")
                ))
            }
        }
        Type::Side => match program.sides.iter().position(|s| s.name == t) {
            Some(i) => Ok(Val::Side(i as u32)),
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
                Some(i) => Ok(Val::Entity(i as u32)),
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
pub fn parse_any(program: &Program, t: &str) -> Val {
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
        return Val::List(items);
    }
    if let Some(n) = parse_number(t) {
        return Val::Int(n);
    }
    match t {
        "true" => return Val::Bool(true),
        "false" => return Val::Bool(false),
        _ => {}
    }
    named(program, t).unwrap_or_else(|| Val::Sym(t.to_string()))
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
            Val::from_const(d).map_or("?".into(), |v| v.show(program))
        ),
        None => format!("{}: {ty}", p.name),
    }
}

/// Arguments for `proc` from `--set` pairs, defaults filling the rest.
pub fn bind_args(
    program: &Program,
    proc: u32,
    sets: &[(String, String)],
) -> Result<Vec<Val>, String> {
    let p = &program.procs[proc as usize];
    let mut out: Vec<Option<Val>> = vec![None; p.params.len()];
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
        match v {
            Some(v) => args.push(v),
            None => match &p.params[i].default {
                Some(d) => args.push(Val::from_const(d).unwrap_or(Val::Unit)),
                None => {
                    missing.push(describe_param(program, &p.params[i]));
                    args.push(Val::Unit);
                }
            },
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

/// 1-based line and column (in characters) of a byte offset, as editors count them.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Assumptions from `--assume` pairs and assumption files (`assume NAME = value "why"`).
pub fn assumptions(
    program: &Program,
    pairs: &[(String, String)],
    files: &[&Path],
) -> Result<Assumptions, String> {
    let texts = files
        .iter()
        .map(|f| Ok((f.display().to_string(), read_assumptions(f)?)))
        .collect::<Result<Vec<_>, String>>()?;
    assumptions_from(program, pairs, &texts)
}

/// An assumptions file's text, read within the file-size limit.
pub fn read_assumptions(f: &Path) -> Result<String, String> {
    let bytes =
        sandtable_compiler::source::read_limited(f, sandtable_compiler::source::MAX_FILE_BYTES)
            .map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("cannot read {}: not valid UTF-8", f.display()))
}

/// [`assumptions`] from files already read: `(name, text)` pairs (a replay takes them from
/// its log).
pub fn assumptions_from(
    program: &Program,
    pairs: &[(String, String)],
    files: &[(String, String)],
) -> Result<Assumptions, String> {
    let mut a = Assumptions::default();
    let mut put = |name: &str, text: &str, origin: &str| -> Result<(), String> {
        match program.unknowns.iter().position(|u| u.name == name) {
            Some(i) => {
                let v = match &program.unknowns[i].ty {
                    Some(ty) => parse_value(program, ty, None, text)
                        .map_err(|e| format!("{origin}: `{name}`: {e}"))?,
                    None => parse_any(program, text),
                };
                a.values.insert(i as u32, v);
                Ok(())
            }
            None => {
                let close: Vec<&str> = program
                    .unknowns
                    .iter()
                    .map(|u| u.name.as_str())
                    .filter(|n| n.split('.').next() == name.split('.').next())
                    .take(10)
                    .collect();
                Err(format!(
                    "{origin}: `{name}` is not an unknown of {}{}",
                    program.name,
                    if close.is_empty() {
                        String::new()
                    } else {
                        format!("; unknowns with that prefix: {}", close.join(", "))
                    }
                ))
            }
        }
    };
    for (name, text) in files {
        let f = Path::new(name);
        let parsed = sandtable_grammar::parse(text);
        if let Some(e) = parsed.errors.first() {
            let (line, column) = line_column(text, e.span.start);
            return Err(format!(
                "{}:{line}:{column}: error[{}]: {}{}",
                f.display(),
                e.code,
                e.message,
                e.help
                    .as_ref()
                    .map_or(String::new(), |h| format!("\n  help: {h}"))
            ));
        }
        for item in &parsed.file.items {
            match &item.kind {
                sandtable_grammar::ast::ItemKind::Assume(x) => {
                    let src = &text[x.value.span.start..x.value.span.end];
                    put(&x.path.name, src.trim(), &f.display().to_string())?;
                }
                sandtable_grammar::ast::ItemKind::Note(_)
                | sandtable_grammar::ast::ItemKind::Section(_) => {}
                _ => {
                    return Err(format!(
                        "{}: an assumptions file holds only `assume NAME = value \"why\"` lines",
                        f.display()
                    ));
                }
            }
        }
    }
    for (k, v) in pairs {
        put(k, v, "--assume")?;
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(src: &str) -> Program {
        let c = sandtable_compiler::compile_sources(&[("t.sand", src)]);
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
            vec![Val::Int(8 * 254), Val::Int(2)]
        );
        let e = set("dice", "3in").unwrap_err();
        assert!(e.contains("int") && e.contains("`3`"), "{e}");
    }

    #[test]
    fn assume_checks_the_type_of_the_field() {
        let p = program(SRC);
        let pair = |k: &str, v: &str| assumptions(&p, &[(k.into(), v.into())], &[]);
        let e = pair("rifle.shots", "true").unwrap_err();
        assert!(e.contains("int") && e.contains("e.g. `3`"), "{e}");
        let e = pair("rifle.reach", "6").unwrap_err();
        assert!(e.contains("`6in`"), "{e}");
        let e = pair("rifle.veteran", "2").unwrap_err();
        assert!(e.contains("true or false"), "{e}");
        let a = pair("rifle.shots", "2").unwrap();
        assert_eq!(a.values.values().next(), Some(&Val::Int(2)));
        let a = pair("rifle.reach", "6in").unwrap();
        assert_eq!(a.values.values().next(), Some(&Val::Int(6 * 254)));
    }
}
