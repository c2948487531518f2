//! An open table for miniatures: positions, distances, straight moves, line of sight and how
//! much of a move crosses a kind of terrain, all in exact integer arithmetic.
//!
//! Lengths are [`Length`]s: integer tenths of a millimetre, so that both metric rules (10 cm,
//! [`CM`]) and imperial ones (6", [`INCH`] = 254 exactly) are whole numbers. Points are bounded
//! to ±[`MAX_COORD`] (one kilometre) when built, which keeps every product below `i128`/`u128`
//! limits, so nothing here can overflow. Rule decisions ("within 6 inches", "is the line of
//! sight blocked") are exact; only lengths that are irrational are rounded, as stated.
//!
//! Orientation: `x` grows to the right, `y` grows down the table (away from the top edge), as
//! in [`super::sectors`]; nothing here depends on it.

use super::TerrainId;

/// Integer tenths of a millimetre.
pub type Length = i64;

pub const MM: Length = 10;
pub const CM: Length = 100;
/// One inch is exactly 25.4 mm.
pub const INCH: Length = 254;
/// Largest coordinate (either sign) of a point: 1 km, far beyond any table.
pub const MAX_COORD: Length = sandtable_ir::scenario::MAX_COORD;

/// Fixed-point factor of [`length_in_terrain`]'s internal positions (1/1024 of a unit).
const SUB: u128 = 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error(
        "point ({x}, {y}) is off any table: coordinates are limited to ±{MAX_COORD} tenths of a millimetre (1 km)"
    )]
    OutOfRange { x: Length, y: Length },
    #[error("a circle's radius must be between 0 and {MAX_COORD} tenths of a millimetre, not {0}")]
    BadRadius(Length),
}

/// A position on the table, in tenths of a millimetre. Built only through [`Point::new`], so
/// every point is within ±[`MAX_COORD`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    x: Length,
    y: Length,
}

/// Saved as `[x, y]`; read back through [`Point::new`], so a saved point is in range.
impl serde::Serialize for Point {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&[self.x, self.y], s)
    }
}

impl<'de> serde::Deserialize<'de> for Point {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let [x, y] = <[Length; 2] as serde::Deserialize>::deserialize(d)?;
        Point::new(x, y).map_err(serde::de::Error::custom)
    }
}

impl Point {
    pub fn new(x: Length, y: Length) -> Result<Self, TableError> {
        let range = -MAX_COORD..=MAX_COORD;
        if range.contains(&x) && range.contains(&y) {
            Ok(Point { x, y })
        } else {
            Err(TableError::OutOfRange { x, y })
        }
    }

    pub fn x(self) -> Length {
        self.x
    }

    pub fn y(self) -> Length {
        self.y
    }
}

/// Squared distance, exact. Coordinates differ by at most 2·10⁷, so this is below 10¹⁵.
pub fn distance_squared(a: Point, b: Point) -> i64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    dx * dx + dy * dy
}

/// Distance rounded to the nearest tenth of a millimetre. There are no halfway cases: the
/// square root of an integer is never `n + 0.5`. For a rule's "within N" use [`within`], which
/// is exact, rather than comparing this rounded value.
pub fn distance(a: Point, b: Point) -> Length {
    // `distance_squared` is non-negative and below 10¹⁵.
    let d2 = distance_squared(a, b) as u64;
    let n = super::isqrt::u64(d2);
    // sqrt(d2) > n + 1/2  <=>  d2 > n² + n + 1/4  <=>  d2 - n² > n (integers).
    let rounded = if d2 - n * n > n { n + 1 } else { n };
    rounded as Length
}

/// The points around `at` a piece may be put at within `r`: on each of `directions` bearings
/// (from straight up, clockwise), one at every `k / steps` of `r`, each rounded to the tenth
/// of a millimetre and pulled in until it is within `r` by [`distance`] (the engine's guards
/// are tested in integers). The trigonometry only spaces the candidates; which of them a rule
/// allows is decided in integers. The caller keeps the points on its table and free of other
/// pieces.
pub fn ring_points(at: Point, r: Length, directions: u32, steps: u32) -> Vec<Point> {
    let steps = i64::from(steps.max(1));
    let mut out = Vec::new();
    for d in 0..directions {
        let angle = std::f64::consts::TAU * f64::from(d) / f64::from(directions.max(1));
        for s in 1..=steps {
            let len = r * s / steps;
            for shrink in 0..4 {
                let l = len - shrink;
                if l <= 0 {
                    break;
                }
                let (x, y) = (
                    at.x + (angle.sin() * l as f64).round() as i64,
                    at.y - (angle.cos() * l as f64).round() as i64,
                );
                if let Ok(q) = Point::new(x, y)
                    && distance(at, q) <= r
                {
                    out.push(q);
                    break;
                }
            }
        }
    }
    out
}

/// Whether `b` is at most `range` from `a`, exactly (no rounding). A negative range holds
/// nothing.
pub fn within(a: Point, b: Point, range: Length) -> bool {
    range >= 0 && i128::from(distance_squared(a, b)) <= i128::from(range) * i128::from(range)
}

/// Where a straight move from `from` toward `to` of at most `max_len` ends: `to` itself if it
/// is that close, otherwise the point `max_len` along the way with each coordinate rounded
/// toward `from`. Rounding toward the start means the move never overshoots: the result is
/// at most `max_len` from `from` and never past `to`, and it is less than one unit (0.1 mm)
/// per axis short of the exact point. A negative `max_len` is no move.
pub fn move_toward(from: Point, to: Point, max_len: Length) -> Point {
    if max_len <= 0 {
        return from;
    }
    if within(from, to, max_len) {
        return to;
    }
    // Here max_len < |to - from| <= 2^25, so every product below fits in u128.
    let d2 = distance_squared(from, to) as u128;
    let len2 = (max_len as u128) * (max_len as u128);
    // floor(|dx| * L / sqrt(d2)) = floor(sqrt(dx² L² / d2)) = isqrt(floor(dx² L² / d2)).
    let step = |delta: Length| -> Length {
        let mag = delta.unsigned_abs() as u128;
        let scaled = super::isqrt::u128((mag * mag * len2) / d2) as Length;
        if delta < 0 { -scaled } else { scaled }
    };
    Point {
        x: from.x + step(to.x - from.x),
        y: from.y + step(to.y - from.y),
    }
}

/// The outline of a piece of terrain: an axis-aligned rectangle or a circle. Shapes are
/// closed: their boundary belongs to them. Built through [`Geometry::rect`] and
/// [`Geometry::circle`] so that corners are ordered and radii are in range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Geometry(Outline);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Outline {
    Rect { min: Point, max: Point },
    Circle { centre: Point, radius: Length },
}

impl Geometry {
    /// The rectangle with opposite corners `a` and `b` (in any order).
    pub fn rect(a: Point, b: Point) -> Geometry {
        Geometry(Outline::Rect {
            min: Point {
                x: a.x.min(b.x),
                y: a.y.min(b.y),
            },
            max: Point {
                x: a.x.max(b.x),
                y: a.y.max(b.y),
            },
        })
    }

    /// The circle (disc) of `radius` around `centre`.
    pub fn circle(centre: Point, radius: Length) -> Result<Geometry, TableError> {
        if (0..=MAX_COORD).contains(&radius) {
            Ok(Geometry(Outline::Circle { centre, radius }))
        } else {
            Err(TableError::BadRadius(radius))
        }
    }

    /// The top-left and bottom-right corners, if this is a rectangle.
    pub fn as_rect(&self) -> Option<(Point, Point)> {
        match self.0 {
            Outline::Rect { min, max } => Some((min, max)),
            Outline::Circle { .. } => None,
        }
    }

    /// The centre and radius, if this is a circle.
    pub fn as_circle(&self) -> Option<(Point, Length)> {
        match self.0 {
            Outline::Circle { centre, radius } => Some((centre, radius)),
            Outline::Rect { .. } => None,
        }
    }

    /// Whether `p` is inside or on the boundary.
    pub fn contains(&self, p: Point) -> bool {
        match self.0 {
            Outline::Rect { min, max } => {
                (min.x..=max.x).contains(&p.x) && (min.y..=max.y).contains(&p.y)
            }
            Outline::Circle { centre, radius } => within(centre, p, radius),
        }
    }

    /// Whether the closed segment from `a` to `b` touches the shape (grazing the boundary
    /// counts). Exact.
    pub fn meets_segment(&self, a: Point, b: Point) -> bool {
        match self.0 {
            Outline::Rect { min, max } => {
                // Separating axes of a segment and a box: x, y and the segment's normal.
                if a.x.max(b.x) < min.x || a.x.min(b.x) > max.x {
                    return false;
                }
                if a.y.max(b.y) < min.y || a.y.min(b.y) > max.y {
                    return false;
                }
                let corners = [
                    (min.x, min.y),
                    (min.x, max.y),
                    (max.x, min.y),
                    (max.x, max.y),
                ];
                let sides = corners.map(|(x, y)| cross(a, b, Point { x, y }));
                let lowest = sides.iter().copied().min().unwrap_or(0);
                let highest = sides.iter().copied().max().unwrap_or(0);
                lowest <= 0 && highest >= 0
            }
            Outline::Circle { centre, radius } => {
                let d = (i128::from(b.x - a.x), i128::from(b.y - a.y));
                let w = (i128::from(centre.x - a.x), i128::from(centre.y - a.y));
                let along = d.0 * w.0 + d.1 * w.1;
                let len2 = d.0 * d.0 + d.1 * d.1;
                if along <= 0 {
                    return within(a, centre, radius);
                }
                if along >= len2 {
                    return within(b, centre, radius);
                }
                // The nearest point is inside the segment: compare the perpendicular distance
                // |d × w| / |d| with the radius, squared and multiplied out.
                let c = cross(a, b, centre);
                let r = i128::from(radius);
                c * c <= r * r * len2
            }
        }
    }

    /// The middle of a rectangle (rounded down), the centre of a circle.
    pub fn centre(&self) -> Point {
        match self.0 {
            Outline::Rect { min, max } => Point {
                x: min.x + (max.x - min.x) / 2,
                y: min.y + (max.y - min.y) / 2,
            },
            Outline::Circle { centre, .. } => centre,
        }
    }

    /// The point of the shape nearest to `p` (`p` itself when inside); for a circle, rounded
    /// toward its centre so that it lies inside.
    pub fn nearest_point(&self, p: Point) -> Point {
        match self.0 {
            Outline::Rect { min, max } => Point {
                x: p.x.clamp(min.x, max.x),
                y: p.y.clamp(min.y, max.y),
            },
            Outline::Circle { centre, radius } => {
                if within(centre, p, radius) {
                    p
                } else {
                    move_toward(centre, p, radius)
                }
            }
        }
    }

    /// Where along segment `a`→`b` (in 1/[`SUB`] units from `a`, clipped to `[0, seg_len]`)
    /// it comes nearest to the shape's [`Geometry::centre`].
    /// Whether the boxes around segment `a`→`b` and around the shape are more than a unit
    /// apart along an axis: then so is every point of the one from every point of the other,
    /// and [`Geometry::segment_interval`] is empty (its circle ends, within 2/[`SUB`] of
    /// exact, cannot cross a gap of a whole unit). Most features lie far from a move.
    fn apart_from(&self, a: Point, b: Point) -> bool {
        let (lo, hi) = match self.0 {
            Outline::Rect { min, max } => (min, max),
            Outline::Circle { centre, radius } => (
                Point {
                    x: centre.x.saturating_sub(radius),
                    y: centre.y.saturating_sub(radius),
                },
                Point {
                    x: centre.x.saturating_add(radius),
                    y: centre.y.saturating_add(radius),
                },
            ),
        };
        a.x.max(b.x) < lo.x.saturating_sub(1)
            || a.x.min(b.x) > hi.x.saturating_add(1)
            || a.y.max(b.y) < lo.y.saturating_sub(1)
            || a.y.min(b.y) > hi.y.saturating_add(1)
    }

    fn foot_along(&self, a: Point, b: Point, seg_len: u128) -> u128 {
        let c = self.centre();
        let d = (i128::from(b.x - a.x), i128::from(b.y - a.y));
        let w = (i128::from(c.x - a.x), i128::from(c.y - a.y));
        let along = d.0 * w.0 + d.1 * w.1;
        let len2 = (d.0 * d.0 + d.1 * d.1) as u128;
        if along <= 0 || len2 == 0 {
            return 0;
        }
        let along = along as u128;
        // along / |d| in SUB units: sqrt(SUB² along² / len2).
        super::isqrt::u128(SUB * SUB * along * along / len2).min(seg_len)
    }

    /// The part of segment `a`→`b` inside the shape, as positions along the segment in
    /// 1/[`SUB`] units from `a`, clipped to `[0, seg_len]`; `None` if it is empty or a point.
    /// Rectangle ends are exact floors; circle ends are within 2/`SUB` of exact.
    fn segment_interval(&self, a: Point, b: Point, seg_len: u128) -> Option<(u128, u128)> {
        if self.apart_from(a, b) {
            return None;
        }
        self.interval_exact(a, b, seg_len)
    }

    /// [`Geometry::segment_interval`] worked out, with no shortcut.
    fn interval_exact(&self, a: Point, b: Point, seg_len: u128) -> Option<(u128, u128)> {
        let d = (i128::from(b.x - a.x), i128::from(b.y - a.y));
        let len2 = (d.0 * d.0 + d.1 * d.1) as u128;
        if len2 == 0 {
            return None;
        }
        let (lo, hi) = match self.0 {
            Outline::Rect { min, max } => {
                // Liang–Barsky with exact fractions t = num / den, den > 0.
                let mut enter = (0i128, 1i128);
                let mut leave = (1i128, 1i128);
                for (start, delta, low, high) in
                    [(a.x, d.0, min.x, max.x), (a.y, d.1, min.y, max.y)]
                {
                    let (start, low, high) = (i128::from(start), i128::from(low), i128::from(high));
                    if delta == 0 {
                        if start < low || start > high {
                            return None;
                        }
                        continue;
                    }
                    let (t_low, t_high) = if delta > 0 {
                        ((low - start, delta), (high - start, delta))
                    } else {
                        ((start - high, -delta), (start - low, -delta))
                    };
                    if frac_less(enter, t_low) {
                        enter = t_low;
                    }
                    if frac_less(t_high, leave) {
                        leave = t_high;
                    }
                }
                if !frac_less(enter, leave) {
                    return None;
                }
                // t in [0, 1] scaled to SUB units of length: floor(SUB t sqrt(len2)).
                let at = |(num, den): (i128, i128)| -> u128 {
                    let (num, den) = (num as u128, den as u128);
                    super::isqrt::u128(SUB * SUB * num * num * len2 / (den * den))
                };
                (at(enter), at(leave))
            }
            Outline::Circle { centre, radius } => {
                let w = (i128::from(centre.x - a.x), i128::from(centre.y - a.y));
                let along = d.0 * w.0 + d.1 * w.1;
                let c = cross(a, b, centre);
                let r = i128::from(radius);
                let disc = r * r * len2 as i128 - c * c;
                if disc <= 0 {
                    return None;
                }
                // Foot of the perpendicular from the centre, along/|d|, and the half chord
                // sqrt(disc)/|d|, each truncated in SUB units.
                let foot_mag = super::isqrt::u128(
                    SUB * SUB * along.unsigned_abs() * along.unsigned_abs() / len2,
                );
                let half = super::isqrt::u128(SUB * SUB * disc as u128 / len2);
                let foot = if along < 0 {
                    -(foot_mag as i128)
                } else {
                    foot_mag as i128
                };
                let clip = |v: i128| v.clamp(0, seg_len as i128) as u128;
                (clip(foot - half as i128), clip(foot + half as i128))
            }
        };
        let hi = hi.min(seg_len);
        (lo < hi).then_some((lo, hi))
    }
}

/// Cross product (b - a) × (p - a): positive when `p` is on one side of the line a→b, negative
/// on the other, zero on it.
fn cross(a: Point, b: Point, p: Point) -> i128 {
    let d = (i128::from(b.x - a.x), i128::from(b.y - a.y));
    let w = (i128::from(p.x - a.x), i128::from(p.y - a.y));
    d.0 * w.1 - d.1 * w.0
}

/// `x < y` for fractions with positive denominators.
fn frac_less(x: (i128, i128), y: (i128, i128)) -> bool {
    x.0 * y.1 < y.0 * x.1
}

/// A piece of terrain on the table: its outline, whether it blocks line of sight, and what
/// terrain it is (the ruleset's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    pub geometry: Geometry,
    pub blocks_sight: bool,
    pub terrain: TerrainId,
}

impl Shape {
    pub fn contains(&self, p: Point) -> bool {
        self.geometry.contains(p)
    }
}

/// Indices (in `shapes`) of the sight-blocking shapes that the closed segment `a`→`b` touches.
/// Rules differ on exceptions (a figure inside a wood may see out of it; a hedge may not
/// block the figures standing at it): the engine applies them by dropping shapes from this
/// list, e.g. those that contain `a`.
pub fn blockers(a: Point, b: Point, shapes: &[Shape]) -> Vec<usize> {
    shapes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.blocks_sight && s.geometry.meets_segment(a, b))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `a` and `b` see each other: no sight-blocking shape touches the segment between
/// them, ends and grazing contacts included. So a point inside a blocking shape sees nothing
/// and is seen by nothing; see [`blockers`] for rule-specific exceptions.
pub fn line_of_sight(a: Point, b: Point, shapes: &[Shape]) -> bool {
    !shapes
        .iter()
        .any(|s| s.blocks_sight && s.geometry.meets_segment(a, b))
}

/// Length of the segment `a`→`b` that lies inside shapes of terrain `terrain` (overlapping
/// shapes counted once), for rules like "half speed through woods".
///
/// Rounding: positions are computed in 1/1024 of a unit (rectangle edges exactly floored,
/// circle edges within 2/1024), the pieces are merged, and the total is rounded to the nearest
/// unit and capped at [`distance`]`(a, b)`. The error is at most 1/2 unit plus 4/1024 per
/// shape crossed, so within one unit (0.1 mm) of the exact length for fewer than 128 shapes.
pub fn length_in_terrain(a: Point, b: Point, shapes: &[Shape], terrain: TerrainId) -> Length {
    length_inside(
        a,
        b,
        shapes
            .iter()
            .filter(|s| s.terrain == terrain)
            .map(|s| &s.geometry),
    )
}

/// Length of the segment `a`→`b` inside any of the outlines (overlaps counted once), rounded
/// as [`length_in_terrain`].
pub fn length_inside<'g>(
    a: Point,
    b: Point,
    outlines: impl IntoIterator<Item = &'g Geometry>,
) -> Length {
    merged_length(a, b, outlines, false)
}

/// Length of the part of segment `a`→`b` inside the outlines during which it draws nearer to
/// the outline's centre (the middle of a rectangle, the centre of a circle): climbing, when
/// the outline is a hill whose top is its middle. Overlaps counted once; rounded as
/// [`length_in_terrain`]. The rest of the length inside is going down or across.
pub fn length_approaching<'g>(
    a: Point,
    b: Point,
    outlines: impl IntoIterator<Item = &'g Geometry>,
) -> Length {
    merged_length(a, b, outlines, true)
}

fn merged_length<'g>(
    a: Point,
    b: Point,
    outlines: impl IntoIterator<Item = &'g Geometry>,
    approaching: bool,
) -> Length {
    let len2 = distance_squared(a, b) as u128;
    let seg_len = super::isqrt::u128(SUB * SUB * len2);
    let mut pieces: Vec<(u128, u128)> = outlines
        .into_iter()
        .filter_map(|g| {
            let (lo, hi) = g.segment_interval(a, b, seg_len)?;
            if !approaching {
                return Some((lo, hi));
            }
            // Nearer the centre until the foot of the perpendicular from it.
            let foot = g.foot_along(a, b, seg_len);
            let hi = hi.min(foot);
            (lo < hi).then_some((lo, hi))
        })
        .collect();
    pieces.sort_unstable();
    let mut total: u128 = 0;
    let mut covered_to: u128 = 0;
    for (lo, hi) in pieces {
        let lo = lo.max(covered_to);
        if hi > lo {
            total += hi - lo;
            covered_to = hi;
        }
    }
    let rounded = ((total + SUB / 2) / SUB) as Length;
    rounded.min(distance(a, b))
}

/// Whether the segment `a`→`b` passes strictly nearer than `r` to `c`: a figure of base
/// diameter `r` moving along it would overlap the base of a figure standing at `c`. Exact.
pub fn passes_within(a: Point, b: Point, c: Point, r: Length) -> bool {
    if r <= 0 {
        return false;
    }
    let r2 = i128::from(r) * i128::from(r);
    let d = (i128::from(b.x - a.x), i128::from(b.y - a.y));
    let w = (i128::from(c.x - a.x), i128::from(c.y - a.y));
    let along = d.0 * w.0 + d.1 * w.1;
    let len2 = d.0 * d.0 + d.1 * d.1;
    if along <= 0 || len2 == 0 {
        return i128::from(distance_squared(a, c)) < r2;
    }
    if along >= len2 {
        return i128::from(distance_squared(b, c)) < r2;
    }
    let x = cross(a, b, c);
    x * x < r2 * len2
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(x: Length, y: Length) -> Point {
        Point::new(x, y).expect("test point")
    }

    #[test]
    fn ring_points_lie_within_the_radius_on_every_bearing() {
        let at = p(10_000, 10_000);
        let r = 2 * 254;
        let ring = ring_points(at, r, 8, 2);
        // Eight bearings, two steps out on each: half the radius and the whole.
        assert_eq!(ring.len(), 16);
        assert!(ring.iter().all(|q| distance(at, *q) <= r && *q != at));
        // Straight up first (a smaller y), then clockwise.
        assert_eq!(ring[0], p(10_000, 10_000 - r / 2));
        assert_eq!(ring[1], p(10_000, 10_000 - r));
        assert_eq!(ring[5], p(10_000 + r, 10_000));
        // The table's edges are the caller's to apply: the ring of a corner leaves it.
        assert!(ring_points(p(0, 0), r, 8, 2).iter().any(|q| q.x() < 0));
    }

    fn shape(geometry: Geometry, blocks_sight: bool, terrain: TerrainId) -> Shape {
        Shape {
            geometry,
            blocks_sight,
            terrain,
        }
    }

    fn circle(x: Length, y: Length, r: Length) -> Geometry {
        Geometry::circle(p(x, y), r).expect("test circle")
    }

    const WOODS: TerrainId = 1;
    const HILL: TerrainId = 2;

    #[test]
    fn units_are_exact() {
        assert_eq!(6 * INCH, 1524);
        assert_eq!(10 * CM, 1000);
        assert_eq!(5 * MM, 50);
    }

    #[test]
    fn points_are_bounded() {
        assert!(Point::new(MAX_COORD, -MAX_COORD).is_ok());
        assert_eq!(
            Point::new(MAX_COORD + 1, 0),
            Err(TableError::OutOfRange {
                x: MAX_COORD + 1,
                y: 0
            })
        );
        assert!(Point::new(0, i64::MIN).is_err());
        assert_eq!(p(3, -4).x(), 3);
        assert_eq!(p(3, -4).y(), -4);
    }

    #[test]
    fn distance_rounds_to_nearest() {
        assert_eq!(distance(p(0, 0), p(3, 4)), 5);
        assert_eq!(distance_squared(p(0, 0), p(3, 4)), 25);
        assert_eq!(distance(p(0, 0), p(1, 1)), 1); // 1.414
        assert_eq!(distance(p(0, 0), p(1, 2)), 2); // 2.236
        assert_eq!(distance(p(0, 0), p(2, 2)), 3); // 2.828
        assert_eq!(distance(p(0, 0), p(0, 0)), 0);
        assert_eq!(distance(p(-1, -1), p(5, 7)), 10);
        // Corner to corner of the largest table.
        let far = distance(p(-MAX_COORD, -MAX_COORD), p(MAX_COORD, MAX_COORD));
        assert_eq!(far, 28_284_271); // 2e7 * sqrt 2 = 28_284_271.2
    }

    #[test]
    fn within_is_exact() {
        // 6" exactly at 1524 units; 1524.0003 (1524² + 1) is out of range although it rounds
        // to 1524.
        assert!(within(p(0, 0), p(1524, 0), 6 * INCH));
        assert!(!within(p(0, 0), p(1524, 1), 6 * INCH));
        assert_eq!(distance(p(0, 0), p(1524, 1)), 1524);
        assert!(within(p(0, 0), p(0, 0), 0));
        assert!(!within(p(0, 0), p(0, 0), -1));
    }

    #[test]
    fn move_toward_stops_at_max_or_target() {
        assert_eq!(move_toward(p(0, 0), p(3000, 4000), 500), p(300, 400));
        assert_eq!(move_toward(p(0, 0), p(3000, 4000), 5000), p(3000, 4000));
        assert_eq!(move_toward(p(0, 0), p(3000, 4000), 9000), p(3000, 4000));
        assert_eq!(move_toward(p(0, 0), p(3000, 4000), 0), p(0, 0));
        assert_eq!(move_toward(p(0, 0), p(3000, 4000), -5), p(0, 0));
        assert_eq!(move_toward(p(10, 10), p(10, 10), 100), p(10, 10));
        // Irrational: 1 unit along the diagonal is (0.707, 0.707), rounded toward the start.
        assert_eq!(move_toward(p(0, 0), p(100, 100), 1), p(0, 0));
        assert_eq!(move_toward(p(0, 0), p(100, 100), 10), p(7, 7));
        assert_eq!(move_toward(p(0, 0), p(-100, -100), 10), p(-7, -7));
        assert_eq!(move_toward(p(0, 0), p(-1000, 0), 254), p(-254, 0));
    }

    #[test]
    fn shapes_report_their_outline() {
        let r = Geometry::rect(p(100, 0), p(0, 200));
        assert_eq!(r.as_rect(), Some((p(0, 0), p(100, 200))));
        assert_eq!(r.as_circle(), None);
        let c = circle(5, 6, 7);
        assert_eq!(c.as_circle(), Some((p(5, 6), 7)));
        assert_eq!(c.as_rect(), None);
    }

    #[test]
    fn contains_is_closed() {
        let r = Geometry::rect(p(100, 200), p(0, 0));
        assert!(r.contains(p(0, 0)));
        assert!(r.contains(p(100, 200)));
        assert!(r.contains(p(50, 50)));
        assert!(!r.contains(p(101, 50)));
        let c = circle(0, 0, 5);
        assert!(c.contains(p(3, 4)));
        assert!(!c.contains(p(4, 4)));
        assert!(Geometry::circle(p(0, 0), -1).is_err());
        assert!(Geometry::circle(p(0, 0), MAX_COORD + 1).is_err());
        let s = shape(c, true, WOODS);
        assert!(s.contains(p(0, 5)));
    }

    #[test]
    fn segment_meets_rectangle() {
        let r = Geometry::rect(p(100, 100), p(200, 200));
        assert!(r.meets_segment(p(0, 150), p(300, 150)));
        assert!(!r.meets_segment(p(0, 50), p(300, 50)));
        // Grazing the top edge and a corner counts.
        assert!(r.meets_segment(p(0, 100), p(300, 100)));
        assert!(r.meets_segment(p(0, 200), p(200, 0)));
        // Diagonal passing just outside the corner.
        assert!(!r.meets_segment(p(0, 199), p(199, 0)));
        // Stops short.
        assert!(!r.meets_segment(p(0, 150), p(99, 150)));
        // Degenerate segment: a point.
        assert!(r.meets_segment(p(150, 150), p(150, 150)));
        assert!(!r.meets_segment(p(50, 150), p(50, 150)));
    }

    #[test]
    fn segment_meets_circle() {
        let c = circle(500, 0, 100);
        assert!(c.meets_segment(p(0, 0), p(1000, 0)));
        assert!(c.meets_segment(p(0, 100), p(1000, 100))); // tangent
        assert!(!c.meets_segment(p(0, 101), p(1000, 101)));
        assert!(!c.meets_segment(p(0, 0), p(399, 0))); // stops short
        assert!(c.meets_segment(p(0, 0), p(400, 0))); // ends on the edge
        assert!(c.meets_segment(p(1000, 0), p(600, 0)));
        assert!(c.meets_segment(p(500, 0), p(500, 0)));
        assert!(!c.meets_segment(p(0, 0), p(0, 0)));
    }

    #[test]
    fn los_blocked_by_a_rectangle() {
        let building = shape(Geometry::rect(p(400, -100), p(600, 100)), true, HILL);
        let field = shape(Geometry::rect(p(0, 300), p(1000, 500)), false, WOODS);
        let shapes = [field, building];
        assert!(!line_of_sight(p(0, 0), p(1000, 0), &shapes));
        assert_eq!(blockers(p(0, 0), p(1000, 0), &shapes), vec![1]);
        // Passing below it, across the non-blocking field: clear.
        assert!(line_of_sight(p(0, 400), p(1000, 400), &shapes));
        assert_eq!(
            blockers(p(0, 400), p(1000, 400), &shapes),
            Vec::<usize>::new()
        );
        // From inside the building: blocked; the engine may drop shapes holding the viewer.
        assert!(!line_of_sight(p(500, 0), p(500, 900), &shapes));
        assert!(line_of_sight(p(0, 0), p(0, 900), &[]));
    }

    #[test]
    fn length_in_woods() {
        let woods = shape(Geometry::rect(p(200, -50), p(500, 50)), false, WOODS);
        let hill = shape(Geometry::rect(p(0, -50), p(1000, 50)), true, HILL);
        let shapes = [woods, hill];
        assert_eq!(length_in_terrain(p(0, 0), p(1000, 0), &shapes, WOODS), 300);
        assert_eq!(length_in_terrain(p(1000, 0), p(0, 0), &shapes, WOODS), 300);
        assert_eq!(length_in_terrain(p(0, 0), p(1000, 0), &shapes, HILL), 1000);
        assert_eq!(length_in_terrain(p(0, 0), p(300, 0), &shapes, WOODS), 100);
        assert_eq!(length_in_terrain(p(0, 0), p(1000, 0), &shapes, 99), 0);
        assert_eq!(length_in_terrain(p(0, 0), p(0, 0), &shapes, WOODS), 0);
        // Overlapping woods count once: 200..500 and 400..700 cover 500.
        let more = shape(Geometry::rect(p(400, -50), p(700, 50)), false, WOODS);
        assert_eq!(
            length_in_terrain(p(0, 0), p(1000, 0), &[woods, more], WOODS),
            500
        );
        // Along a diagonal (3-4-5): x from 0 to 3000, woods where 600 <= x <= 1800 -> 2000.
        let strip = shape(Geometry::rect(p(600, -9000), p(1800, 9000)), false, WOODS);
        assert_eq!(
            length_in_terrain(p(0, 0), p(3000, 4000), &[strip], WOODS),
            2000
        );
        assert_eq!(
            length_in_terrain(p(3000, 4000), p(0, 0), &[strip], WOODS),
            2000
        );
        // Grazing an edge has no length.
        let edge = shape(Geometry::rect(p(0, 0), p(100, 100)), false, WOODS);
        assert_eq!(length_in_terrain(p(0, 0), p(100, 0), &[edge], WOODS), 100);
        assert_eq!(length_in_terrain(p(100, 0), p(300, 0), &[edge], WOODS), 0);
    }

    #[test]
    fn length_in_circular_woods() {
        let wood = shape(circle(500, 0, 100), false, WOODS);
        assert_eq!(length_in_terrain(p(0, 0), p(1000, 0), &[wood], WOODS), 200);
        assert_eq!(length_in_terrain(p(0, 0), p(500, 0), &[wood], WOODS), 100);
        assert_eq!(length_in_terrain(p(550, 0), p(1000, 0), &[wood], WOODS), 50);
        assert_eq!(length_in_terrain(p(450, 0), p(550, 0), &[wood], WOODS), 100);
        // Chord at distance 60 from the centre: 2 * sqrt(100² - 60²) = 160.
        assert_eq!(
            length_in_terrain(p(0, 60), p(1000, 60), &[wood], WOODS),
            160
        );
        // Chord at distance 50: 2 * sqrt(7500) = 173.2.
        assert_eq!(
            length_in_terrain(p(0, 50), p(1000, 50), &[wood], WOODS),
            173
        );
        // Tangent or missing: nothing.
        assert_eq!(
            length_in_terrain(p(0, 100), p(1000, 100), &[wood], WOODS),
            0
        );
        assert_eq!(
            length_in_terrain(p(0, 300), p(1000, 300), &[wood], WOODS),
            0
        );
        // Diagonal through the centre of a circle at (1500, 2000) r = 1000: 2000.
        let big = shape(circle(1500, 2000, 1000), false, WOODS);
        assert_eq!(
            length_in_terrain(p(0, 0), p(3000, 4000), &[big], WOODS),
            2000
        );
        // Behind the start: the chord is before `a`.
        assert_eq!(length_in_terrain(p(700, 0), p(1000, 0), &[wood], WOODS), 0);
    }

    #[test]
    fn length_inside_merges_outlines() {
        let marsh = Geometry::rect(p(200, -50), p(500, 50));
        let woods = circle(800, 0, 100);
        // 300 in the marsh and 200 across the wood.
        assert_eq!(length_inside(p(0, 0), p(1000, 0), [&marsh, &woods]), 500);
        // Overlapping outlines count once: 200..500 and 400..700.
        let more = Geometry::rect(p(400, -50), p(700, 50));
        assert_eq!(length_inside(p(0, 0), p(1000, 0), [&marsh, &more]), 500);
        assert_eq!(length_inside(p(0, 0), p(1000, 0), []), 0);
    }

    #[test]
    fn length_inside_many_outlines_counts_each_once() {
        // Twelve woods 50 long, 100 apart, and a marsh over the first three: more outlines
        // than are gathered on the stack.
        let woods: Vec<Geometry> = (0..12)
            .map(|k| Geometry::rect(p(100 * k, -50), p(100 * k + 50, 50)))
            .collect();
        let marsh = Geometry::rect(p(0, -50), p(250, 50));
        let all: Vec<&Geometry> = woods.iter().chain([&marsh]).collect();
        assert_eq!(length_inside(p(0, 0), p(1200, 0), woods.iter()), 600);
        // The marsh adds the gaps 50..100 and 150..200 it covers.
        assert_eq!(length_inside(p(0, 0), p(1200, 0), all), 700);
    }

    #[test]
    fn climbing_is_the_part_that_nears_the_centre() {
        let hill = circle(1000, 0, 300);
        // Straight over the top: up from 700 to 1000, down from 1000 to 1300.
        assert_eq!(length_approaching(p(0, 0), p(2000, 0), [&hill]), 300);
        assert_eq!(length_inside(p(0, 0), p(2000, 0), [&hill]), 600);
        // Stopping on the slope: all of it is climbing.
        assert_eq!(length_approaching(p(0, 0), p(900, 0), [&hill]), 200);
        // From the top down: no climbing.
        assert_eq!(length_approaching(p(1000, 0), p(2000, 0), [&hill]), 0);
        // Across the side, 180 from the centre: chord 2*sqrt(300² - 180²) = 480, half uphill.
        assert_eq!(length_approaching(p(0, 180), p(2000, 180), [&hill]), 240);
        // A rectangle's top is its middle.
        let ridge = Geometry::rect(p(100, -100), p(300, 100));
        assert_eq!(ridge.centre(), p(200, 0));
        assert_eq!(length_approaching(p(0, 0), p(400, 0), [&ridge]), 100);
        assert_eq!(length_approaching(p(400, 0), p(0, 0), [&ridge]), 100);
    }

    #[test]
    fn nearest_point_of_an_outline() {
        let r = Geometry::rect(p(100, 100), p(200, 200));
        assert_eq!(r.nearest_point(p(0, 150)), p(100, 150));
        assert_eq!(r.nearest_point(p(300, 300)), p(200, 200));
        assert_eq!(r.nearest_point(p(150, 150)), p(150, 150));
        let c = circle(0, 0, 100);
        assert_eq!(c.nearest_point(p(300, 0)), p(100, 0));
        assert!(c.contains(c.nearest_point(p(300, 300))));
        assert_eq!(c.nearest_point(p(10, 10)), p(10, 10));
    }

    #[test]
    fn passing_within_a_base() {
        // A figure 100 wide moving along y = 0 touches a base centred 99 off the line, not 100.
        assert!(passes_within(p(0, 0), p(1000, 0), p(500, 99), 100));
        assert!(!passes_within(p(0, 0), p(1000, 0), p(500, 100), 100));
        // Beyond the ends: measured from the end point.
        assert!(passes_within(p(0, 0), p(1000, 0), p(1050, 50), 100));
        assert!(!passes_within(p(0, 0), p(1000, 0), p(1100, 0), 100));
        assert!(passes_within(p(0, 0), p(1000, 0), p(-50, 0), 100));
        // A standing figure (no move) and no base.
        assert!(passes_within(p(0, 0), p(0, 0), p(10, 0), 100));
        assert!(!passes_within(p(0, 0), p(1000, 0), p(500, 0), 0));
    }

    fn coord() -> impl Strategy<Value = Length> {
        -20_000i64..=20_000
    }

    fn point() -> impl Strategy<Value = Point> {
        (coord(), coord()).prop_map(|(x, y)| p(x, y))
    }

    fn big_point() -> impl Strategy<Value = Point> {
        (-MAX_COORD..=MAX_COORD, -MAX_COORD..=MAX_COORD).prop_map(|(x, y)| p(x, y))
    }

    fn geometry() -> impl Strategy<Value = Geometry> {
        prop_oneof![
            (point(), point()).prop_map(|(a, b)| Geometry::rect(a, b)),
            (point(), 0i64..5_000).prop_map(|(c, r)| Geometry::circle(c, r).expect("radius")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn distance_is_symmetric_and_rounded(a in big_point(), b in big_point()) {
            let d = distance(a, b);
            prop_assert_eq!(d, distance(b, a));
            let d2 = i128::from(distance_squared(a, b));
            // (d - 1/2)² <= d2 <= (d + 1/2)², times 4.
            let d = i128::from(d);
            prop_assert!((2 * d - 1) * (2 * d - 1) <= 4 * d2);
            prop_assert!(4 * d2 <= (2 * d + 1) * (2 * d + 1));
        }

        #[test]
        fn a_shape_apart_from_a_segment_meets_none_of_it(g in geometry(), a in point(), b in point()) {
            let seg_len = super::super::isqrt::u128(SUB * SUB * distance_squared(a, b) as u128);
            if g.apart_from(a, b) {
                prop_assert_eq!(g.interval_exact(a, b, seg_len), None);
            }
            prop_assert_eq!(g.segment_interval(a, b, seg_len), g.interval_exact(a, b, seg_len));
        }

        #[test]
        fn distance_triangle_inequality(a in point(), b in point(), c in point()) {
            // Rounded distances may each gain 1/2: allow 1.
            prop_assert!(distance(a, c) <= distance(a, b) + distance(b, c) + 1);
        }

        #[test]
        fn straight_move_never_overshoots(a in big_point(), b in big_point(), len in -10i64..30_000_000) {
            let m = move_toward(a, b, len);
            prop_assert!(within(a, m, len.max(0)));
            // Never past the target: on the target's side, within the segment's box.
            prop_assert!(m.x() >= a.x().min(b.x()) && m.x() <= a.x().max(b.x()));
            prop_assert!(m.y() >= a.y().min(b.y()) && m.y() <= a.y().max(b.y()));
            if len <= 0 {
                prop_assert_eq!(m, a);
            } else if within(a, b, len) {
                prop_assert_eq!(m, b);
            } else {
                // Short by less than one unit per axis, so by less than 2 in all.
                prop_assert!(!within(a, m, len - 2));
            }
        }

        #[test]
        fn points_inside_a_blocking_shape_break_los(g in geometry(), q in point(), pick in point()) {
            // A point inside: a random point if inside, else a point known to be inside.
            let inside = if g.contains(pick) { pick } else {
                match g.0 {
                    Outline::Rect { min, .. } => min,
                    Outline::Circle { centre, .. } => centre,
                }
            };
            let s = shape(g, true, WOODS);
            prop_assert!(!line_of_sight(inside, q, &[s]));
            prop_assert!(!line_of_sight(q, inside, &[s]));
            // The same shape not blocking sight: clear.
            let open = shape(g, false, WOODS);
            prop_assert!(line_of_sight(inside, q, &[open]));
        }

        #[test]
        fn blocking_shape_between_breaks_los(a in point(), b in point(), r in 0i64..100) {
            // A blocking circle on the midpoint of the segment.
            let mid = p((a.x() + b.x()) / 2, (a.y() + b.y()) / 2);
            // The integer midpoint is within one unit of the true one: radius >= 1 reaches it.
            let s = shape(circle(mid.x(), mid.y(), r + 1), true, HILL);
            prop_assert!(!line_of_sight(a, b, &[s]));
        }

        #[test]
        fn segment_meets_agrees_with_sampled_points(g in geometry(), a in point(), b in point()) {
            // If an end is inside, the segment meets the shape.
            if g.contains(a) || g.contains(b) {
                prop_assert!(g.meets_segment(a, b));
            }
            // If the segment misses, no integer point of it is inside (checked at the points
            // with integer coordinates along it).
            if !g.meets_segment(a, b) {
                let steps = 16;
                for i in 0..=steps {
                    let x = a.x() + (b.x() - a.x()) * i / steps;
                    let y = a.y() + (b.y() - a.y()) * i / steps;
                    let exact = (b.x() - a.x()) * i % steps == 0 && (b.y() - a.y()) * i % steps == 0;
                    if exact {
                        prop_assert!(!g.contains(p(x, y)));
                    }
                }
            }
        }

        #[test]
        fn length_in_terrain_is_bounded(g in geometry(), a in point(), b in point()) {
            let s = shape(g, false, WOODS);
            let inside = length_in_terrain(a, b, &[s], WOODS);
            prop_assert!(inside >= 0);
            prop_assert!(inside <= distance(a, b));
            if !g.meets_segment(a, b) {
                prop_assert_eq!(inside, 0);
            }
            if g.contains(a) && g.contains(b) {
                // Shapes are convex: the whole segment is inside (to within the rounding).
                prop_assert!(inside + 1 >= distance(a, b));
            }
            prop_assert!((inside - length_in_terrain(b, a, &[s], WOODS)).abs() <= 1);
            // Climbing is part of the length inside; one way up is the other way down.
            let up = length_approaching(a, b, [&g]);
            prop_assert!(up >= 0 && up <= inside + 1);
            let down = length_approaching(b, a, [&g]);
            prop_assert!(up + down <= inside + 2 && up + down + 2 >= inside);
        }
    }
}
