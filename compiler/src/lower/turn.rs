//! The turn and the activation blocks as typed IR ([`ir::TurnDef`], [`ir::ActivationDef`]),
//! read out of their lowered config blocks once every name is resolved. Mistakes were
//! reported with their spans by `scenario.rs` and `activation.rs`; what cannot be read here is
//! left out, so a program with errors still lowers.

use super::Lowerer;
use super::typed::{first_of, flat_of, int, name, prop_of};
use crate::ir::{
    self, ActivationDef, CardDef, ConfigBlock, DeckDef, Expr, Given, InsertDef, PhaseDef, ProcKind,
    Property, SchemeDef, SideOrder, TurnDef, UnitDef, UnitKind, Value,
};

impl Lowerer<'_> {
    /// Fill `program.activations` and `program.turn` from the lowered config blocks.
    pub(crate) fn lower_typed_turn(&mut self) {
        let activations: Vec<ActivationDef> = self
            .program
            .configs
            .iter()
            .filter(|c| c.keyword == "activation")
            .filter_map(|a| self.activation(a))
            .collect();
        let turn = self
            .program
            .configs
            .iter()
            .find(|c| c.keyword == "turn")
            .map(|t| {
                let distance = first_of(t, "distance_counter").and_then(name);
                let secret = prop_of(t, "secret_counters").map_or(Vec::new(), |p| {
                    flat_of(p).into_iter().filter_map(name).collect()
                });
                let names: Vec<String> = secret.into_iter().map(str::to_string).collect();
                let distance = distance.map(str::to_string);
                (self.turn(t, &activations), distance, names)
            });
        self.program.activations = activations;
        self.program.turn = turn.map(|(mut turn, distance, secret)| {
            turn.distance_counter = distance.map(|n| self.counter_id(&n));
            turn.secret_counters = secret.iter().map(|n| self.counter_id(n)).collect();
            turn
        });
    }

    fn turn(&self, t: &ConfigBlock, activations: &[ActivationDef]) -> TurnDef {
        let hooks = |b: &ConfigBlock, event: &str| -> Vec<ir::ProcId> {
            b.hooks
                .iter()
                .filter(|(n, _)| n == event)
                .map(|(_, p)| *p)
                .collect()
        };
        TurnDef {
            phases: t
                .blocks
                .iter()
                .filter(|b| b.keyword == "phase")
                .map(|ph| PhaseDef {
                    name: ph.name.clone().unwrap_or_default(),
                    title: ph.title.clone(),
                    activation: first_of(ph, "activation")
                        .and_then(name)
                        .and_then(|n| activations.iter().position(|a| a.name == n))
                        .map(|i| i as u32),
                    actions: prop_of(ph, "actions").map_or(Vec::new(), |p| self.actions(p)),
                    on_run: hooks(ph, "run"),
                })
                .collect(),
            // Resolved to ids by `lower_typed_turn`, which may add names.
            distance_counter: None,
            secret_counters: Vec::new(),
            concealing_markers: prop_of(t, "concealing_markers").map_or(Vec::new(), |p| {
                flat_of(p)
                    .into_iter()
                    .filter_map(|e| match e {
                        Expr::Const(Value::Entity(id))
                            if self.program.entities[*id as usize].category
                                == ir::Category::Marker =>
                        {
                            Some(*id)
                        }
                        _ => None,
                    })
                    .collect()
            }),
            end: hooks(t, "end"),
        }
    }

    /// The actions a property lists, in order; names of anything else are left out.
    fn actions(&self, p: &Property) -> Vec<ir::ProcId> {
        flat_of(p)
            .into_iter()
            .filter_map(name)
            .filter_map(|n| self.program.proc_by_name(n))
            .filter(|(_, def)| def.kind == ProcKind::Action)
            .map(|(id, _)| id)
            .collect()
    }

    fn activation(&self, b: &ConfigBlock) -> Option<ActivationDef> {
        let order = |keys: &[&str]| -> SideOrder {
            let Some(p) = keys.iter().find_map(|k| prop_of(b, k)) else {
                return (0..self.program.sides.len() as ir::SideId)
                    .map(Given::Fixed)
                    .collect();
            };
            flat_of(p)
                .into_iter()
                .filter_map(|e| match e {
                    Expr::Const(Value::Side(s)) => Some(Given::Fixed(*s)),
                    Expr::Const(Value::Unknown(u)) => Some(Given::Unknown(*u)),
                    _ => None,
                })
                .collect()
        };
        let scheme = match b.scheme.as_deref()? {
            "chip_cup" => SchemeDef::ChipCup,
            "all" | "fixed" | "sequence" => SchemeDef::EachPiece(order(&["order", "sides"])),
            "alternating" => SchemeDef::Alternating(order(&["first", "sides"])),
            "deck" => SchemeDef::Deck(self.deck(b)),
            _ => return None,
        };
        let hook = |key: &str| b.hooks.iter().find(|(k, _)| k == key).map(|(_, p)| *p);
        let unit = UnitDef {
            kind: match first_of(b, "activates").and_then(name) {
                Some("place") => UnitKind::Place,
                Some("group") => UnitKind::Group,
                Some("side") => UnitKind::Side,
                _ => UnitKind::Piece,
            },
            actions_per_piece: first_of(b, "actions_per_piece")
                .and_then(int)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=ir::turn::MAX_ACTIONS_PER_PIECE).contains(n))
                .unwrap_or(1),
            all_act_when: hook("all_act_when"),
            commands: hook("commands"),
            together: prop_of(b, "together").map_or(Vec::new(), |p| self.actions(p)),
        };
        Some(ActivationDef {
            name: b.name.clone().unwrap_or_default(),
            scheme,
            unit,
        })
    }

    /// `card: red, count = 10, side = us` lines (copies written out), `insert:` lines,
    /// `draws_before_reshuffle:` and `reshuffle:`.
    fn deck(&self, b: &ConfigBlock) -> DeckDef {
        let count = |p: &Property, key: &str, or: u32| match named(p, key) {
            Some(e) => int(e)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n <= ir::turn::MAX_CARDS)
                .unwrap_or(0),
            None => or,
        };
        let side = |p: &Property| match named(p, "side") {
            Some(Expr::Const(Value::Side(s))) => Some(*s),
            _ => None,
        };
        let label = |p: &Property| card_label(p).map(str::to_string);
        let mut deck = DeckDef {
            cards: Vec::new(),
            draws: first_of(b, "draws_before_reshuffle")
                .and_then(int)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n >= 1),
            inserts: Vec::new(),
            reshuffle_on_insert: first_of(b, "reshuffle").and_then(name) == Some("on_insert"),
            hooks: b.hooks.clone(),
        };
        for p in &b.properties {
            match p.key.as_str() {
                "card" => {
                    let Some(l) = label(p) else { continue };
                    let n = count(p, "count", 1);
                    let room = ir::turn::MAX_CARDS.saturating_sub(deck.cards.len() as u32);
                    for _ in 0..n.min(room) {
                        deck.cards.push(CardDef {
                            label: l.clone(),
                            side: side(p),
                        });
                    }
                }
                "insert" => {
                    let (Some(l), Some(event)) = (label(p), insert_event(p)) else {
                        continue;
                    };
                    deck.inserts.push(InsertDef {
                        side: side(p),
                        count: count(p, "count", 1),
                        replaces: count(p, "replaces", 0),
                        event: event.to_string(),
                        label: l,
                    });
                }
                _ => {}
            }
        }
        deck
    }
}

fn named<'p>(p: &'p Property, key: &str) -> Option<&'p Expr> {
    p.values
        .iter()
        .find(|(k, _)| k.as_deref() == Some(key))
        .map(|(_, e)| e)
}

/// A `card:` or `insert:` line's label, its first unnamed value.
fn card_label(p: &Property) -> Option<&str> {
    p.values
        .iter()
        .find(|(k, _)| k.is_none())
        .and_then(|(_, e)| name(e))
}

/// The event an `insert:` line's cards run when first drawn (`on EVENT` in its deck):
/// `event = NAME`, else the insert's label.
pub(super) fn insert_event(p: &Property) -> Option<&str> {
    named(p, "event").and_then(name).or_else(|| card_label(p))
}
