//! Boards and scenarios as typed IR ([`ir::BoardDef`], [`ir::ScenarioDef`]), read out of
//! their lowered config blocks once every name is resolved. Mistakes were reported by
//! `scenario.rs` with their spans; what cannot be read here is left out, so a program with
//! errors still lowers.

use super::{Located, Lowerer};
use crate::ir::{
    self, BinOp, BoardDef, BoardShape, ConfigBlock, Count, Deploy, Expr, ForceDef, HexLabel,
    NeutralDef, Pieces, Place, Property, ScenarioDef, Value,
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

fn name(e: &Expr) -> Option<&str> {
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
                boards.push(board(b, i as u32));
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
                    .filter(|(n, _)| n != "victory")
                    .cloned()
                    .collect(),
                victory: sc
                    .hooks
                    .iter()
                    .find(|(n, _)| n == "victory")
                    .map(|(_, p)| *p),
                config: i as u32,
                file,
                line,
                cite: sc.cite.clone(),
            });
        }
        self.program.boards = boards;
        self.program.scenarios = scenarios;
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

fn board(b: &ConfigBlock, config: u32) -> BoardDef {
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
            .map(|a| a.name.clone().unwrap_or_default())
            .collect(),
        config,
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
            (None, Some(Value::Symbol(a))) => return Some(Deploy::Area(a.clone())),
            (None, Some(Value::Unknown(u))) => return Some(Deploy::Unknown(*u)),
            (None, Some(Value::Text(t))) => return Some(Deploy::Described(t.clone())),
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
