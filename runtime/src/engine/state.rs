//! The state of one game: where every piece is, what it carries, the scores. Cloned freely
//! (a greedy policy looks ahead on a copy), so it holds no references and no random stream.

use sandtable_ir::{CounterId, EntityId, SideId};
use serde::{Deserialize, Serialize};

use crate::board::{HexCoord, Point};

/// Where a piece stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pos {
    Hex(HexCoord),
    Point(Point),
}

impl Pos {
    /// As printed: a hex label, or a point with two decimals in `unit`, the ruleset's
    /// (`Program::length_unit`), so a table measured in centimetres reads in centimetres.
    pub fn label(self, unit: Option<&str>) -> String {
        match self {
            Pos::Hex(h) => h.to_string(),
            Pos::Point(p) => format!("({}, {})", length(p.x(), unit), length(p.y(), unit)),
        }
    }
}

/// A length in tenths of a millimetre shown in `unit` to two decimals, e.g. `12.5in`,
/// `27.94cm`; inches when the ruleset writes no length.
pub fn length(len: i64, unit: Option<&str>) -> String {
    let (name, per) = sandtable_ir::LENGTH_UNITS
        .iter()
        .find(|(u, _)| Some(*u) == unit)
        .copied()
        .unwrap_or(("in", 254));
    // Hundredths of the unit, rounded half away from zero.
    let hundredths = (len * 100 + len.signum() * (per / 2)) / per;
    let s = format!("{}.{:02}", hundredths / 100, (hundredths % 100).abs());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{name}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    OnBoard,
    Eliminated,
    Exited,
    /// Held off the table in its force's `reserve:` until an action brings it on.
    Reserve,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Piece {
    pub entity: EntityId,
    pub side: Option<SideId>,
    /// Readable and unique: the entity's name, with `#n` when the force has several. Shared,
    /// so copying a state for look-ahead copies no text.
    #[serde(with = "shared_text")]
    pub label: std::sync::Arc<str>,
    pub pos: Option<Pos>,
    pub status: Status,
    /// Markers on the piece (at most one of each).
    pub markers: Vec<EntityId>,
    /// Counters the rules keep (damage taken, turns of reloading, distance moved this turn),
    /// by id; a counter never set is absent (0).
    pub counters: Vec<(CounterId, i64)>,
    /// Face down to the other sides (their policies do not learn which entity it is).
    pub hidden: bool,
    /// Unseen by the sides that did not place it (a force with `secret_markers: true`): not
    /// in their view, not named to them, not on the board of their look-ahead, until revealed.
    #[serde(default)]
    pub secret: bool,
    /// In a concealed place: it carries one of the turn's `concealing_markers:`. Seen, while
    /// so, by its own side only, as a secret piece is.
    #[serde(default)]
    pub concealed: bool,
    /// The hex or point it left the board from.
    pub exited_at: Option<Pos>,
    /// An eliminated piece being carried (`carry`): the index of the piece carrying it, whose
    /// moves and exit it follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_by: Option<u32>,
    /// A unit (counted in losses) rather than a weapon piece or marker.
    pub is_unit: bool,
    /// The side that sets the piece up: its own, or for a force's `markers:` (which belong to
    /// no side) the force's; `None` for a scenario's neutral pieces, placed where it says.
    pub placed_by: Option<SideId>,
}

impl Piece {
    pub fn on_board(&self) -> bool {
        self.status == Status::OnBoard
    }
    /// Unseen by some side (secret or concealed): such a piece takes no room, as a mark on a
    /// map or a figure below ground takes none, so that the other sides' moves show nothing.
    pub fn out_of_sight(&self) -> bool {
        self.secret || self.concealed
    }
    pub fn counter(&self, id: CounterId) -> i64 {
        self.counters
            .iter()
            .find(|(n, _)| *n == id)
            .map_or(0, |(_, v)| *v)
    }
    /// Back to 0 (a counter never set stays absent: nothing to allocate).
    pub fn clear_counter(&mut self, id: CounterId) {
        if let Some(c) = self.counters.iter_mut().find(|(n, _)| *n == id) {
            c.1 = 0;
        }
    }
    pub fn set_counter(&mut self, id: CounterId, value: i64) {
        match self.counters.iter_mut().find(|(n, _)| *n == id) {
            Some(c) => c.1 = value,
            None => self.counters.push((id, value)),
        }
    }
}

/// Who won: a side, or nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Winner {
    Side(SideId),
    Draw,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub pieces: Vec<Piece>,
    /// Markers lying on hexes or points rather than on pieces (wire, bunkers).
    pub place_markers: Vec<(Pos, EntityId)>,
    pub scores: Vec<i64>,
    pub turn: u32,
    pub winner: Option<Winner>,
    /// Sides owed a free action by a rule (`free_action(side)`), in order.
    pub pending_free: Vec<SideId>,
    /// A card-deck activation: the cards in the deck (drawn from the end) and those set
    /// aside until the reshuffle; `None` until first used.
    pub deck: Option<(Vec<super::setup::DeckCard>, Vec<super::setup::DeckCard>)>,
    /// Inserts a rule asked for (`insert_cards`), shuffled in at the next reshuffle.
    pub pending_inserts: Vec<String>,
    /// Events whose first card has been drawn.
    pub events_fired: Vec<String>,
    /// Named counters kept on a side rather than a piece (`counter(side, name)`).
    #[serde(default)]
    pub side_counters: Vec<(SideId, CounterId, i64)>,
    /// Chips and side cards drawn so far, per side: a side's own turns on a card or chip
    /// activation (`activations(side)`).
    #[serde(default)]
    pub activations: Vec<u32>,
}

impl State {
    /// Count one more chip or side card drawn for `side`.
    pub fn count_activation(&mut self, side: SideId) {
        let s = side as usize;
        if self.activations.len() <= s {
            self.activations.resize(s + 1, 0);
        }
        self.activations[s] += 1;
    }
    pub fn pieces_at(&self, pos: Pos) -> impl Iterator<Item = (usize, &Piece)> {
        self.pieces
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.on_board() && p.pos == Some(pos))
    }
    /// A piece's name as `side` sees it: a face-down enemy piece is only "hidden piece at …".
    pub fn piece_label(&self, i: usize, side: SideId, unit: Option<&str>) -> String {
        let p = &self.pieces[i];
        if p.hidden && p.side != Some(side) {
            format!(
                "hidden piece at {}",
                p.pos.map_or("?".into(), |at| at.label(unit))
            )
        } else {
            p.label.to_string()
        }
    }
    /// Whether `side` may know the piece is there at all.
    pub fn seen_by(&self, i: usize, side: SideId) -> bool {
        let p = &self.pieces[i];
        !p.out_of_sight() || p.placed_by == Some(side) || p.side == Some(side)
    }
    pub fn losses(&self, side: SideId) -> u32 {
        self.pieces
            .iter()
            .filter(|p| p.is_unit && p.side == Some(side) && p.status == Status::Eliminated)
            .count() as u32
    }
}

/// A shared label saved as plain text.
mod shared_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(t: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(t)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
        Ok(Arc::from(String::deserialize(d)?))
    }
}
