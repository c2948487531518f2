//! A generator of well-typed `.sand` resolutions from fuzzer bytes.
//!
//! Mutating rulebook text rarely gets past the checker, so the evaluators would hardly be
//! fuzzed. This builds programs the checker accepts by construction: custom dice, enums,
//! tables keyed by a die (and an enum), modifier stacks, helper procedures and resolutions
//! made of `let`, `if`, `bands`, `result` and `outcome` over dice, pools, pool functions,
//! arithmetic, comparisons and look-ups. Every choice is read from the bytes, so libFuzzer's
//! mutations move through the space of programs rather than the space of strings.

use arbitrary::{Result, Unstructured};
use std::fmt::Write;

/// How deep expressions and nested `if`s go: deep enough to combine every form, shallow
/// enough that exact enumeration mostly stays within the work limit.
const MAX_DEPTH: u32 = 4;

struct Table {
    name: String,
    die: i64,
    /// The enum of the second key, with its members.
    column: Option<(String, Vec<String>)>,
}

struct Stack {
    name: String,
}

struct Proc {
    name: String,
}

#[derive(Default, Clone)]
struct Scope {
    ints: Vec<String>,
    bools: Vec<String>,
}

pub struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    out: String,
    dice: Vec<String>,
    enums: Vec<(String, Vec<String>)>,
    tables: Vec<Table>,
    stacks: Vec<Stack>,
    procs: Vec<Proc>,
    fresh: u32,
}

/// A program the checker should accept, built from the bytes (an empty program when they run out
/// at once).
pub fn program(u: &mut Unstructured<'_>) -> Result<String> {
    let mut g = Gen {
        u,
        out: String::new(),
        dice: Vec::new(),
        enums: Vec::new(),
        tables: Vec::new(),
        stacks: Vec::new(),
        procs: Vec::new(),
        fresh: 0,
    };
    g.out.push_str("ruleset \"Fuzz\" { source: \"generated\" }\n");
    for _ in 0..g.u.int_in_range(0..=2)? {
        g.die()?;
    }
    for _ in 0..g.u.int_in_range(0..=1)? {
        g.enumeration()?;
    }
    for _ in 0..g.u.int_in_range(0..=2)? {
        g.table()?;
    }
    for _ in 0..g.u.int_in_range(0..=2)? {
        g.stack()?;
    }
    for _ in 0..g.u.int_in_range(0..=2)? {
        g.procedure("procedure")?;
    }
    for _ in 0..g.u.int_in_range(1..=3)? {
        g.procedure("resolve")?;
    }
    Ok(g.out)
}

impl Gen<'_, '_> {
    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn small(&mut self) -> Result<i64> {
        self.u.int_in_range(-12..=12)
    }

    /// A literal: mostly small, now and then one near the ends of 64 bits so overflow is tried.
    fn literal(&mut self) -> Result<String> {
        Ok(match self.u.int_in_range(0..=15)? {
            0 => i64::MAX.to_string(),
            1 => format!("-{}", i64::MAX),
            2 => (1i64 << self.u.int_in_range(31..=62)?).to_string(),
            _ => self.small()?.to_string(),
        })
    }

    fn die_sides(&mut self) -> Result<i64> {
        Ok(match self.u.int_in_range(0..=7)? {
            0 => 2,
            1 => 3,
            2 => 4,
            3 => 8,
            4 => 10,
            5 => 12,
            6 => 20,
            _ => 6,
        })
    }

    fn die(&mut self) -> Result<()> {
        let name = self.name("c");
        let n = self.u.int_in_range(1..=8)?;
        let mut faces = Vec::new();
        for _ in 0..n {
            faces.push(self.u.int_in_range(-3..=9)?.to_string());
        }
        writeln!(self.out, "die {name} = [{}]", faces.join(", ")).unwrap();
        self.dice.push(name);
        Ok(())
    }

    fn enumeration(&mut self) -> Result<()> {
        let name = self.name("e");
        let n = self.u.int_in_range(1..=4)?;
        let members: Vec<String> = (0..n).map(|_| self.name("m")).collect();
        writeln!(self.out, "enum {name} {{ {} }}", members.join(", ")).unwrap();
        self.enums.push((name, members));
        Ok(())
    }

    /// Row keys that cover the faces `1..=sides` with ranges, in order, without overlap.
    fn row_keys(&mut self, sides: i64) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut lo = 1;
        while lo <= sides {
            let hi = if self.u.ratio(1, 2)? {
                lo
            } else {
                self.u.int_in_range(lo..=sides)?
            };
            keys.push(if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..={hi}")
            });
            lo = hi + 1;
        }
        Ok(keys)
    }

    fn table(&mut self) -> Result<()> {
        let name = self.name("t");
        let die = self.u.int_in_range(2..=8)?;
        let column = if !self.enums.is_empty() && self.u.ratio(1, 2)? {
            let i = self.u.choose_index(self.enums.len())?;
            Some(self.enums[i].clone())
        } else {
            None
        };
        let keys = self.row_keys(die)?;
        match &column {
            None => writeln!(self.out, "table {name}(roll: d{die}) {{").unwrap(),
            Some((e, members)) => {
                writeln!(self.out, "table {name}(roll: d{die}, col: {e}) {{").unwrap();
                writeln!(self.out, "  columns {}", members.join(", ")).unwrap();
            }
        }
        let width = column.as_ref().map_or(1, |(_, m)| m.len());
        for k in keys {
            let cells: Vec<String> = (0..width)
                .map(|_| self.small().map(|v| v.to_string()))
                .collect::<Result<_>>()?;
            writeln!(self.out, "  {k} => {}", cells.join(", ")).unwrap();
        }
        self.out.push_str("}\n");
        self.tables.push(Table { name, die, column });
        Ok(())
    }

    fn stack(&mut self) -> Result<()> {
        let name = self.name("s");
        let clamp = if self.u.ratio(1, 3)? {
            let lo = self.u.int_in_range(-6..=0)?;
            let hi = self.u.int_in_range(lo..=6)?;
            format!(" clamp {lo}..={hi}")
        } else {
            String::new()
        };
        writeln!(self.out, "stack {name}(q: 0..=5, flag: bool){clamp} {{").unwrap();
        let scope = Scope {
            ints: vec!["q".into()],
            bools: vec!["flag".into()],
        };
        for i in 0..self.u.int_in_range(1..=4)? {
            let mut v = self.u.int_in_range(1..=4)?;
            if self.u.ratio(1, 2)? {
                v = -v;
            }
            let mut entry = format!("  {v:+} \"entry {i}\"");
            if self.u.ratio(1, 3)? {
                entry.push_str(" per q");
            }
            if self.u.ratio(2, 3)? {
                // Only the stack's own parameters are in scope; brackets keep `+`/`-` apart
                // from the next entry.
                let c = self.boolean(&scope, 1)?;
                write!(entry, " when ({c})").unwrap();
            }
            writeln!(self.out, "{entry}").unwrap();
        }
        self.out.push_str("}\n");
        self.stacks.push(Stack { name });
        Ok(())
    }

    fn procedure(&mut self, keyword: &str) -> Result<()> {
        let helper = keyword == "procedure";
        let name = self.name(if helper { "h" } else { "r" });
        let mut scope = Scope::default();
        let mut params = Vec::new();
        if helper {
            // Helpers take one ranged int so a call can pass anything clamped into it.
            params.push("a: 0..=4".to_string());
            scope.ints.push("a".into());
        } else {
            for _ in 0..self.u.int_in_range(0..=2)? {
                let p = self.name("p");
                if self.u.ratio(1, 3)? {
                    let default = if self.u.ratio(1, 2)? { "true" } else { "false" };
                    params.push(format!("{p}: bool = {default}"));
                    scope.bools.push(p);
                } else {
                    let lo = self.u.int_in_range(-3..=3)?;
                    let hi = self.u.int_in_range(lo..=lo + 6)?;
                    params.push(format!("{p}: {lo}..={hi}"));
                    scope.ints.push(p);
                }
            }
        }
        writeln!(self.out, "{keyword} {name}({}) {{", params.join(", ")).unwrap();
        if helper {
            // A helper's value is an int, so callers can use it in arithmetic.
            let e = self.int(&scope, MAX_DEPTH - 1)?;
            writeln!(self.out, "  result {e}").unwrap();
        } else {
            self.body(&mut scope, 1)?;
        }
        self.out.push_str("}\n");
        if helper {
            self.procs.push(Proc { name });
        }
        Ok(())
    }

    fn indent(&mut self, level: u32) {
        for _ in 0..level {
            self.out.push_str("  ");
        }
    }

    /// `let`s, then one ending: a result, an outcome, bands or an `if` with two bodies.
    fn body(&mut self, scope: &mut Scope, level: u32) -> Result<()> {
        let mut scope = scope.clone();
        for _ in 0..self.u.int_in_range(0..=3)? {
            let v = self.name("v");
            self.indent(level);
            if self.u.ratio(1, 4)? {
                let e = self.boolean(&scope, MAX_DEPTH - 1)?;
                writeln!(self.out, "let {v} = {e}").unwrap();
                scope.bools.push(v);
            } else {
                let e = self.int(&scope, MAX_DEPTH - 1)?;
                writeln!(self.out, "let {v} = {e}").unwrap();
                scope.ints.push(v);
            }
        }
        let ending = if level >= 3 {
            self.u.int_in_range(0..=2)?
        } else {
            self.u.int_in_range(0..=3)?
        };
        match ending {
            0 => {
                let e = self.int(&scope, MAX_DEPTH)?;
                self.indent(level);
                writeln!(self.out, "result {e}").unwrap();
            }
            1 => {
                let o = self.outcome()?;
                self.indent(level);
                writeln!(self.out, "outcome {o}").unwrap();
            }
            2 => self.bands(&scope, level)?,
            _ => {
                let c = self.boolean(&scope, MAX_DEPTH - 1)?;
                self.indent(level);
                writeln!(self.out, "if {c} {{").unwrap();
                self.body(&mut scope, level + 1)?;
                self.indent(level);
                self.out.push_str("} else {\n");
                self.body(&mut scope, level + 1)?;
                self.indent(level);
                self.out.push_str("}\n");
            }
        }
        Ok(())
    }

    fn outcome(&mut self) -> Result<String> {
        Ok(format!("o{}", self.u.int_in_range(0..=4)?))
    }

    /// Bands over an int: ascending cut points, so the arms neither overlap nor leave gaps.
    fn bands(&mut self, scope: &Scope, level: u32) -> Result<()> {
        let e = self.int(scope, MAX_DEPTH)?;
        let mut cuts: Vec<i64> = Vec::new();
        for _ in 0..self.u.int_in_range(1..=4)? {
            cuts.push(self.u.int_in_range(-10..=20)?);
        }
        cuts.sort_unstable();
        cuts.dedup();
        self.indent(level);
        writeln!(self.out, "bands {e} {{").unwrap();
        let arm = |g: &mut Self| -> Result<String> {
            Ok(if g.u.ratio(1, 4)? {
                // A numeric value after `=>` needs no sign to stay unambiguous.
                g.u.int_in_range(0..=9)?.to_string()
            } else {
                g.outcome()?
            })
        };
        let mut lo: Option<i64> = None;
        for &c in &cuts {
            let pattern = match lo {
                None => format!("..={c}"),
                Some(l) if l == c => format!("{c}"),
                Some(l) => format!("{l}..={c}"),
            };
            let a = arm(self)?;
            self.indent(level + 1);
            writeln!(self.out, "{pattern} => {a}").unwrap();
            lo = Some(c + 1);
        }
        let last = if self.u.ratio(1, 2)? {
            "_".to_string()
        } else {
            format!("{}..", lo.unwrap_or(0))
        };
        let a = arm(self)?;
        self.indent(level + 1);
        writeln!(self.out, "{last} => {a}").unwrap();
        self.indent(level);
        self.out.push_str("}\n");
        Ok(())
    }

    /// A die, named or custom, to roll or to fill a pool with.
    fn die_name(&mut self) -> Result<String> {
        if !self.dice.is_empty() && self.u.ratio(1, 4)? {
            let i = self.u.choose_index(self.dice.len())?;
            return Ok(self.dice[i].clone());
        }
        Ok(format!("d{}", self.die_sides()?))
    }

    /// A pool: `NdM` or `pool(n, die)` with the count clamped so the compiler can size it.
    fn pool(&mut self, scope: &Scope, depth: u32) -> Result<String> {
        if self.u.ratio(1, 2)? {
            // One die is a roll, not a pool.
            let n = self.u.int_in_range(2..=5)?;
            let m = self.die_sides()?;
            Ok(format!("{n}d{m}"))
        } else {
            let n = self.int(scope, depth)?;
            let hi = self.u.int_in_range(0..=5)?;
            let d = self.die_name()?;
            Ok(format!("pool(clamp({n}, 0, {hi}), {d})"))
        }
    }

    fn int(&mut self, scope: &Scope, depth: u32) -> Result<String> {
        if depth == 0 || self.u.is_empty() {
            return self.int_leaf(scope);
        }
        let d = depth - 1;
        Ok(match self.u.int_in_range(0..=21)? {
            0..=2 => return self.int_leaf(scope),
            3..=5 => {
                let op = *self.u.choose(&["+", "-", "*", "/", "%"])?;
                let a = self.int(scope, d)?;
                let b = self.divisor(scope, d, matches!(op, "/" | "%"))?;
                format!("({a} {op} {b})")
            }
            6 => format!("-({})", self.int(scope, d)?),
            7 => {
                let p = self.pool(scope, d)?;
                format!("sum({p})")
            }
            8 => {
                let f = *self.u.choose(&["highest", "lowest"])?;
                let k = self.u.int_in_range(0..=3)?;
                let p = self.pool(scope, d)?;
                format!("{f}({k}, {p})")
            }
            9 => {
                let p = self.pool(scope, d)?;
                let t = self.u.int_in_range(-1..=8)?;
                format!("successes({p}, {t})")
            }
            10 => {
                let p = self.pool(scope, d)?;
                let lo = self.u.int_in_range(0..=6)?;
                let hi = self.u.int_in_range(lo..=8)?;
                format!("count({p}, {lo}..={hi})")
            }
            11 => {
                let m = self.die_sides()?;
                let lo = self.u.int_in_range(1..=m)?;
                let hi = self.u.int_in_range(lo..=m)?;
                format!("reroll(d{m}, {lo}..={hi})")
            }
            12 => {
                let f = *self.u.choose(&["min", "max"])?;
                let n = self.u.int_in_range(2..=3)?;
                let args: Vec<String> = (0..n).map(|_| self.int(scope, d)).collect::<Result<_>>()?;
                format!("{f}({})", args.join(", "))
            }
            13 => {
                let x = self.int(scope, d)?;
                let lo = self.u.int_in_range(-8..=8)?;
                let hi = self.u.int_in_range(lo..=lo + 10)?;
                format!("clamp({x}, {lo}, {hi})")
            }
            14 => format!("abs({})", self.int(scope, d)?),
            15 => {
                let a = self.int(scope, d)?;
                let b = self.divisor(scope, d, true)?;
                format!("div_up({a}, {b})")
            }
            16 => {
                let c = self.boolean(scope, d)?;
                let a = self.int(scope, d)?;
                let b = self.int(scope, d)?;
                format!("(if {c} then {a} else {b})")
            }
            17 if !self.tables.is_empty() => {
                let i = self.u.choose_index(self.tables.len())?;
                let key = if self.u.ratio(3, 4)? {
                    format!("d{}", self.tables[i].die)
                } else {
                    // Any int as the row: out of the die's faces is a run-time error.
                    self.int(scope, d)?
                };
                let t = &self.tables[i];
                match &t.column {
                    None => format!("{}[{key}]", t.name),
                    Some((_, members)) => {
                        let (name, members) = (t.name.clone(), members.clone());
                        let m = self.u.choose(&members)?;
                        format!("{name}[{key}, {m}]")
                    }
                }
            }
            18 if !self.stacks.is_empty() => {
                let i = self.u.choose_index(self.stacks.len())?;
                let name = self.stacks[i].name.clone();
                let q = self.int(scope, d)?;
                let f = self.boolean(scope, d)?;
                format!("{name}(clamp({q}, 0, 5), {f})")
            }
            19 if !self.procs.is_empty() => {
                let i = self.u.choose_index(self.procs.len())?;
                let name = self.procs[i].name.clone();
                let a = self.int(scope, d)?;
                format!("{name}(clamp({a}, 0, 4))")
            }
            20 => {
                let n = self.u.int_in_range(1..=4)?;
                let m = self.die_sides()?;
                format!("{n}d{m}")
            }
            _ => return self.int_leaf(scope),
        })
    }

    /// A divisor: mostly kept off zero, or most programs would end in a division by zero
    /// before reaching anything else.
    fn divisor(&mut self, scope: &Scope, depth: u32, dividing: bool) -> Result<String> {
        let b = self.int(scope, depth)?;
        Ok(if dividing && self.u.ratio(3, 4)? {
            format!("max({b}, 1)")
        } else {
            b
        })
    }

    fn int_leaf(&mut self, scope: &Scope) -> Result<String> {
        Ok(match self.u.int_in_range(0..=3)? {
            0 | 1 if !scope.ints.is_empty() => self.u.choose(&scope.ints)?.clone(),
            2 => self.die_name()?,
            _ => self.literal()?,
        })
    }

    fn boolean(&mut self, scope: &Scope, depth: u32) -> Result<String> {
        if depth == 0 || self.u.is_empty() {
            return self.bool_leaf(scope);
        }
        let d = depth - 1;
        Ok(match self.u.int_in_range(0..=7)? {
            0..=2 => {
                let op = *self.u.choose(&["==", "!=", "<", "<=", ">", ">="])?;
                let a = self.int(scope, d)?;
                let b = self.int(scope, d)?;
                format!("({a} {op} {b})")
            }
            3 => format!("(not {})", self.boolean(scope, d)?),
            4 => {
                let op = *self.u.choose(&["and", "or"])?;
                let a = self.boolean(scope, d)?;
                let b = self.boolean(scope, d)?;
                format!("({a} {op} {b})")
            }
            5 => {
                let x = self.int(scope, d)?;
                let lo = self.u.int_in_range(-5..=10)?;
                let hi = self.u.int_in_range(lo..=lo + 8)?;
                format!("({x} in {lo}..={hi})")
            }
            _ => self.bool_leaf(scope)?,
        })
    }

    fn bool_leaf(&mut self, scope: &Scope) -> Result<String> {
        Ok(match self.u.int_in_range(0..=3)? {
            0 | 1 if !scope.bools.is_empty() => self.u.choose(&scope.bools)?.clone(),
            2 => "true".into(),
            3 => "false".into(),
            _ => {
                let x = self.int_leaf(scope)?;
                let t = self.u.int_in_range(1..=6)?;
                format!("({x} >= {t})")
            }
        })
    }
}
