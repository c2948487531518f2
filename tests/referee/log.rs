//! Reading a game log as a referee: JSON lines in, the referee's own event type out. Nothing
//! here comes from the engine: the log is text, and this is what the referee makes of it.

use std::collections::BTreeMap;

use serde_json::Value;

/// A place as the log writes it: a hex label, or a point in tenths of a millimetre.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    Hex(String),
    Point(i64, i64),
}

fn at(v: &Value) -> Option<At> {
    if let Some(h) = v.get("hex").and_then(Value::as_str) {
        return Some(At::Hex(h.to_string()));
    }
    Some(At::Point(v.get("x")?.as_i64()?, v.get("y")?.as_i64()?))
}

/// One event of the log, as far as a referee reads it.
#[derive(Debug, Clone)]
pub enum Ev {
    Turn(u32),
    Phase,
    Chip(String),
    /// An activation begins: what gave it (`chip`, `free action`) and the side.
    Activated {
        by: String,
        side: String,
    },
    Deployed {
        piece: String,
        at: At,
    },
    Acted {
        side: String,
        action: String,
        args: Vec<String>,
    },
    Moved {
        piece: String,
        from: Option<At>,
        to: At,
        path: Vec<String>,
        why: String,
    },
    Resolved {
        name: String,
        args: Vec<String>,
        dice: Vec<(String, i64)>,
        result: String,
    },
    Eliminated {
        piece: String,
    },
    /// A piece on the table went back into its force's reserve (`to_reserve`).
    Withdrawn {
        piece: String,
        from: Option<At>,
        why: String,
    },
    /// A piece held off the table came onto it.
    Entered {
        piece: String,
        at: At,
        why: String,
    },
    Exited {
        piece: String,
        at: Option<At>,
    },
    Marked {
        marker: String,
        piece: Option<String>,
        at: Option<At>,
    },
    Unmarked {
        marker: String,
        piece: Option<String>,
        at: Option<At>,
    },
    End {
        winner: Option<String>,
    },
    /// An eliminated piece picked up by a piece on the board.
    Carried {
        piece: String,
        by: String,
    },
    /// A carried piece taken off the board with its carrier.
    CarriedOff {
        piece: String,
        at: Option<At>,
    },
    /// A face-down piece turned face up for one action.
    Shown {
        piece: String,
    },
    /// A secret counter of a piece took a value (known to the piece's side only).
    Counted {
        piece: String,
        counter: String,
        value: i64,
    },
    /// A side's choice: the `acted` events up to the next one are that one choice (a move
    /// together, 4.d's exception, is one choice of several pieces).
    Decision,
    /// Events a referee has no rule about (decisions, narrative lines).
    Other,
}

fn s(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The events of a log's text (its first line is the header).
pub fn read(text: &str) -> Vec<Ev> {
    let mut out = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("a log line is JSON");
        let piece = || s(&v, "piece");
        let opt_piece = || v.get("piece").and_then(Value::as_str).map(String::from);
        let ev = match v["event"].as_str().unwrap_or_default() {
            "turn" => Ev::Turn(v["turn"].as_u64().unwrap_or(0) as u32),
            "phase" => Ev::Phase,
            "decision" => Ev::Decision,
            "chip" => Ev::Chip(s(&v, "side")),
            "activated" => Ev::Activated {
                by: s(&v, "by"),
                side: s(&v, "side"),
            },
            "deployed" => Ev::Deployed {
                piece: piece(),
                at: at(&v["at"]).expect("a set-up place"),
            },
            "acted" => Ev::Acted {
                side: s(&v, "side"),
                action: s(&v, "action"),
                args: strings(&v, "args"),
            },
            "moved" => Ev::Moved {
                piece: piece(),
                from: at(&v["from"]),
                to: at(&v["to"]).expect("a move goes somewhere"),
                path: strings(&v, "path"),
                why: s(&v, "why"),
            },
            "resolved" => Ev::Resolved {
                name: s(&v, "name"),
                args: strings(&v, "args"),
                dice: v["dice"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|d| (s(d, "die"), d["face"].as_i64().unwrap_or(0)))
                            .collect()
                    })
                    .unwrap_or_default(),
                result: s(&v, "result"),
            },
            "eliminated" => Ev::Eliminated { piece: piece() },
            "shown" => Ev::Shown { piece: piece() },
            "carried" => Ev::Carried {
                piece: piece(),
                by: s(&v, "by"),
            },
            "carried_off" => Ev::CarriedOff {
                piece: piece(),
                at: at(&v["at"]),
            },
            "entered" => Ev::Entered {
                piece: piece(),
                at: at(&v["at"]).expect("a place to come in at"),
                why: s(&v, "why"),
            },
            "withdrawn" => Ev::Withdrawn {
                piece: piece(),
                from: at(&v["from"]),
                why: s(&v, "why"),
            },
            "exited" => Ev::Exited {
                piece: piece(),
                at: at(&v["at"]),
            },
            "marked" => Ev::Marked {
                marker: s(&v, "marker"),
                piece: opt_piece(),
                at: at(&v["at"]),
            },
            "unmarked" => Ev::Unmarked {
                marker: s(&v, "marker"),
                piece: opt_piece(),
                at: at(&v["at"]),
            },
            "counted" => Ev::Counted {
                piece: piece(),
                counter: s(&v, "counter"),
                value: v["value"].as_i64().unwrap_or(0),
            },
            "end" => Ev::End {
                winner: v["winner"].as_str().map(String::from),
            },
            _ => Ev::Other,
        };
        out.push(ev);
    }
    out
}

/// The entity a piece label names: `nva_ak47_2_3 #2` → `nva_ak47_2_3`, and on a ruleset
/// whose units belong to no side, `player_1 regular #1` → `regular`.
pub fn entity_of<'a>(label: &'a str, sides: &[String]) -> &'a str {
    let mut l = label;
    for s in sides {
        if let Some(rest) = l.strip_prefix(&format!("{s} ")) {
            l = rest;
        }
    }
    match l.rsplit_once(" #") {
        Some((e, n)) if n.chars().all(|c| c.is_ascii_digit()) => e,
        _ => l,
    }
}

/// What a referee found: per rule, how many events it checked and the violations with an
/// example of each.
#[derive(Default)]
pub struct Report {
    pub games: usize,
    pub checked: BTreeMap<&'static str, usize>,
    pub violations: BTreeMap<&'static str, Vec<String>>,
}

impl Report {
    /// One event checked against `rule`; `bad` says what is wrong, if anything.
    pub fn check(&mut self, rule: &'static str, bad: Option<String>) {
        *self.checked.entry(rule).or_default() += 1;
        let v = self.violations.entry(rule).or_default();
        if let Some(b) = bad {
            v.push(b);
        }
    }

    pub fn total_violations(&self) -> usize {
        self.violations.values().map(Vec::len).sum()
    }

    pub fn show(&self, title: &str) -> String {
        let mut out = format!(
            "{title}: {} games, {} events checked, {} violations\n",
            self.games,
            self.checked.values().sum::<usize>(),
            self.total_violations()
        );
        for (rule, n) in &self.checked {
            let v = &self.violations[rule];
            out.push_str(&format!("  {rule}: {n} checked, {} violations\n", v.len()));
            if let Some(first) = v.first() {
                out.push_str(&format!("    e.g. {first}\n"));
            }
        }
        out
    }
}

/// A written length (`6in`, `15cm`, `20mm`) in tenths of a millimetre, as the log counts.
pub fn length(text: &str) -> Option<i64> {
    let t = text.trim();
    let (n, per) = if let Some(n) = t.strip_suffix("in") {
        (n, 254.0)
    } else if let Some(n) = t.strip_suffix("cm") {
        (n, 100.0)
    } else if let Some(n) = t.strip_suffix("mm") {
        (n, 10.0)
    } else {
        return None;
    };
    Some((n.trim().parse::<f64>().ok()? * per).round() as i64)
}

/// A value of the compiled rules (IR JSON) read as data: an integer, a length, a boolean, a
/// symbol; an unknown (`?`) is looked up in the assumptions text by its name.
pub fn constant(ir: &Value, c: &Value, assumed: &BTreeMap<String, String>) -> Option<Value> {
    let c = c.get("Const").unwrap_or(c);
    if let Some(id) = c.get("Unknown").and_then(Value::as_u64) {
        let name = ir["unknowns"][id as usize]["name"].as_str()?;
        let text = assumed.get(name)?;
        return Some(match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            t => {
                if let Some(n) = length(t) {
                    Value::from(n)
                } else if let Ok(n) = t.parse::<i64>() {
                    Value::from(n)
                } else if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    // A name: an enum member such as `rifle`.
                    Value::from(t)
                } else {
                    return None;
                }
            }
        });
    }
    for k in ["Int", "Length"] {
        if let Some(n) = c.get(k).and_then(Value::as_i64) {
            return Some(Value::from(n));
        }
    }
    if let Some(b) = c.get("Bool").and_then(Value::as_bool) {
        return Some(Value::Bool(b));
    }
    c.get("Symbol").cloned()
}

/// `assume NAME = VALUE "why"` lines of an assumptions file.
pub fn assumptions(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("assume "))
        .filter_map(|l| {
            let (name, rest) = l.split_once('=')?;
            let value = rest.trim().split(" \"").next()?.trim();
            Some((name.trim().to_string(), value.to_string()))
        })
        .collect()
}

/// An entity's field from the IR, as data.
pub fn field(
    ir: &Value,
    entity: &str,
    name: &str,
    assumed: &BTreeMap<String, String>,
) -> Option<Value> {
    let e = ir["entities"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == entity)?;
    let f = e["fields"].as_array()?.iter().find(|f| f[0] == name)?;
    constant(ir, &f[1], assumed)
}

/// A config block (board, scenario) by keyword and name.
pub fn config<'a>(ir: &'a Value, keyword: &str, name: &str) -> Option<&'a Value> {
    ir["configs"]
        .as_array()?
        .iter()
        .find(|c| c["keyword"] == keyword && c["name"] == name)
}

/// A property's values of a config block: (key of the pair, value).
pub fn prop<'a>(c: &'a Value, key: &str) -> Vec<(Option<&'a str>, &'a Value)> {
    c["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["key"] == key))
        .and_then(|p| p["values"].as_array())
        .map(|vs| vs.iter().map(|v| (v[0].as_str(), &v[1])).collect())
        .unwrap_or_default()
}

/// The board a scenario is played on: a stand-in board that says it stands in for the
/// scenario's board, else that board.
pub fn board<'a>(ir: &'a Value, scenario: &Value) -> &'a Value {
    let named = prop(scenario, "board")
        .first()
        .and_then(|(_, v)| v["Const"]["Symbol"].as_str())
        .unwrap_or_default()
        .to_string();
    ir["configs"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| {
                    c["keyword"] == "board"
                        && prop(c, "stand_in")
                            .first()
                            .is_some_and(|(_, v)| v["Const"]["Symbol"] == named.as_str())
                })
                .or_else(|| config(ir, "board", &named))
        })
        .expect("the scenario's board")
}

/// The length of the segment a-b inside the rectangle `(x0, y0, x1, y1)` (Liang-Barsky
/// clipping).
pub fn length_inside(r: (f64, f64, f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.0),
        (dx, r.2 - a.0),
        (-dy, a.1 - r.1),
        (dy, r.3 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return 0.0;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t1 <= t0 {
        0.0
    } else {
        (t1 - t0) * (dx * dx + dy * dy).sqrt()
    }
}

/// A board's terrain features: each one's terrain (its entity's name) and its rectangle
/// `[x0, y0, x1, y1]` in the rules' length units (features without four corners left out).
pub fn features(
    ir: &Value,
    board: &Value,
    assumed: &BTreeMap<String, String>,
) -> Vec<(String, [f64; 4])> {
    board["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["keyword"] == "feature")
        .filter_map(|f| {
            let r: Vec<f64> = prop(f, "rect")
                .iter()
                .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_f64()))
                .collect();
            let name = prop(f, "terrain")
                .first()
                .and_then(|(_, v)| v["Const"]["Entity"].as_u64())
                .and_then(|i| ir["entities"][i as usize]["name"].as_str())
                .unwrap_or_default()
                .to_string();
            (r.len() == 4).then(|| (name, [r[0], r[1], r[2], r[3]]))
        })
        .collect()
}

/// A list of pieces as an assumption writes it (`[regular, 2 * guard]`): each name with its
/// count (1 when none is written).
pub fn counted_pieces(text: &str) -> Vec<(usize, String)> {
    text.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once('*') {
            Some((n, name)) => (n.trim().parse().expect("a count"), name.trim().to_string()),
            None => (1, item.to_string()),
        })
        .collect()
}

/// The entity a piece's label names, without the number the engine gives each copy
/// (`vc_squad #2` is a `vc_squad`).
pub fn entity(label: &str) -> &str {
    match label.rsplit_once(" #") {
        Some((e, n)) if n.chars().all(|c| c.is_ascii_digit()) => e,
        _ => label,
    }
}

/// A point as an action's argument shows it, `[x, y]`.
pub fn point_arg<T: std::str::FromStr>(s: &str) -> Option<(T, T)> {
    let t = s.trim().trim_start_matches('[').trim_end_matches(']');
    let (x, y) = t.split_once(',')?;
    Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
}

/// An event's point, `{"x": …, "y": …}`, in tenths of a millimetre.
pub fn point(v: &Value) -> Option<(i64, i64)> {
    Some((v.get("x")?.as_i64()?, v.get("y")?.as_i64()?))
}

/// An event's point, for a referee that measures in floating point.
pub fn point_f64(v: &Value) -> Option<(f64, f64)> {
    Some((v.get("x")?.as_f64()?, v.get("y")?.as_f64()?))
}

/// The faces of an event's dice, in the order rolled.
pub fn faces(ev: &Value) -> Vec<i64> {
    ev["dice"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["face"].as_i64())
        .collect()
}

/// An action event's arguments as the log shows them.
pub fn args(ev: &Value) -> Vec<String> {
    ev["args"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The distance between two points, in tenths of a millimetre.
pub fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    (((a.0 - b.0) as f64).powi(2) + ((a.1 - b.1) as f64).powi(2)).sqrt()
}

/// [`dist`] rounded to a whole tenth of a millimetre.
pub fn dist_rounded(a: (i64, i64), b: (i64, i64)) -> i64 {
    dist(a, b).round() as i64
}

/// Whether two points lie within `r` of each other, exactly.
pub fn within(a: (i64, i64), b: (i64, i64), r: i64) -> bool {
    let (dx, dy) = (i128::from(a.0 - b.0), i128::from(a.1 - b.1));
    dx * dx + dy * dy <= i128::from(r) * i128::from(r)
}

/// The distance from c to the segment a-b.
pub fn seg_dist(a: (i64, i64), b: (i64, i64), c: (i64, i64)) -> f64 {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return dist(a, c);
    }
    let t = (((c.0 - a.0) as f64 * dx + (c.1 - a.1) as f64 * dy) / len2).clamp(0.0, 1.0);
    let p = (a.0 as f64 + t * dx, a.1 as f64 + t * dy);
    ((p.0 - c.0 as f64).powi(2) + (p.1 - c.1 as f64).powi(2)).sqrt()
}
