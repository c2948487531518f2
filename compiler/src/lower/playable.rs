//! The values the engine sets a game up with, checked where they are written: a phase's
//! actions, the sides an activation orders, a deck's cards, chip and copy counts, a force's
//! markers, a table's sizes and shapes, the hexes a board paints, and whether the engine plays
//! the board at all. Each was once refused only by `run`; the typed IR (`typed.rs`, `turn.rs`)
//! leaves out what is reported here.

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::scenario::{Board, Shape, children, flat, hex_label, name_of, prop, properties};
use super::{Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::scenario::{MAX_CHIPS, MAX_COORD, MAX_COPIES, MAX_TABLE};
use crate::ir::turn::{MAX_CARDS, MAX_DIRECTIONS, MAX_STEPS};
use crate::ir::{Category, ProcKind};
use crate::source::FileId;

/// A whole number as written, `-3` included.
fn signed(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        ExprKind::Unary {
            op: ast::UnOp::Neg,
            operand,
        } => signed(operand).map(|n| -n),
        _ => None,
    }
}

/// A length as written (a bare number is taken as tenths of a millimetre, as the engine did).
fn length(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Length(n) => Some(*n),
        ExprKind::Unary {
            op: ast::UnOp::Neg,
            operand,
        } => length(operand).and_then(i64::checked_neg),
        _ => signed(e),
    }
}

impl Lowerer<'_> {
    pub(super) fn check_playable(
        &mut self,
        boards: &[Board],
        activations: &[(FileId, &ast::Config)],
        turns: &[(FileId, &ast::Config)],
        scenarios: &[(FileId, &ast::Config)],
    ) {
        for &(file, a) in activations {
            self.check_activation_values(file, a);
        }
        for &(file, t) in turns {
            self.check_turn_values(file, t);
        }
        for b in boards {
            self.check_board_values(b);
        }
        let mut turn_missing = turns.is_empty();
        for &(file, s) in scenarios {
            let playable = children(s).any(|f| f.keyword.name == "force");
            if !playable {
                continue;
            }
            // Said once, at the first scenario that would be played.
            if std::mem::take(&mut turn_missing) {
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioMissingProperty,
                        file,
                        s.name.as_ref().map_or(s.keyword.span, |n| n.span),
                        "the ruleset has no `turn` block, so this scenario cannot be played",
                    )
                    .label("no turn to play")
                    .help("declare the turn: `turn { phase NAME \"…\" { activation: …, actions: … } }`"),
                );
            }
            self.check_chip_counts(file, s);
            self.check_board_played(file, s, boards);
            for f in children(s).filter(|f| f.keyword.name == "force") {
                self.check_copies(file, f, &["units", "markers"]);
                self.check_markers(file, f, s, boards);
                self.check_deploy_check(file, f);
            }
            for n in children(s).filter(|n| n.keyword.name == "neutral") {
                self.check_copies(file, n, &["pieces"]);
            }
        }
    }

    /// `deploy_check:` names a `procedure` of a piece and a place that gives `result` true
    /// where the piece may be set up: the engine calls it for every set-up point it offers.
    fn check_deploy_check(&mut self, file: FileId, f: &ast::Config) {
        let Some((_, values)) = prop(f, "deploy_check") else {
            return;
        };
        for e in flat(values) {
            let sym = name_of(e).and_then(|n| self.globals.get(n)).map(|d| d.sym);
            let fits = match sym {
                Some(Sym::Proc(p)) => {
                    let def = &self.program.procs[p as usize];
                    def.kind == ProcKind::Procedure
                        && def.params.len() == 2
                        && matches!(def.params[0].ty, crate::ir::Type::Entity(_))
                }
                // An unknown name is reported when it is resolved.
                None => name_of(e).is_some(),
                _ => false,
            };
            if !fits {
                self.bad_value(
                    file,
                    e.span,
                    "`deploy_check:` names a procedure of a piece and a place".to_string(),
                    "not such a procedure",
                    "declare `procedure NAME(p: KIND, at: place) { result … }`, true where the piece may be set up",
                );
            }
        }
    }

    fn bad_value(&mut self, file: FileId, span: Span, message: String, label: &str, help: &str) {
        self.diags.push(
            Diagnostic::new(Code::ScenarioBadValue, file, span, message)
                .label(label.to_string())
                .help(help.to_string()),
        );
    }

    /// Every entry of a phase's `actions:` (and an activation's `together:`, checked in
    /// `activation.rs`) is an action: the engine offers nothing else.
    fn check_turn_values(&mut self, file: FileId, t: &ast::Config) {
        if let Some((_, v)) = prop(t, "limit")
            && let Some(e) = v.first()
            && let Some(n) = signed(&e.value)
            && !(1..=i64::from(crate::ir::scenario::MAX_TURNS)).contains(&n)
        {
            let max = crate::ir::scenario::MAX_TURNS;
            self.bad_value(
                file,
                e.value.span,
                format!("a game lasts 1 to {max} turns, not {n}"),
                "out of range",
                &format!("give a number of turns from 1 to {max}"),
            );
        }
        // Only a marker can be put on and taken off a piece: nothing else could conceal it.
        if let Some((_, values)) = prop(t, "concealing_markers") {
            for e in flat(values) {
                let sym = name_of(e).and_then(|n| self.globals.get(n)).map(|d| d.sym);
                let is_marker = match sym {
                    Some(Sym::Entity(id)) => {
                        self.program.entities[id as usize].category == Category::Marker
                    }
                    // An unknown name is reported when it is resolved.
                    None => name_of(e).is_some(),
                    _ => false,
                };
                if !is_marker {
                    self.bad_value(
                        file,
                        e.span,
                        "`concealing_markers:` lists markers".to_string(),
                        "not a marker",
                        "name the `marker`s whose bearer the other sides cannot see",
                    );
                }
            }
        }
        for ph in children(t).filter(|p| p.keyword.name == "phase") {
            let Some((_, values)) = prop(ph, "actions") else {
                continue;
            };
            for e in flat(values) {
                let sym = name_of(e).and_then(|n| self.globals.get(n)).map(|d| d.sym);
                let what = match sym {
                    Some(Sym::Proc(p))
                        if self.program.procs[p as usize].kind == ProcKind::Action =>
                    {
                        continue;
                    }
                    // An unknown name is reported when it is resolved.
                    None if name_of(e).is_some() => continue,
                    Some(Sym::Proc(p)) => format!(
                        "`{}` is a {}, not an action",
                        self.program.procs[p as usize].name,
                        match self.program.procs[p as usize].kind {
                            ProcKind::Resolve => "resolution",
                            _ => "procedure",
                        }
                    ),
                    _ => "this is not an action".to_string(),
                };
                self.diags.push(
                    Diagnostic::new(
                        Code::ActivationNotAction,
                        file,
                        e.span,
                        format!("a phase's `actions:` lists only actions: {what}"),
                    )
                    .label("not an action")
                    .help("list the `action` definitions the phase offers; call other procedures from an action or a hook"),
                );
            }
        }
    }

    fn check_activation_values(&mut self, file: FileId, a: &ast::Config) {
        for key in ["order", "first", "sides"] {
            let Some((_, values)) = prop(a, key) else {
                continue;
            };
            for e in flat(values) {
                match &e.kind {
                    ExprKind::Unknown(_) => {}
                    ExprKind::Name(n) => {
                        let n = n.clone();
                        self.check_side(file, &n, e.span, key);
                    }
                    _ => self.bad_value(
                        file,
                        e.span,
                        format!("`{key}:` lists sides"),
                        "not a side",
                        "name the sides in the order they act",
                    ),
                }
            }
        }
        if a.scheme.as_ref().is_none_or(|s| s.name != "deck") {
            return;
        }
        let mut cards: i64 = 0;
        for (key, values) in properties(a) {
            match key.name.as_str() {
                "card" | "insert" => {
                    let what = key.name.clone();
                    match values.iter().find(|v| v.name.is_none()) {
                        Some(v) if matches!(v.value.kind, ExprKind::Name(_) | ExprKind::Str(_)) => {
                            let sym = name_of(&v.value)
                                .and_then(|n| self.globals.get(n))
                                .map(|d| d.sym);
                            if let Some(Sym::Side(_) | Sym::Entity(_) | Sym::Die(_)) = sym {
                                self.bad_value(
                                    file,
                                    v.value.span,
                                    "a card's name is a label, and this names a definition"
                                        .to_string(),
                                    "not a card label",
                                    "give the card a name of its own (`card: red, side = us`)",
                                );
                            }
                        }
                        Some(v) => self.bad_value(
                            file,
                            v.value.span,
                            format!("a `{what}:` line starts with the card's name"),
                            "not a card label",
                            "write `card: red, count = 10, side = SIDE`",
                        ),
                        None => self.diags.push(
                            Diagnostic::new(
                                Code::ScenarioMissingProperty,
                                file,
                                key.span,
                                format!("this `{what}:` line names no card"),
                            )
                            .label("no card name")
                            .help("write `card: red, count = 10, side = SIDE`"),
                        ),
                    }
                    let mut count = 1;
                    for v in values {
                        let Some(n) = &v.name else { continue };
                        match n.name.as_str() {
                            "count" | "replaces" => match signed(&v.value) {
                                Some(c) if (0..=i64::from(MAX_CARDS)).contains(&c) => {
                                    if n.name == "count" {
                                        count = c;
                                    }
                                }
                                // The deck is dealt as lowered: no assumption reaches it.
                                _ if matches!(v.value.kind, ExprKind::Unknown(_)) => self.bad_value(
                                    file,
                                    v.value.span,
                                    format!(
                                        "a deck's `{}` cannot be left `?`: the engine deals the deck as written, before any assumption is read",
                                        n.name
                                    ),
                                    "unknown card count",
                                    "write the number the book prints; where it prints none, write your reading and record it among the system's labelled assumptions",
                                ),
                                _ => self.bad_value(
                                    file,
                                    v.value.span,
                                    format!(
                                        "`{}` is a number of cards from 0 to {MAX_CARDS}",
                                        n.name
                                    ),
                                    "not a card count",
                                    "give the number of cards the book prints",
                                ),
                            },
                            "side" => {
                                if let Some(s) = name_of(&v.value) {
                                    let s = s.to_string();
                                    self.check_side(file, &s, v.value.span, "side");
                                }
                            }
                            _ => {}
                        }
                    }
                    if what == "card" {
                        let before = cards;
                        cards += count;
                        if before <= i64::from(MAX_CARDS) && cards > i64::from(MAX_CARDS) {
                            self.bad_value(
                                file,
                                key.span,
                                format!("the deck now holds {cards} cards, and a deck holds at most {MAX_CARDS}"),
                                "deck too large",
                                "a deck of the book's size holds far fewer: check the counts",
                            );
                        }
                    }
                }
                "draws_before_reshuffle" => {
                    if let Some(v) = values.first()
                        && signed(&v.value).is_none_or(|n| n < 1)
                    {
                        self.bad_value(
                            file,
                            v.value.span,
                            "`draws_before_reshuffle:` is a number of cards, 1 or more".to_string(),
                            "not 1 or more",
                            "give how many cards are drawn before the deck is reshuffled, or leave it out to draw the whole deck",
                        );
                    }
                }
                "reshuffle" => {
                    if let Some(v) = values.first()
                        && !matches!(name_of(&v.value), Some("on_insert" | "after_draws"))
                    {
                        self.bad_value(
                            file,
                            v.value.span,
                            "a deck's `reshuffle:` is `on_insert` or `after_draws`".to_string(),
                            "not a reshuffle rule",
                            "`on_insert`: inserted cards go in, and the deck is reshuffled, before the next draw; `after_draws` (the default): when the draws run out",
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn check_chip_counts(&mut self, file: FileId, s: &ast::Config) {
        let Some((_, values)) = prop(s, "chips") else {
            return;
        };
        for v in values {
            if let Some(n) = signed(&v.value)
                && !(0..=i64::from(MAX_CHIPS)).contains(&n)
            {
                self.bad_value(
                    file,
                    v.value.span,
                    format!("chip count {n} is out of range: a side has 0 to {MAX_CHIPS} chips"),
                    "out of range",
                    &format!("give each side 0 to {MAX_CHIPS} chips"),
                );
            }
        }
    }

    /// `N * piece` in a force or a neutral block: at most [`MAX_COPIES`] copies.
    fn check_copies(&mut self, file: FileId, c: &ast::Config, keys: &[&str]) {
        for key in keys {
            let Some((_, values)) = prop(c, key) else {
                continue;
            };
            for e in flat(values) {
                let ExprKind::Binary {
                    op: ast::BinOp::Mul,
                    lhs,
                    rhs,
                } = &e.kind
                else {
                    continue;
                };
                let Some((n, span)) = signed(lhs)
                    .map(|n| (n, lhs.span))
                    .or_else(|| signed(rhs).map(|n| (n, rhs.span)))
                else {
                    continue;
                };
                if !(0..=i64::from(MAX_COPIES)).contains(&n) {
                    self.bad_value(
                        file,
                        span,
                        format!(
                            "{n} copies is out of range: 0 to {MAX_COPIES} copies of one piece"
                        ),
                        "out of range",
                        &format!("list at most {MAX_COPIES} copies of one piece"),
                    );
                }
            }
        }
    }

    /// A force's `markers:` are pieces of no side (`3 * bunker`, `bunker = 3`), set up in its
    /// area or in the table area `markers_deploy:` names.
    fn check_markers(&mut self, file: FileId, f: &ast::Config, s: &ast::Config, boards: &[Board]) {
        if let Some((_, values)) = prop(f, "markers") {
            let mut named: Vec<(&str, Span)> = Vec::new();
            for v in values {
                if let Some(n) = &v.name {
                    named.push((&n.name, n.span));
                    continue;
                }
                let items: Vec<&ast::Expr> = match &v.value.kind {
                    ExprKind::List(xs) => xs.iter().collect(),
                    _ => vec![&v.value],
                };
                for e in items {
                    let e = match &e.kind {
                        ExprKind::Binary {
                            op: ast::BinOp::Mul,
                            rhs,
                            lhs,
                        } => {
                            if signed(lhs).is_some() {
                                rhs
                            } else {
                                lhs
                            }
                        }
                        _ => e,
                    };
                    if let Some(n) = name_of(e) {
                        named.push((n, e.span));
                    }
                }
            }
            for (n, span) in named {
                let Some(Sym::Entity(id)) = self.globals.get(n).map(|d| d.sym) else {
                    // Names of nothing are reported when they are resolved.
                    continue;
                };
                let ent = &self.program.entities[id as usize];
                let why = match (ent.category, ent.side) {
                    (Category::Terrain, _) => "is a terrain".to_string(),
                    (_, Some(side)) => {
                        format!("belongs to side {}", self.program.sides[side as usize].name)
                    }
                    _ => continue,
                };
                let message = format!("`{n}` {why}: a force's `markers:` are pieces of no side");
                self.bad_value(
                    file,
                    span,
                    message,
                    "not a marker",
                    "declare it as a `marker`, or list it in `units:`",
                );
            }
        }
        let Some((key, values)) = prop(f, "markers_deploy") else {
            return;
        };
        let board = self.board_of(s, boards);
        let Some(b) = board else { return };
        match (&b.shape, values.first().and_then(|v| name_of(&v.value))) {
            (Shape::Hex { .. }, _) => self.diags.push(
                Diagnostic::new(
                    Code::ScenarioUnknownArea,
                    file,
                    key.span,
                    "`markers_deploy:` names an area of a table, and this board is a hex grid",
                )
                .label("not on a hex board")
                .help("remove it: on a hex board markers set up with the force's `deploy:` rows and columns"),
            ),
            (Shape::Table { .. }, Some(a)) if !b.areas.iter().any(|x| x == a) => {
                let board = b.config.name.as_ref().map_or("", |n| n.name.as_str());
                let help = if b.areas.is_empty() {
                    "declare one on the board: `area NAME { rect: x0, y0, x1, y1 }`".to_string()
                } else {
                    format!("areas of this board: {}", b.areas.join(", "))
                };
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioUnknownArea,
                        file,
                        values[0].value.span,
                        format!("board `{board}` has no area `{a}`"),
                    )
                    .label("no such area")
                    .help(help),
                );
            }
            _ => {}
        }
    }

    /// The board a scenario is played on: the one that stands in for the named board, or it.
    pub(super) fn board_of<'b, 'c>(
        &self,
        s: &ast::Config,
        boards: &'b [Board<'c>],
    ) -> Option<&'b Board<'c>> {
        let name = prop(s, "board")
            .and_then(|(_, v)| v.first())
            .and_then(|v| name_of(&v.value))?;
        boards
            .iter()
            .find(|b| {
                prop(b.config, "stand_in")
                    .and_then(|(_, v)| v.first())
                    .and_then(|v| name_of(&v.value))
                    == Some(name)
            })
            .or_else(|| {
                boards
                    .iter()
                    .find(|b| b.config.name.as_ref().is_some_and(|n| n.name == name))
            })
    }

    /// The engine plays hex grids, open tables and sectors tables.
    fn check_board_played(&mut self, file: FileId, s: &ast::Config, boards: &[Board]) {
        let Some(b) = self.board_of(s, boards) else {
            return;
        };
        let Some(scheme) = &b.config.scheme else {
            return;
        };
        if matches!(scheme.name.as_str(), "hex" | "open" | "sectors") {
            return;
        }
        let board = b.config.name.as_ref().map_or("", |n| n.name.as_str());
        let span = prop(s, "board")
            .and_then(|(_, v)| v.first())
            .map_or(s.keyword.span, |v| v.value.span);
        self.diags.push(
            Diagnostic::new(
                Code::ScenarioUnplayableBoard,
                file,
                span,
                format!(
                    "this scenario is played on `{board}`, a `{}` board, which the engine does not play",
                    scheme.name
                ),
            )
            .label("not a board the engine plays")
            .help(format!(
                "the engine plays hex, open and sectors boards: declare a board that stands in for it (`board NAME: hex {{ stand_in: {board}, … }}`)"
            )),
        );
    }

    /// `entry_cost: FIELD` adds a terrain's FIELD to the cost of entering its hexes: every
    /// terrain that has the field gives a whole number (or `?`).
    fn check_entry_cost(&mut self, file: FileId, c: &ast::Config) {
        let Some(v) = prop(c, "entry_cost").and_then(|(_, v)| v.first()) else {
            return;
        };
        let Some(field) = name_of(&v.value) else {
            return;
        };
        let wrong: Vec<&str> = self
            .program
            .entities
            .iter()
            .filter(|e| e.category == Category::Terrain)
            .filter(|e| {
                e.field(field).is_some_and(|x| {
                    !matches!(x, crate::ir::Value::Int(_) | crate::ir::Value::Unknown(_))
                })
            })
            .map(|e| e.name.as_str())
            .collect();
        if !wrong.is_empty() {
            let message = format!(
                "`entry_cost:` adds the terrain field `{field}` to a move's cost, and it is not a number in {}",
                wrong.join(", ")
            );
            self.bad_value(
                file,
                v.value.span,
                message,
                "not a number field",
                "name a whole-number field of the terrains (`slog: 2`)",
            );
        }
    }

    fn check_board_values(&mut self, b: &Board) {
        let (file, c) = (b.file, b.config);
        let scheme = c.scheme.as_ref().map(|s| s.name.as_str());
        if scheme == Some("hex") {
            self.check_entry_cost(file, c);
            // Every entry of `terrain: NAME = [B2, …]`, a region's `hexes:` and `exits:`
            // is a hex label.
            let mut lists: Vec<&ast::Expr> = Vec::new();
            if let Some((_, values)) = prop(c, "terrain") {
                for v in values.iter().filter(|v| v.name.is_some()) {
                    lists.extend(flat(std::slice::from_ref(v)));
                }
            }
            for region in children(c).filter(|r| r.keyword.name == "region") {
                if let Some((_, v)) = prop(region, "hexes") {
                    lists.extend(flat(v));
                }
            }
            if let Some((_, v)) = prop(c, "exits") {
                lists.extend(flat(v));
            }
            for e in lists {
                let label = name_of(e).is_some_and(|n| hex_label(n).is_some());
                if !label && !matches!(e.kind, ExprKind::Unknown(_)) {
                    self.bad_value(
                        file,
                        e.span,
                        "this is not a hex label".to_string(),
                        "not a hex",
                        "name hexes by column letters and row number, as printed: `B12`",
                    );
                }
            }
            return;
        }
        if !matches!(scheme, Some("open" | "sectors")) {
            return;
        }
        for k in ["width", "depth"] {
            if let Some((_, v)) = prop(c, k)
                && let Some(v) = v.first()
                && let ExprKind::Length(n) = v.value.kind
                && !(1..=MAX_TABLE).contains(&n)
            {
                let max = crate::ir::show_length(MAX_TABLE, self.program.length_unit.as_deref());
                self.bad_value(
                    file,
                    v.value.span,
                    format!("a table's `{k}:` is more than 0 and at most {max}"),
                    "out of range",
                    "give the table's size as the book prints it",
                );
            }
        }
        for (key, max) in [
            ("move_directions", MAX_DIRECTIONS),
            ("move_steps", MAX_STEPS),
        ] {
            if let Some((_, v)) = prop(c, key)
                && let Some(v) = v.first()
                && !signed(&v.value).is_some_and(|n| (0..=i64::from(max)).contains(&n))
            {
                self.bad_value(
                    file,
                    v.value.span,
                    format!("`{key}:` is a whole number from 0 to {max}"),
                    "out of range",
                    &format!("give 0 to {max}, or leave it out for the engine's default"),
                );
            }
        }
        if scheme == Some("sectors")
            && let Some((_, v)) = prop(c, "zones")
            && let Some(v) = v.first()
            && signed(&v.value).is_none_or(|n| n < 1)
        {
            self.bad_value(
                file,
                v.value.span,
                "`zones:` is a number of zones per side of a sector, 1 or more".to_string(),
                "not 1 or more",
                "give how many zones each side of a sector is cut into, or leave it out for 1",
            );
        }
        let sight = prop(c, "blocks_sight")
            .and_then(|(_, v)| v.first())
            .and_then(|v| name_of(&v.value))
            .map(str::to_string);
        for blk in children(c).filter(|x| matches!(x.keyword.name.as_str(), "area" | "feature")) {
            for (key, n, shape) in [("rect", 4, "x0, y0, x1, y1"), ("circle", 3, "x, y, radius")] {
                let Some((k, values)) = prop(blk, key) else {
                    continue;
                };
                let items = flat(values);
                if items.len() != n || items.iter().any(|e| length(e).is_none()) {
                    self.bad_value(
                        file,
                        k.span,
                        format!("`{key}:` takes {n} lengths: {shape}"),
                        "not a shape",
                        &format!("write `{key}: {shape}` with lengths, e.g. `6in`"),
                    );
                } else if let Some(e) = items.iter().find(|e| {
                    length(e).is_some_and(|v| {
                        !(-MAX_COORD..=MAX_COORD).contains(&v) || (key == "circle" && v < 0)
                    })
                }) {
                    // The engine's geometry holds points within a kilometre of the corner.
                    self.bad_value(
                        file,
                        e.span,
                        format!("`{key}:` takes lengths within 1 km, and a radius of 0 or more"),
                        "out of range",
                        "give the shape as the book draws it",
                    );
                }
            }
            // A feature's terrain blocks sight when its `blocks_sight:` field says so.
            if blk.keyword.name == "feature"
                && let Some(field) = &sight
                && let Some((_, v)) = prop(blk, "terrain")
                && let Some(v) = v.first()
                && let Some(t) = name_of(&v.value)
                && let Some(Sym::Entity(id)) = self.globals.get(t).map(|d| d.sym)
                && self.program.entities[id as usize].field(field).is_none()
            {
                self.bad_value(
                    file,
                    v.value.span,
                    format!("terrain `{t}` has no field `{field}`, which the board's `blocks_sight:` reads"),
                    "no such field",
                    &format!("give every terrain a table's features use the field `{field}: true` or `false`"),
                );
            }
        }
    }
}
