//! `explain`: one sampled resolution told step by step, each step with the rule it cites.

use sandtable_ir::{Cite, Program};

use crate::error::RunError;
use crate::interp::{Assumptions, Ctx, Event, Interp, NoGame};
use crate::rng::Dice;
use crate::value::{Outcome, Val};

pub struct Explained {
    pub outcome: Outcome,
    pub events: Vec<Event>,
    pub draws: u64,
}

pub fn run(
    program: &Program,
    assumptions: &Assumptions,
    proc: u32,
    args: Vec<Val>,
    seed: u64,
) -> Result<Explained, RunError> {
    let interp = Interp::new(program, assumptions);
    let mut dice = Dice::new(seed);
    let mut host = NoGame;
    let mut events = Vec::new();
    let outcome = {
        let mut ctx = Ctx::traced(&mut dice, &mut host, &mut events);
        interp.run(proc, args, &mut ctx)?
    };
    Ok(Explained {
        outcome,
        events,
        draws: dice.draws(),
    })
}

/// "(7.a.3 General fire procedure)"-style citation, or nothing.
pub fn cite(program: &Program, c: &Cite) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !c.refs.is_empty() {
        parts.push(c.refs.join(", "));
    } else if let Some(s) = c.section.and_then(|s| program.sections.get(s as usize)) {
        let label = s.label();
        match &s.title {
            Some(t) if !s.path.is_empty() => parts.push(format!("{label} {t}")),
            _ => parts.push(label),
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

fn signed(n: i64) -> String {
    if n >= 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

/// The narrative, one line per step, indented by call depth.
pub fn render(program: &Program, ex: &Explained) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The procedures entered and not yet left, so a result is shown in its procedure's type.
    let mut procs: Vec<u32> = Vec::new();
    for e in &ex.events {
        let pad = "  ".repeat(depth);
        match e {
            Event::Enter { proc } => {
                let p = &program.procs[*proc as usize];
                if depth > 0 {
                    out.push(format!("{pad}call {}{}", p.name, cite(program, &p.cite)));
                }
                depth += 1;
                procs.push(*proc);
            }
            Event::Exit { .. } => {
                depth = depth.saturating_sub(1);
                procs.pop();
            }
            Event::Roll { die, face } => out.push(format!(
                "{pad}roll {} → {face}",
                program.dice[*die as usize].name
            )),
            Event::Let {
                name,
                value,
                length,
            } => out.push(format!("{pad}{name} = {}", value.show_as(program, *length))),
            Event::Modifier {
                stack,
                entry,
                applied,
                value,
            } => {
                let en = &program.stacks[*stack as usize].entries[*entry];
                if *applied {
                    out.push(format!(
                        "{pad}  {} {}{}",
                        signed(*value),
                        en.label,
                        cite(program, &en.cite)
                    ));
                } else {
                    out.push(format!("{pad}  · {} does not apply", en.label));
                }
            }
            Event::StackTotal { stack, raw, total } => {
                let st = &program.stacks[*stack as usize];
                if raw != total {
                    out.push(format!(
                        "{pad}{} total {} (clamped from {}){}",
                        st.name,
                        signed(*total),
                        signed(*raw),
                        cite(program, &st.cite)
                    ));
                } else {
                    out.push(format!(
                        "{pad}{} total {}{}",
                        st.name,
                        signed(*total),
                        cite(program, &st.cite)
                    ));
                }
            }
            Event::Lookup { table, keys, cell } => {
                let t = &program.tables[*table as usize];
                let k: Vec<String> = keys.iter().map(|k| k.show(program)).collect();
                out.push(format!(
                    "{pad}table {}[{}] → {}{}",
                    t.name,
                    k.join(", "),
                    cell.show(program),
                    cite(program, &t.cite)
                ));
            }
            Event::Band {
                proc,
                value,
                patterns,
                outcome,
                cite: c,
                length,
                ..
            } => {
                let p = &program.procs[*proc as usize];
                let num = |n: i64| {
                    if *length {
                        program.show_length(n)
                    } else {
                        n.to_string()
                    }
                };
                let pats: Vec<String> = patterns.iter().map(|p| pattern(p, &num)).collect();
                let what = outcome.clone().unwrap_or_else(|| "…".into());
                let c = cite(program, c);
                let c = if c.is_empty() {
                    cite(program, &p.cite)
                } else {
                    c
                };
                out.push(format!(
                    "{pad}band for {}: {} → {what}{c}",
                    value.show_as(program, *length),
                    pats.join(" | ")
                ));
            }
            Event::Effect(r) => out.push(format!("{pad}effect: {}", r.show(program))),
            Event::Result(v) => {
                let length = procs
                    .last()
                    .is_some_and(|p| program.procs[*p as usize].result_length);
                out.push(format!("{pad}result {}", v.show_as(program, length)));
            }
            Event::Outcome(o) => {
                out.push(format!("{pad}outcome {o}"));
            }
        }
    }
    out
}

fn pattern(p: &sandtable_ir::KeyPattern, num: &dyn Fn(i64) -> String) -> String {
    use sandtable_ir::KeyPattern as K;
    match p {
        K::Any => "_".into(),
        K::Range(Some(a), Some(b)) if a == b => num(*a),
        K::Range(a, b) => format!(
            "{}..{}",
            a.map_or(String::new(), num),
            b.map_or(String::new(), |x| format!("={}", num(x)))
        ),
        K::Symbol(s) => s.clone(),
        K::Unknown => "?".into(),
    }
}
