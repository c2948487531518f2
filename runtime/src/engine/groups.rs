//! Groups standing under one piece: a side whose pieces share a place shows the others one
//! piece there (a lettered substitute, a blind), so how many stand under it is hidden, and a
//! side owns only so many of those pieces.
//!
//! A unit of a side whose kind has the integer field `groups_per_side` declares the cap: at
//! most that many places may hold two or more units of the side at once. The engine keeps it
//! at set-up; moves keep it through the `groups_allow` engine function in the rules' own
//! preconditions (a move the rules force, such as a fall-back, is not refused).

use sandtable_ir::{Category, SideId};

use super::setup::Rules;
use super::state::{Pos, State};
use crate::value::Val;

/// The field that caps a side's groups.
const CAP_FIELD: &str = "groups_per_side";

impl Rules<'_> {
    /// The most places that may hold two or more units of `side`, when the rules say.
    pub fn group_cap(&self, side: SideId) -> Option<u32> {
        self.group_caps.get(side as usize).copied().flatten()
    }

    /// [`Rules::group_cap`] read from the entities' fields, once at set-up.
    pub(crate) fn read_group_cap(&self, side: SideId) -> Option<u32> {
        self.program
            .entities
            .iter()
            .enumerate()
            .filter(|(_, e)| e.category == Category::Unit && e.side == Some(side))
            .filter_map(|(k, _)| {
                self.entity_fields
                    .get(k)?
                    .iter()
                    .find(|(n, _)| n == CAP_FIELD)
            })
            .filter_map(|(_, v)| match v {
                Some(Val::Int(n)) => u32::try_from(*n).ok(),
                _ => None,
            })
            .min()
    }
}

impl State {
    /// Places holding two or more units of `side` on the board, were piece `moved` (when
    /// given) standing at the place given with it instead of where it is.
    pub fn groups(&self, side: SideId, moved: Option<(usize, Pos)>) -> u32 {
        let mut count: Vec<(Pos, u32)> = Vec::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if !(p.on_board() && p.is_unit && p.side == Some(side)) {
                continue;
            }
            // A piece being set up (on the board, at no place yet) counts where it would stand.
            let at = match moved {
                Some((m, to)) if m == i => to,
                _ => match p.pos {
                    Some(at) => at,
                    None => continue,
                },
            };
            match count.iter_mut().find(|(q, _)| *q == at) {
                Some((_, n)) => *n += 1,
                None => count.push((at, 1)),
            }
        }
        count.iter().filter(|(_, n)| *n >= 2).count() as u32
    }

    /// Whether piece `i` standing at `to` keeps its side within `cap` groups. A step that
    /// does not add a group is always allowed (a side over its cap by a forced move may
    /// still thin out).
    pub fn groups_allow(&self, i: usize, to: Pos, cap: Option<u32>) -> bool {
        let (Some(cap), Some(side)) = (cap, self.pieces[i].side) else {
            return true;
        };
        // `after <= cap || after <= before`, with `after - before` (the one piece moving can
        // break up at most one group and make at most one) counted at the two places alone:
        // the whole side is counted only when the move adds a group.
        let me = &self.pieces[i];
        if !(me.on_board() && me.is_unit && me.side == Some(side)) {
            // Not counted either way: nothing changes.
            return true;
        }
        let mates = |at: Pos| {
            self.pieces
                .iter()
                .enumerate()
                .filter(|&(j, p)| {
                    j != i && p.on_board() && p.is_unit && p.side == Some(side) && p.pos == Some(at)
                })
                .count()
        };
        let from = me.pos;
        if from == Some(to) {
            return true;
        }
        // Most places a move is tested at hold none of the side: no group is made there.
        if mates(to) != 1 || from.is_some_and(|at| mates(at) == 1) {
            return true;
        }
        self.groups(side, None) < cap
    }
}

impl Rules<'_> {
    /// The entity's kind has `blocks_movement: true`: no unit of its side enters its place.
    pub fn blocks_movement(&self, e: sandtable_ir::EntityId) -> bool {
        self.blocks.get(e as usize).copied().unwrap_or(false)
    }

    /// [`Rules::blocks_movement`] read from the entity's fields, once at set-up.
    pub(crate) fn read_blocks_movement(&self, e: sandtable_ir::EntityId) -> bool {
        self.entity_fields.get(e as usize).is_some_and(|f| {
            f.iter()
                .any(|(n, v)| n == "blocks_movement" && *v == Some(Val::Bool(true)))
        })
    }
}

impl State {
    /// Piece `i` at `at` would share the place with a unit of its side that no unit of the
    /// side may stand with (either of them `blocks_movement`): set-up keeps them apart, as
    /// movement does.
    pub fn blocked_with(&self, rules: &Rules, i: usize, at: Pos) -> bool {
        let me = &self.pieces[i];
        self.pieces_at(at).any(|(k, q)| {
            k != i
                && q.is_unit
                && q.side == me.side
                && (rules.blocks_movement(q.entity) || rules.blocks_movement(me.entity))
        })
    }
}
