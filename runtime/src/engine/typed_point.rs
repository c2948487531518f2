//! A point typed by a player on an open table, in place of one of the listed destinations.
//! The engine lists a finite set of places for a move to any point (`options.rs`); a person
//! may want another. The typed point takes the place of the point of one listed choice (the
//! same action, the same piece) and is held to the same checks as the listed ones: on the
//! table, clear of every other figure's base, and every leading `require` of the action.
//! It is logged with the decision (`typed`), so `replay` plays it again exactly.

use sandtable_ir::LENGTH_UNITS;

use super::log::{Place, Typed};
use super::options::Choice;
use super::setup::BoardSpec;
use super::state::Pos;
use super::{EngineError, Game};
use crate::board::Point;
use crate::value::Val;

/// Where in a choice's arguments its point is: the last argument that is one.
pub fn point_slot(c: &Choice) -> Option<usize> {
    c.args.iter().rposition(|v| matches!(v, Val::Point(_)))
}

/// A length as a person types it: `12`, `12.5`, `12.5in`, `30cm`. Without a unit it is in
/// `unit` (the ruleset's); the result is in tenths of a millimetre, rounded to the nearest.
pub fn parse_length(text: &str, unit: Option<&str>) -> Result<i64, String> {
    let t = text.trim();
    let (number, per) = match LENGTH_UNITS.iter().find(|(u, _)| t.ends_with(u)) {
        Some((u, per)) => (t[..t.len() - u.len()].trim(), *per),
        None => match unit.and_then(|u| LENGTH_UNITS.iter().find(|(n, _)| *n == u)) {
            Some((_, per)) => (t, *per),
            None => {
                return Err(format!(
                    "`{t}` has no unit: write it as `{t}in`, `{t}cm` or `{t}mm`"
                ));
            }
        },
    };
    let (negative, digits) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let ok = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty())
        || !ok(whole)
        || !ok(frac)
        || frac.len() > 6
        || whole.len() > 9
    {
        return Err(format!("`{t}` is not a length"));
    }
    let scale = 10i128.pow(frac.len() as u32);
    let value = whole.parse::<i128>().unwrap_or(0) * scale + frac.parse::<i128>().unwrap_or(0);
    // value / scale units of `per` tenths of a millimetre, rounded half away from zero.
    let tenths = (value * i128::from(per) * 2 + scale) / (2 * scale);
    let tenths = i64::try_from(tenths).map_err(|_| format!("`{t}` is too long"))?;
    Ok(if negative { -tenths } else { tenths })
}

/// `x,y` (optionally in brackets) as a point.
pub fn parse_point(text: &str, unit: Option<&str>) -> Result<Point, String> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    let Some((x, y)) = t.split_once(',') else {
        return Err(format!("`{text}` is not a point: write it `x,y`"));
    };
    Point::new(parse_length(x, unit)?, parse_length(y, unit)?).map_err(|e| e.to_string())
}

impl Game<'_, '_> {
    /// Choice `like` with its point replaced by `at`, when that is legal now; otherwise why
    /// not, in words for the player.
    pub fn typed_choice(&mut self, like: &Choice, at: Point) -> Result<Choice, String> {
        if !matches!(self.rules.board, BoardSpec::Table { .. }) {
            return Err("points are typed on an open table only".into());
        }
        let Some(slot) = point_slot(like) else {
            return Err("that choice goes to no point".into());
        };
        let mut c = like.clone();
        c.args[slot] = Val::Point(at);
        let shown = Pos::Point(at).label(self.rules.program.length_unit.as_deref());
        let actor = c.args.first().cloned();
        if let Some(Val::Piece(i)) = &actor
            && self.state.pieces.get(*i as usize).and_then(|p| p.pos) == Some(Pos::Point(at))
        {
            return Err(format!("{shown}: the piece is already there"));
        }
        if !self.table_point_free(actor.as_ref(), at) {
            return Err(format!(
                "{shown} is off the table or within a base of another figure"
            ));
        }
        if !self.choice_open(&c) {
            let name = match c.act {
                super::Act::Action(a) => self.rules.program.procs[a as usize].name.as_str(),
                _ => "the action",
            };
            return Err(format!(
                "{shown} is not a legal place for `{name}`: one of its rules does not hold there (its reach, the path, the terrain or its cost)"
            ));
        }
        Ok(c)
    }

    /// Carry out, and play on from, the listed choice `like` with its point replaced by `at`,
    /// when that is legal (see [`Game::typed_choice`]); the decision is logged with the point.
    pub fn apply_point(&mut self, like: usize, at: Point) -> Result<(), EngineError> {
        let Some(d) = self.flow.pending.as_ref() else {
            return Err(EngineError::Policy("no decision is waiting".into()));
        };
        if d.inside.is_some() {
            return Err(EngineError::Policy(
                "a choice inside an action takes no point".into(),
            ));
        }
        let Some(template) = d.choices.get(like).cloned() else {
            return Err(EngineError::Policy(format!(
                "choice {like} is out of range"
            )));
        };
        let c = self
            .typed_choice(&template, at)
            .map_err(EngineError::Policy)?;
        if let Some(d) = self.flow.pending.as_mut() {
            d.choices.push(c);
        }
        let k = self.legal().len() - 1;
        self.apply_typed(
            k,
            Some(Typed {
                like,
                at: Place::from(Pos::Point(at)),
            }),
            None,
        )?;
        self.advance()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_read_in_the_rulesets_unit_or_their_own() {
        assert_eq!(parse_length("12", Some("in")), Ok(12 * 254));
        assert_eq!(parse_length("12.5", Some("in")), Ok(3175));
        assert_eq!(parse_length("3cm", Some("in")), Ok(300));
        assert_eq!(parse_length(" 0.25in ", None), Ok(64)); // 63.5, rounded up
        assert!(parse_length("12", None).unwrap_err().contains("no unit"));
        assert!(parse_length("twelve", Some("in")).is_err());
        assert!(parse_length("1.2.3", Some("in")).is_err());
        assert_eq!(
            parse_point("(12, 3.5)", Some("in")).unwrap(),
            Point::new(3048, 889).unwrap()
        );
        assert!(parse_point("12", Some("in")).is_err());
    }
}
