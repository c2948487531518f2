//! Boards and scenarios as typed IR ([`ir::BoardDef`], [`ir::ScenarioDef`]), read out of
//! their lowered config blocks once every name is resolved. Mistakes were reported by
//! `scenario.rs` with their spans; what cannot be read here is left out, so a program with
//! errors still lowers.

use super::{Located, Lowerer};
use crate::ir::{
    self, AreaDef, BinOp, BoardDef, BoardPlay, BoardShape, ChipsDef, ConfigBlock, Count, Deploy,
    Expr, FeatureDef, ForceDef, Given, Ground, HexBoardDef, HexLabel, HexOrientation, HexTerrain,
    NeutralDef, Outline, Pieces, Place, Program, Property, ScenarioDef, SectorsDef, TableBoardDef,
    UnOp, Value,
};
use sandtable_grammar::ast;

fn prop<'a>(b: &'a ConfigBlock, key: &str) -> Option<&'a Property> {
    b.properties.iter().find(|p| p.key == key)
}

fn first<'a>(b: &'a ConfigBlock, key: &str) -> Option<&'a Expr> {
    prop(b, key).and_then(|p| p.values.first()).map(|(_, e)| e)
}

fn konst(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Const(v) => Some(v),
        _ => None,
    }
}

pub(super) fn prop_of<'a>(b: &'a ConfigBlock, key: &str) -> Option<&'a Property> {
    prop(b, key)
}

pub(super) fn first_of<'a>(b: &'a ConfigBlock, key: &str) -> Option<&'a Expr> {
    first(b, key)
}

pub(super) fn flat_of(p: &Property) -> Vec<&Expr> {
    flat(p)
}

/// A whole number, `-3` included.
pub(super) fn int(e: &Expr) -> Option<i64> {
    match e {
        Expr::Const(Value::Int(n)) => Some(*n),
        Expr::Unary {
            op: UnOp::Neg,
            operand,
        } => int(operand).and_then(i64::checked_neg),
        _ => None,
    }
}

/// A length on a table; a bare number is read as tenths of a millimetre, as the engine did.
fn length_or_int(e: &Expr) -> Option<i64> {
    match e {
        Expr::Const(Value::Length(n)) => Some(*n),
        e => int(e),
    }
}

pub(super) fn name(e: &Expr) -> Option<&str> {
    match konst(e)? {
        Value::Symbol(s) | Value::Text(s) => Some(s),
        _ => None,
    }
}

fn count(e: &Expr) -> Option<Count> {
    match konst(e)? {
        Value::Int(n) => u32::try_from(*n).ok().map(Count::Fixed),
        Value::Unknown(u) => Some(Count::Unknown(*u)),
        _ => None,
    }
}

/// The expressions of a property, lists flattened.
fn flat(p: &Property) -> Vec<&Expr> {
    let mut out = Vec::new();
    for (_, e) in &p.values {
        match e {
            Expr::List(items) => out.extend(items.iter()),
            e => out.push(e),
        }
    }
    out
}

/// `rifle`, `3 * rifle` (or `rifle * 3`), or `?`.
fn pieces(e: &Expr) -> Option<Pieces> {
    match e {
        Expr::Const(Value::Entity(entity)) => Some(Pieces::Of {
            entity: *entity,
            count: 1,
        }),
        Expr::Const(Value::Unknown(u)) => Some(Pieces::Unknown(*u)),
        Expr::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => match (konst(lhs)?, konst(rhs)?) {
            (Value::Int(n), Value::Entity(entity)) | (Value::Entity(entity), Value::Int(n)) => {
                Some(Pieces::Of {
                    entity: *entity,
                    count: u32::try_from(*n).ok()?,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// The upper end of `A..=U` (a column) or `1..=11`, or a bare count.
fn size(e: &Expr) -> Option<u32> {
    match konst(e)? {
        Value::Int(n) => u32::try_from(*n).ok(),
        Value::Range(_, Some(hi)) => u32::try_from(*hi).ok(),
        Value::LabelRange(_, Some(hi)) => HexLabel::parse(&format!("{hi}1")).map(|h| h.column),
        _ => None,
    }
}

fn length(e: &Expr) -> Option<i64> {
    match konst(e)? {
        Value::Length(n) => Some(*n),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Fill `program.boards` and `program.scenarios` from the lowered config blocks.
    pub(crate) fn lower_typed_scenarios(&mut self, items: &[Located]) {
        let configs = &self.program.configs;
        let mut boards = Vec::new();
        for (i, b) in configs.iter().enumerate() {
            if b.keyword == "board" {
                boards.push(board(&self.program, b, i as u32));
            }
        }
        let turn = configs.iter().find(|c| c.keyword == "turn");
        let limit = turn.and_then(|t| first(t, "limit")).and_then(count);
        let mut scenarios = Vec::new();
        for (i, sc) in configs.iter().enumerate() {
            if sc.keyword != "scenario" {
                continue;
            }
            let sc_name = sc.name.clone().unwrap_or_default();
            let board_name = first(sc, "board").and_then(name);
            let named = board_name.and_then(|n| boards.iter().position(|b| b.name == n));
            let stand_in = board_name.and_then(|n| {
                boards
                    .iter()
                    .position(|b| b.stand_in_for.as_deref() == Some(n))
            });
            let turns = first(sc, "turns").and_then(count);
            let (file, line) = items
                .iter()
                .find_map(|loc| match &loc.item.kind {
                    ast::ItemKind::Config(c)
                        if c.keyword.name == "scenario"
                            && c.name.as_ref().is_some_and(|n| n.name == sc_name) =>
                    {
                        Some((loc.file, c.keyword.span))
                    }
                    _ => None,
                })
                .map_or((String::new(), 0), |(f, span)| {
                    (self.db.file(f).name.clone(), self.line_of(f, span).0)
                });
            scenarios.push(ScenarioDef {
                name: sc_name,
                title: sc.title.clone(),
                board: named.map(|b| b as u32),
                board_played: stand_in.or(named).map(|b| b as u32),
                turns: turns.or(limit),
                turns_from_limit: turns.is_none() && limit.is_some(),
                forces: sc
                    .blocks
                    .iter()
                    .filter(|f| f.keyword == "force")
                    .filter_map(|f| self.force(f))
                    .collect(),
                neutral: sc
                    .blocks
                    .iter()
                    .filter(|n| n.keyword == "neutral")
                    .map(neutral)
                    .collect(),
                hooks: sc
                    .hooks
                    .iter()
                    .filter_map(|(n, p)| Some((ir::scenario::ScenarioEvent::named(n)?, *p)))
                    .collect(),
                victory: sc
                    .hooks
                    .iter()
                    .find(|(n, _)| n == "victory")
                    .map(|(_, p)| *p),
                chips: prop(sc, "chips").map_or(Vec::new(), |p| self.chips(p)),
                options: prop(sc, "options").map_or(Vec::new(), |p| {
                    flat(p)
                        .into_iter()
                        .filter_map(|e| match konst(e)? {
                            Value::Symbol(s) | Value::Text(s) => Some(Given::Fixed(s.to_string())),
                            Value::Unknown(u) => Some(Given::Unknown(*u)),
                            _ => None,
                        })
                        .collect()
                }),
                config: i as u32,
                file,
                line,
                cite: sc.cite.clone(),
            });
        }
        self.program.boards = boards;
        self.program.scenarios = scenarios;
    }

    /// `chips: us = 10, nva = units`: a count, `units`, a kind, or `?`, per side.
    fn chips(&self, p: &Property) -> Vec<(ir::SideId, ChipsDef)> {
        p.values
            .iter()
            .filter_map(|(side, e)| {
                let side = self
                    .program
                    .sides
                    .iter()
                    .position(|s| Some(&s.name) == side.as_ref())?
                    as ir::SideId;
                let chips = match konst(e)? {
                    Value::Int(n) => ChipsDef::Fixed(u32::try_from(*n).ok()?),
                    Value::Unknown(u) => ChipsDef::Unknown(*u),
                    Value::Symbol(w) if &**w == "units" => ChipsDef::PerUnit(None),
                    Value::Symbol(w) => ChipsDef::PerUnit(Some(
                        self.program.kinds.iter().position(|k| *k.name == **w)? as u32,
                    )),
                    _ => return None,
                };
                Some((side, chips))
            })
            .collect()
    }

    fn force(&self, f: &ConfigBlock) -> Option<ForceDef> {
        let side = self
            .program
            .sides
            .iter()
            .position(|s| Some(&s.name) == f.name.as_ref())? as ir::SideId;
        let units = prop(f, "units").map_or(Vec::new(), |p| {
            flat(p).into_iter().filter_map(pieces).collect()
        });
        let reserve = prop(f, "reserve").map_or(Vec::new(), |p| {
            flat(p).into_iter().filter_map(pieces).collect()
        });
        let mut markers = Vec::new();
        if let Some(p) = prop(f, "markers") {
            for (key, e) in &p.values {
                // `bunker = 3` counts a piece by name.
                if let (Some(k), Some(Value::Int(n))) = (key, konst(e)) {
                    if let (Some(entity), Ok(count)) = (
                        self.program.entities.iter().position(|x| x.name == *k),
                        u32::try_from(*n),
                    ) {
                        markers.push(Pieces::Of {
                            entity: entity as u32,
                            count,
                        });
                    }
                    continue;
                }
                match e {
                    Expr::List(items) => markers.extend(items.iter().filter_map(pieces)),
                    e => markers.extend(pieces(e)),
                }
            }
        }
        let flags: Vec<(String, Value)> = f
            .properties
            .iter()
            .filter_map(|p| {
                let v = konst(&p.values.first()?.1)?;
                matches!(v, Value::Bool(_) | Value::Unknown(_)).then(|| (p.key.clone(), v.clone()))
            })
            .collect();
        Some(ForceDef {
            side,
            units,
            reserve,
            markers,
            deploy: prop(f, "deploy").and_then(deploy),
            markers_deploy: prop(f, "markers_deploy").and_then(deploy),
            deploy_check: first(f, "deploy_check")
                .and_then(name)
                .and_then(|n| self.program.proc_by_name(n))
                .map(|(id, _)| id),
            max_per_hex: first(f, "max_per_hex").and_then(count),
            hidden: flags
                .iter()
                .any(|(k, v)| k == "hidden" && *v == Value::Bool(true)),
            exits: prop(f, "exit").map_or(Vec::new(), |p| {
                flat(p)
                    .into_iter()
                    .filter_map(|e| name(e).and_then(HexLabel::parse))
                    .collect()
            }),
            flags,
        })
    }
}

fn board(program: &Program, b: &ConfigBlock, config: u32) -> BoardDef {
    let shape = match b.scheme.as_deref() {
        Some("hex") => match (
            first(b, "columns").and_then(size),
            first(b, "rows").and_then(size),
        ) {
            (Some(columns), Some(rows)) => BoardShape::Hex { columns, rows },
            _ => BoardShape::Unknown,
        },
        Some("open" | "sectors") => match (
            first(b, "width").and_then(length),
            first(b, "depth").and_then(length),
        ) {
            (Some(width), Some(depth)) => BoardShape::Table { width, depth },
            _ => BoardShape::Unknown,
        },
        _ => BoardShape::Unknown,
    };
    let ground_of = |e: &Expr| ground(program, e);
    let default = first(b, "default").and_then(ground_of);
    let play = match b.scheme.as_deref() {
        Some("hex") => {
            let mut terrain = Vec::new();
            // `terrain: jungle = [B2, B3], paddy = [E4]`: each named terrain on its hexes (an
            // unnamed value, such as the `?` of a board no one has drawn, lists none).
            if let Some(p) = prop(b, "terrain") {
                for (n, e) in &p.values {
                    let Some(n) = n else { continue };
                    let ground = match program.entities.iter().position(|x| x.name == *n) {
                        Some(i) => Ground::Entity(i as u32),
                        None => Ground::Member(n.clone()),
                    };
                    let items = match e {
                        Expr::List(items) => items.iter().collect(),
                        e => vec![e],
                    };
                    terrain.push(hex_terrain(ground, &items));
                }
            }
            for region in b.blocks.iter().filter(|x| x.keyword == "region") {
                let (Some(ground), Some(hexes)) = (
                    first(region, "terrain").and_then(ground_of),
                    prop(region, "hexes"),
                ) else {
                    continue;
                };
                terrain.push(hex_terrain(ground, &flat(hexes)));
            }
            BoardPlay::Hex(HexBoardDef {
                orientation: match first(b, "orientation").and_then(name) {
                    Some("odd_columns_down") => HexOrientation::OddColumnsDown,
                    _ => HexOrientation::EvenColumnsDown,
                },
                default,
                terrain,
                entry_cost: first(b, "entry_cost").and_then(name).map(str::to_string),
            })
        }
        Some(scheme @ ("open" | "sectors")) => BoardPlay::Table(TableBoardDef {
            default,
            features: b
                .blocks
                .iter()
                .filter(|x| x.keyword == "feature")
                .filter_map(|f| {
                    Some(FeatureDef {
                        ground: first(f, "terrain").and_then(ground_of)?,
                        outline: outline(f)?,
                    })
                })
                .collect(),
            base: first(b, "base").and_then(length_or_int),
            blocks_sight: first(b, "blocks_sight").and_then(name).map(str::to_string),
            move_directions: first(b, "move_directions")
                .and_then(int)
                .and_then(|n| u32::try_from(n).ok()),
            move_steps: first(b, "move_steps")
                .and_then(int)
                .and_then(|n| u32::try_from(n).ok()),
            sectors: match (scheme, first(b, "sector").and_then(length_or_int)) {
                ("sectors", Some(sector)) => Some(SectorsDef {
                    sector,
                    zones: match first(b, "zones") {
                        Some(e) => int(e).and_then(|n| u32::try_from(n).ok()).unwrap_or(0),
                        None => 1,
                    },
                }),
                _ => None,
            },
        }),
        _ => BoardPlay::None,
    };
    BoardDef {
        name: b.name.clone().unwrap_or_default(),
        title: b.title.clone(),
        scheme: b.scheme.clone(),
        shape,
        stand_in_for: first(b, "stand_in").and_then(name).map(str::to_string),
        areas: b
            .blocks
            .iter()
            .filter(|a| a.keyword == "area")
            .filter_map(|a| {
                Some(AreaDef {
                    name: a.name.clone().unwrap_or_default(),
                    outline: outline(a)?,
                })
            })
            .collect(),
        play,
        config,
    }
}

/// A terrain entity, a member of one of the rules' enums, or `?`.
pub(super) fn ground(program: &Program, e: &Expr) -> Option<Ground> {
    match konst(e)? {
        Value::Entity(x) => Some(Ground::Entity(*x)),
        Value::Symbol(s)
            if program
                .enums
                .iter()
                .any(|x| x.members.iter().any(|m| **m == **s)) =>
        {
            Some(Ground::Member(s.to_string()))
        }
        Value::Unknown(u) => Some(Ground::Unknown(*u)),
        _ => None,
    }
}

/// The hexes a ground is painted on: labels, and `?`s an assumption fills in.
fn hex_terrain(ground: Ground, items: &[&Expr]) -> HexTerrain {
    HexTerrain {
        ground,
        hexes: items.iter().filter_map(|e| hex_label(e)).collect(),
        unknown: items
            .iter()
            .filter_map(|e| match konst(e) {
                Some(Value::Unknown(u)) => Some(*u),
                _ => None,
            })
            .collect(),
    }
}

fn hex_label(e: &Expr) -> Option<HexLabel> {
    name(e).and_then(HexLabel::parse)
}

/// `rect: x0, y0, x1, y1` or `circle: x, y, radius` (values or one list).
fn outline(b: &ConfigBlock) -> Option<Outline> {
    let lengths = |key: &str, n: usize| -> Option<Vec<i64>> {
        let v: Vec<i64> = flat(prop(b, key)?)
            .into_iter()
            .map(length_or_int)
            .collect::<Option<_>>()?;
        (v.len() == n).then_some(v)
    };
    if prop(b, "rect").is_some() {
        let v = lengths("rect", 4)?;
        Some(Outline::Rect {
            x0: v[0],
            y0: v[1],
            x1: v[2],
            y1: v[3],
        })
    } else {
        let v = lengths("circle", 3)?;
        Some(Outline::Circle {
            x: v[0],
            y: v[1],
            radius: v[2],
        })
    }
}

/// `rows = 1..=4, columns = M..=U` (other named parts, such as `wire = P..=Q`, are the book's
/// words for where some pieces go), an area's name, `?` or the book's description.
fn deploy(p: &Property) -> Option<Deploy> {
    let mut columns = None;
    let mut rows = None;
    let mut by_rows_or_columns = false;
    for (key, e) in &p.values {
        match (key.as_deref(), konst(e)) {
            (Some("rows"), Some(Value::Range(lo, hi))) => {
                by_rows_or_columns = true;
                rows = Some((
                    lo.and_then(|l| u32::try_from(l).ok()).unwrap_or(1),
                    hi.and_then(|h| u32::try_from(h).ok()).unwrap_or(u32::MAX),
                ));
            }
            (Some("columns"), Some(Value::LabelRange(lo, hi))) => {
                by_rows_or_columns = true;
                let col = |l: &Option<String>, or: u32| {
                    l.as_ref()
                        .and_then(|l| HexLabel::parse(&format!("{l}1")))
                        .map_or(or, |h| h.column)
                };
                columns = Some((col(lo, 1), col(hi, u32::MAX)));
            }
            (Some(_), _) => by_rows_or_columns = true,
            (None, Some(Value::Symbol(a))) => return Some(Deploy::Area(a.to_string())),
            (None, Some(Value::Unknown(u))) => return Some(Deploy::Unknown(*u)),
            (None, Some(Value::Text(t))) => return Some(Deploy::Described(t.to_string())),
            (None, _) => {}
        }
    }
    by_rows_or_columns.then_some(Deploy::Hexes { columns, rows })
}

/// Places: hex labels, or points written as `[x, y]` (a list of two lengths).
fn neutral(b: &ConfigBlock) -> NeutralDef {
    let mut pieces_out = Vec::new();
    if let Some(p) = prop(b, "pieces") {
        for e in flat(p) {
            if let Some(Pieces::Of { entity, count }) = pieces(e) {
                pieces_out.extend(std::iter::repeat_n(entity, count.min(1000) as usize));
            }
        }
    }
    let mut at = Vec::new();
    let place = |v: &Value| match v {
        Value::Symbol(s) => HexLabel::parse(s).map(Place::Hex),
        Value::Unknown(u) => Some(Place::Unknown(*u)),
        _ => None,
    };
    let coord = |e: &Expr| match konst(e) {
        Some(Value::Length(n) | Value::Int(n)) => Some(*n),
        _ => None,
    };
    if let Some(p) = prop(b, "at") {
        for (_, e) in &p.values {
            match e {
                Expr::List(items)
                    if items.len() == 2 && items.iter().all(|x| coord(x).is_some()) =>
                {
                    if let (Some(x), Some(y)) = (coord(&items[0]), coord(&items[1])) {
                        at.push(Place::Point(x, y));
                    }
                }
                Expr::List(items) => {
                    at.extend(items.iter().filter_map(|x| konst(x).and_then(place)))
                }
                e => at.extend(konst(e).and_then(place)),
            }
        }
    }
    NeutralDef {
        pieces: pieces_out,
        at,
    }
}
