//! Runtime values and outcomes. Lengths are plain integers (tenths of a millimetre) here:
//! the compiler has already checked units.

use std::fmt;

use sandtable_ir::{self as ir, Program};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Val {
    Int(i64),
    Bool(bool),
    Sym(ir::Str),
    Text(ir::Str),
    Side(u32),
    Entity(u32),
    Die(u32),
    Range(Option<i64>, Option<i64>),
    /// Labels from one to another, such as hex columns `M..=U`.
    /// Boxed: rare, and two texts inline would make every value larger.
    LabelRange(Box<(Option<String>, Option<String>)>),
    List(Vec<Val>),
    /// Dice results in the order rolled.
    Pool(Vec<i64>),
    /// A counter the rules keep, by its id in the program's `counters`.
    Counter(ir::CounterId),
    /// A kind of piece a rule names (`is(p, soldier)`).
    Kind(ir::KindId),
    /// A piece on the table during a game (an instance of a unit, weapon or marker entity).
    Piece(u32),
    /// A hex of a game's board; equal to the symbol of its printed label (`S11`).
    Hex(crate::board::HexCoord),
    /// A point of an open table; equal to the list `[x, y]` of its coordinates (tenths of a
    /// millimetre), which is how it is shown. Held inline: the engine makes thousands a
    /// decision while it lists moves.
    Point(crate::board::Point),
    Unit,
}

impl Val {
    /// Equality as the rules see it: a board hex equals the symbol of its label.
    pub fn same(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Hex(h), Val::Sym(s)) | (Val::Sym(s), Val::Hex(h)) => {
                crate::board::HexCoord::parse(s) == Ok(*h)
            }
            (Val::Point(p), Val::List(l)) | (Val::List(l), Val::Point(p)) => {
                matches!(l.as_slice(), [Val::Int(x), Val::Int(y)] if *x == p.x() && *y == p.y())
            }
            (Val::List(a), Val::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            _ => self == other,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Val::Int(n) => Some(*n),
            Val::Bool(b) => Some(i64::from(*b)),
            Val::Pool(v) => Some(v.iter().sum()),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Render for people, with names from the program.
    pub fn show(&self, p: &Program) -> String {
        match self {
            Val::Int(n) => n.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Sym(s) => s.to_string(),
            Val::Text(s) => format!("{s:?}"),
            Val::Side(s) => p
                .sides
                .get(*s as usize)
                .map_or("?".into(), |x| x.name.clone()),
            Val::Entity(e) => p
                .entities
                .get(*e as usize)
                .map_or("?".into(), |x| x.name.clone()),
            Val::Die(d) => p
                .dice
                .get(*d as usize)
                .map_or("?".into(), |x| x.name.clone()),
            Val::Range(lo, hi) => format!(
                "{}..={}",
                lo.map_or(String::new(), |x| x.to_string()),
                hi.map_or(String::new(), |x| x.to_string())
            ),
            Val::LabelRange(r) => format!(
                "{}..={}",
                r.0.clone().unwrap_or_default(),
                r.1.clone().unwrap_or_default()
            ),
            Val::List(v) => format!(
                "[{}]",
                v.iter().map(|x| x.show(p)).collect::<Vec<_>>().join(", ")
            ),
            Val::Pool(v) => format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Val::Counter(c) => format!("{:?}", p.counter_name(*c)),
            Val::Kind(k) => p
                .kinds
                .get(*k as usize)
                .map_or("?".into(), |x| x.name.clone()),
            Val::Piece(n) => format!("piece #{n}"),
            Val::Hex(h) => h.to_string(),
            Val::Point(p) => format!("[{}, {}]", p.x(), p.y()),
            Val::Unit => "()".into(),
        }
    }

    /// Render a value of type `ty`: lengths in the ruleset's unit (at run time they are
    /// plain integers, so only the type says which integers are lengths).
    pub fn show_typed(&self, p: &Program, ty: &ir::Type) -> String {
        match (self, ty) {
            (Val::Int(n), ir::Type::Length) => p.show_length(*n),
            (Val::List(v), ir::Type::List(t)) => format!(
                "[{}]",
                v.iter()
                    .map(|x| x.show_typed(p, t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => self.show(p),
        }
    }

    /// [`Val::show`], or as a length when `length` says it is one.
    pub fn show_as(&self, p: &Program, length: bool) -> String {
        if length {
            self.show_typed(p, &ir::Type::Length)
        } else {
            self.show(p)
        }
    }

    /// A constant from the IR (unknowns are resolved by the caller).
    pub fn from_const(v: &ir::Value) -> Option<Val> {
        Some(match v {
            ir::Value::Int(n) | ir::Value::Length(n) => Val::Int(*n),
            ir::Value::Bool(b) => Val::Bool(*b),
            ir::Value::Text(s) => Val::Text(s.clone()),
            ir::Value::Symbol(s) => Val::Sym(s.clone()),
            ir::Value::Side(s) => Val::Side(*s),
            ir::Value::Entity(e) => Val::Entity(*e),
            ir::Value::Die(d) => Val::Die(*d),
            ir::Value::Counter(c) => Val::Counter(*c),
            ir::Value::Kind(k) => Val::Kind(*k),
            // The compiler reads only labels the engine's grid can hold.
            ir::Value::Hex(h) => Val::Hex(crate::board::HexCoord::new(h.column, h.row).ok()?),
            ir::Value::Range(a, b) => Val::Range(*a, *b),
            ir::Value::LabelRange(a, b) => Val::LabelRange(Box::new((a.clone(), b.clone()))),
            ir::Value::List(items) => {
                Val::List(items.iter().map(Val::from_const).collect::<Option<_>>()?)
            }
            ir::Value::Unknown(_) => return None,
        })
    }
}

/// What a resolution comes to: a named outcome, a value, or only effects.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum OutcomeKey {
    Named(ir::Str),
    Value(Val),
    Effects(Vec<String>),
    Nothing,
}

impl OutcomeKey {
    /// The outcome a result value stands for: a name (an outcome supplied for a `?`, a table
    /// cell) is a named outcome, anything else a value.
    pub fn of_value(v: Val) -> OutcomeKey {
        match v {
            Val::Sym(s) => OutcomeKey::Named(s),
            v => OutcomeKey::Value(v),
        }
    }

    pub fn show(&self, p: &Program) -> String {
        match self {
            OutcomeKey::Named(n) => n.to_string(),
            OutcomeKey::Value(v) => v.show(p),
            OutcomeKey::Effects(e) => e.join("; "),
            OutcomeKey::Nothing => "(no result)".into(),
        }
    }
    /// [`OutcomeKey::show`] for an outcome of procedure `proc`: its values are lengths when
    /// every result of the procedure is one.
    pub fn show_of(&self, p: &Program, proc: u32) -> String {
        match self {
            OutcomeKey::Value(v) => v.show_as(
                p,
                p.procs.get(proc as usize).is_some_and(|d| d.result_length),
            ),
            _ => self.show(p),
        }
    }
    pub fn numeric(&self) -> Option<i64> {
        match self {
            OutcomeKey::Value(Val::Int(n)) => Some(*n),
            OutcomeKey::Value(Val::Bool(b)) => Some(i64::from(*b)),
            _ => None,
        }
    }
}

/// An effect a resolution asked for, to be applied by the engine (or shown by `explain`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum EffectRec {
    Eliminate(Val),
    Place {
        marker: u32,
        target: Val,
    },
    Remove {
        marker: u32,
        target: Val,
    },
    Move {
        what: Val,
        to: Val,
    },
    Score {
        side: u32,
        op: ScoreOpRec,
        value: i64,
    },
    Win(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ScoreOpRec {
    Add,
    Sub,
    Set,
}

impl EffectRec {
    pub fn show(&self, p: &Program) -> String {
        let ent = |e: u32| {
            p.entities
                .get(e as usize)
                .map_or("?".to_string(), |x| x.name.clone())
        };
        let side = |s: u32| {
            p.sides
                .get(s as usize)
                .map_or("?".to_string(), |x| x.name.clone())
        };
        match self {
            EffectRec::Eliminate(v) => format!("eliminate {}", v.show(p)),
            EffectRec::Place { marker, target } => {
                format!("place {} on {}", ent(*marker), target.show(p))
            }
            EffectRec::Remove { marker, target } => {
                format!("remove {} from {}", ent(*marker), target.show(p))
            }
            EffectRec::Move { what, to } => format!("move {} to {}", what.show(p), to.show(p)),
            EffectRec::Score { side: s, op, value } => {
                let o = match op {
                    ScoreOpRec::Add => "+=",
                    ScoreOpRec::Sub => "-=",
                    ScoreOpRec::Set => "=",
                };
                format!("score {} {o} {value}", side(*s))
            }
            EffectRec::Win(s) => format!("{} wins", side(*s)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub key: OutcomeKey,
    pub effects: Vec<EffectRec>,
}

impl fmt::Display for OutcomeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutcomeKey::Named(n) => write!(f, "{n}"),
            OutcomeKey::Value(v) => write!(f, "{v:?}"),
            OutcomeKey::Effects(e) => write!(f, "{}", e.join("; ")),
            OutcomeKey::Nothing => write!(f, "(no result)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Point;

    #[test]
    fn a_table_point_is_the_list_of_its_coordinates_to_the_rules() {
        let p = Val::Point(Point::new(120, -35).unwrap());
        let same = Val::List(vec![Val::Int(120), Val::Int(-35)]);
        assert!(p.same(&same) && same.same(&p));
        assert!(!p.same(&Val::List(vec![Val::Int(-35), Val::Int(120)])));
        assert!(!p.same(&Val::List(vec![Val::Int(120)])));
        assert!(!p.same(&Val::List(vec![Val::Int(120), Val::Int(-35), Val::Int(0)])));
        let program = Program::default();
        assert_eq!(p.show(&program), same.show(&program));
    }
}
