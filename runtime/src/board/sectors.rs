//! A battlefield cut into numbered square sectors, each cut into numbered square zones.
//!
//! Some rules place and move things by sector and zone instead of by measuring (for example
//! a 180 cm × 120 cm table, 24 sectors of 30 cm, each of 9 zones of 10 cm). Sectors are
//! numbered from 1 at the top-left corner, row by row (left to right, then the next row
//! down); the zones of a sector are numbered the same way inside it. Positions are table
//! [`Point`]s with the origin at the battlefield's top-left corner, `x` across the width and
//! `y` down the depth.

use super::table::{Geometry, Length, MAX_COORD, Point};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SectorError {
    #[error(
        "a battlefield of {width} x {depth} with sectors of {sector} and {zones} x {zones} zones is not supported: width and depth must be positive whole multiples of the sector side, at most {MAX_COORD} units (1 km), with at most {max_sectors} sectors; the sector side must split into whole zones, at most {max_zones} a side",
        max_sectors = SectorGrid::MAX_SECTORS,
        max_zones = SectorGrid::MAX_ZONES_PER_SIDE
    )]
    BadLayout {
        width: Length,
        depth: Length,
        sector: Length,
        zones: u32,
    },
}

/// Which sectors count as adjacent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Adjacency {
    /// Sharing a side (up to 4 neighbours): the usual reading of "adjoining sectors".
    #[default]
    Sides,
    /// Sharing a side or a corner (up to 8 neighbours).
    SidesAndCorners,
}

/// A zone: its sector's number and its number inside the sector, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZoneRef {
    pub sector: u32,
    pub zone: u32,
}

/// A `width` × `depth` battlefield of square sectors of side `sector`, each split into
/// `zones` × `zones` square zones. Lengths in tenths of a millimetre (see [`super::table`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SectorGrid {
    width: Length,
    depth: Length,
    sector: Length,
    zones: u32,
}

impl SectorGrid {
    /// Bound on the number of sectors, so sector numbers and neighbour lists stay small.
    pub const MAX_SECTORS: u32 = sandtable_ir::scenario::MAX_SECTORS;
    /// Bound on zones per side of a sector.
    pub const MAX_ZONES_PER_SIDE: u32 = sandtable_ir::scenario::MAX_ZONES_PER_SIDE;

    /// The battlefield; refused unless the sectors and zones tile it exactly (a rule that
    /// numbers sectors has whole sectors).
    pub fn new(
        width: Length,
        depth: Length,
        sector: Length,
        zones: u32,
    ) -> Result<Self, SectorError> {
        let err = SectorError::BadLayout {
            width,
            depth,
            sector,
            zones,
        };
        let sizes_ok = (1..=MAX_COORD).contains(&width)
            && (1..=MAX_COORD).contains(&depth)
            && (1..=MAX_COORD).contains(&sector)
            && (1..=Self::MAX_ZONES_PER_SIDE).contains(&zones);
        if !sizes_ok
            || width % sector != 0
            || depth % sector != 0
            || sector % Length::from(zones) != 0
        {
            return Err(err);
        }
        // Both quotients are at most MAX_COORD, so the product fits easily.
        if (width / sector) * (depth / sector) > Length::from(Self::MAX_SECTORS) {
            return Err(err);
        }
        Ok(SectorGrid {
            width,
            depth,
            sector,
            zones,
        })
    }

    pub fn width(&self) -> Length {
        self.width
    }

    pub fn depth(&self) -> Length {
        self.depth
    }

    pub fn sector_side(&self) -> Length {
        self.sector
    }

    pub fn zone_side(&self) -> Length {
        self.sector / Length::from(self.zones)
    }

    /// Sectors across the width.
    pub fn columns(&self) -> u32 {
        // At most MAX_SECTORS by construction.
        (self.width / self.sector) as u32
    }

    /// Sectors down the depth.
    pub fn rows(&self) -> u32 {
        (self.depth / self.sector) as u32
    }

    pub fn sector_count(&self) -> u32 {
        self.columns() * self.rows()
    }

    /// Zones per side of a sector (`k`).
    pub fn zones_per_side(&self) -> u32 {
        self.zones
    }

    /// Zones in a sector (`k²`).
    pub fn zones_per_sector(&self) -> u32 {
        self.zones * self.zones
    }

    /// The sector holding `p`, or `None` off the battlefield. A point on the line between two
    /// sectors belongs to the one right of it or below it (sectors include their top and left
    /// edges); points on the battlefield's own right and bottom edges belong to the last
    /// sectors, so every point of the battlefield has exactly one sector.
    pub fn sector_of(&self, p: Point) -> Option<u32> {
        let (col, row) = self.cell(p, self.sector, self.columns(), self.rows())?;
        Some(row * self.columns() + col + 1)
    }

    /// The zone holding `p`, or `None` off the battlefield; edges as in
    /// [`sector_of`](SectorGrid::sector_of).
    pub fn zone_of(&self, p: Point) -> Option<ZoneRef> {
        let side = self.zone_side();
        let (zcol, zrow) = self.cell(
            p,
            side,
            self.columns() * self.zones,
            self.rows() * self.zones,
        )?;
        let (col, row) = (zcol / self.zones, zrow / self.zones);
        Some(ZoneRef {
            sector: row * self.columns() + col + 1,
            zone: (zrow % self.zones) * self.zones + zcol % self.zones + 1,
        })
    }

    /// 0-based column and row of the `side`-sized cell holding `p` in a grid of `cols` × `rows`
    /// cells covering the battlefield, the far edges folded into the last cells.
    fn cell(&self, p: Point, side: Length, cols: u32, rows: u32) -> Option<(u32, u32)> {
        if !(0..=self.width).contains(&p.x()) || !(0..=self.depth).contains(&p.y()) {
            return None;
        }
        // Non-negative and at most `cols`/`rows`, which are u32.
        let col = ((p.x() / side) as u32).min(cols.saturating_sub(1));
        let row = ((p.y() / side) as u32).min(rows.saturating_sub(1));
        Some((col, row))
    }

    /// 0-based column and row of a sector number.
    fn position(&self, sector: u32) -> Option<(u32, u32)> {
        if sector == 0 || sector > self.sector_count() {
            return None;
        }
        let i = sector - 1;
        Some((i % self.columns(), i / self.columns()))
    }

    /// Whether two sectors touch, per `adjacency`. A sector is not adjacent to itself; sector
    /// numbers off the battlefield are adjacent to nothing.
    pub fn adjacent(&self, a: u32, b: u32, adjacency: Adjacency) -> bool {
        let (Some((ac, ar)), Some((bc, br))) = (self.position(a), self.position(b)) else {
            return false;
        };
        let (dc, dr) = (ac.abs_diff(bc), ar.abs_diff(br));
        match adjacency {
            Adjacency::Sides => dc + dr == 1,
            Adjacency::SidesAndCorners => dc.max(dr) == 1,
        }
    }

    /// The sectors adjacent to `sector`, in increasing number; empty for a number off the
    /// battlefield.
    pub fn neighbours(&self, sector: u32, adjacency: Adjacency) -> Vec<u32> {
        let Some((col, row)) = self.position(sector) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for r in row.saturating_sub(1)..=(row + 1).min(self.rows() - 1) {
            for c in col.saturating_sub(1)..=(col + 1).min(self.columns() - 1) {
                let n = r * self.columns() + c + 1;
                if self.adjacent(sector, n, adjacency) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// The square of a sector, or `None` for a number off the battlefield.
    pub fn sector_bounds(&self, sector: u32) -> Option<Geometry> {
        let (col, row) = self.position(sector)?;
        let x = Length::from(col) * self.sector;
        let y = Length::from(row) * self.sector;
        square(x, y, self.sector)
    }

    /// Top-left corner of a zone, or `None` if the sector or zone number is out of range.
    fn zone_origin(&self, zone: ZoneRef) -> Option<(Length, Length)> {
        let (col, row) = self.position(zone.sector)?;
        if zone.zone == 0 || zone.zone > self.zones_per_sector() {
            return None;
        }
        let i = zone.zone - 1;
        let side = self.zone_side();
        let x = Length::from(col) * self.sector + Length::from(i % self.zones) * side;
        let y = Length::from(row) * self.sector + Length::from(i / self.zones) * side;
        Some((x, y))
    }

    /// The square of a zone, or `None` if the sector or zone number is out of range.
    pub fn zone_bounds(&self, zone: ZoneRef) -> Option<Geometry> {
        let (x, y) = self.zone_origin(zone)?;
        square(x, y, self.zone_side())
    }

    /// The centre of a zone (where a marker placed "in the zone" goes), or `None` if the
    /// sector or zone number is out of range. When the zone side is an odd number of units
    /// the centre falls on a half unit and is rounded toward the top-left.
    pub fn zone_centre(&self, zone: ZoneRef) -> Option<Point> {
        let (x, y) = self.zone_origin(zone)?;
        let half = self.zone_side() / 2;
        Point::new(x + half, y + half).ok()
    }
}

/// The square with top-left corner (x, y) and side `side`; all values come from a validated
/// grid, so the points are in range.
fn square(x: Length, y: Length, side: Length) -> Option<Geometry> {
    let a = Point::new(x, y).ok()?;
    let b = Point::new(x + side, y + side).ok()?;
    Some(Geometry::rect(a, b))
}

#[cfg(test)]
mod tests {
    use super::super::table::CM;
    use super::*;
    use proptest::prelude::*;

    fn p(x: Length, y: Length) -> Point {
        Point::new(x, y).expect("test point")
    }

    /// A typical sectored battlefield: 180 x 120 cm, 30 cm sectors, 3 x 3 zones of 10 cm.
    fn battlefield() -> SectorGrid {
        SectorGrid::new(180 * CM, 120 * CM, 30 * CM, 3).expect("battlefield")
    }

    fn z(sector: u32, zone: u32) -> ZoneRef {
        ZoneRef { sector, zone }
    }

    #[test]
    fn battlefield_counts() {
        let g = battlefield();
        assert_eq!((g.columns(), g.rows(), g.sector_count()), (6, 4, 24));
        assert_eq!(g.zones_per_sector(), 9);
        assert_eq!(g.zones_per_side(), 3);
        assert_eq!(g.sector_count() * g.zones_per_sector(), 216);
        assert_eq!(g.zone_side(), 10 * CM);
        assert_eq!(g.sector_side(), 30 * CM);
        assert_eq!((g.width(), g.depth()), (180 * CM, 120 * CM));
    }

    #[test]
    fn layouts_that_do_not_tile_are_refused() {
        assert!(SectorGrid::new(185 * CM, 120 * CM, 30 * CM, 3).is_err());
        assert!(SectorGrid::new(180 * CM, 125 * CM, 30 * CM, 3).is_err());
        assert!(SectorGrid::new(180 * CM, 120 * CM, 30 * CM, 7).is_err());
        assert!(SectorGrid::new(0, 120 * CM, 30 * CM, 3).is_err());
        assert!(SectorGrid::new(180 * CM, 120 * CM, 0, 3).is_err());
        assert!(SectorGrid::new(180 * CM, 120 * CM, -30 * CM, 3).is_err());
        assert!(SectorGrid::new(180 * CM, 120 * CM, 30 * CM, 0).is_err());
        assert!(SectorGrid::new(MAX_COORD, MAX_COORD, 1, 1).is_err());
        assert!(SectorGrid::new(MAX_COORD + 1, 100, 100, 1).is_err());
        let message = SectorGrid::new(185, 120, 30, 3).unwrap_err().to_string();
        assert!(message.contains("whole multiples"), "{message}");
    }

    #[test]
    fn sectors_numbered_row_by_row_from_top_left() {
        let g = battlefield();
        assert_eq!(g.sector_of(p(0, 0)), Some(1));
        assert_eq!(g.sector_of(p(35 * CM, 5 * CM)), Some(2));
        assert_eq!(g.sector_of(p(179 * CM, CM)), Some(6));
        assert_eq!(g.sector_of(p(CM, 31 * CM)), Some(7));
        assert_eq!(g.sector_of(p(179 * CM, 119 * CM)), Some(24));
        // Shared lines go right/down; the far edges stay on the battlefield.
        assert_eq!(g.sector_of(p(30 * CM, 0)), Some(2));
        assert_eq!(g.sector_of(p(0, 30 * CM)), Some(7));
        assert_eq!(g.sector_of(p(180 * CM, 120 * CM)), Some(24));
        assert_eq!(g.sector_of(p(180 * CM, 0)), Some(6));
        // Off the battlefield.
        assert_eq!(g.sector_of(p(-1, 0)), None);
        assert_eq!(g.sector_of(p(0, 120 * CM + 1)), None);
    }

    #[test]
    fn zones_numbered_one_to_nine_in_a_sector() {
        let g = battlefield();
        // Sector 1: zone centres at 5, 15, 25 cm.
        let mut seen = Vec::new();
        for row in 0..3 {
            for col in 0..3 {
                let zone = g.zone_of(p(col * 10 * CM + 5 * CM, row * 10 * CM + 5 * CM));
                seen.push(zone.map(|zr| (zr.sector, zr.zone)));
            }
        }
        let want: Vec<Option<(u32, u32)>> = (1..=9).map(|n| Some((1, n))).collect();
        assert_eq!(seen, want);
        // Sector 8 (second row, second column): its zone 5 is the middle one.
        assert_eq!(g.zone_of(p(45 * CM, 45 * CM)), Some(z(8, 5)));
        assert_eq!(g.zone_of(p(31 * CM, 59 * CM)), Some(z(8, 7)));
        assert_eq!(g.zone_of(p(180 * CM, 120 * CM)), Some(z(24, 9)));
        assert_eq!(g.zone_of(p(30 * CM, 0)), Some(z(2, 1)));
        assert_eq!(g.zone_of(p(181 * CM, 0)), None);
    }

    #[test]
    fn zone_centres() {
        let g = battlefield();
        assert_eq!(g.zone_centre(z(1, 1)), Some(p(5 * CM, 5 * CM)));
        assert_eq!(g.zone_centre(z(1, 9)), Some(p(25 * CM, 25 * CM)));
        assert_eq!(g.zone_centre(z(8, 5)), Some(p(45 * CM, 45 * CM)));
        assert_eq!(g.zone_centre(z(24, 9)), Some(p(175 * CM, 115 * CM)));
        assert_eq!(g.zone_centre(z(0, 1)), None);
        assert_eq!(g.zone_centre(z(25, 1)), None);
        assert_eq!(g.zone_centre(z(1, 0)), None);
        assert_eq!(g.zone_centre(z(1, 10)), None);
        // Odd zone side: 3 units, centre rounded toward the top-left.
        let odd = SectorGrid::new(9, 9, 9, 3).unwrap();
        assert_eq!(odd.zone_centre(z(1, 1)), Some(p(1, 1)));
    }

    #[test]
    fn bounds_of_sectors_and_zones() {
        let g = battlefield();
        let s8 = g.sector_bounds(8).unwrap();
        assert!(s8.contains(p(30 * CM, 30 * CM)));
        assert!(s8.contains(p(60 * CM, 60 * CM)));
        assert!(!s8.contains(p(61 * CM, 45 * CM)));
        assert_eq!(g.sector_bounds(0), None);
        assert_eq!(g.sector_bounds(25), None);
        let zone = g.zone_bounds(z(8, 5)).unwrap();
        assert!(zone.contains(p(40 * CM, 40 * CM)));
        assert!(zone.contains(p(50 * CM, 50 * CM)));
        assert!(!zone.contains(p(39 * CM, 45 * CM)));
        assert_eq!(g.zone_bounds(z(8, 10)), None);
    }

    #[test]
    fn sector_adjacency() {
        let g = battlefield();
        assert!(g.adjacent(1, 2, Adjacency::Sides));
        assert!(g.adjacent(1, 7, Adjacency::Sides));
        assert!(!g.adjacent(1, 8, Adjacency::Sides));
        assert!(g.adjacent(1, 8, Adjacency::SidesAndCorners));
        assert!(!g.adjacent(6, 7, Adjacency::SidesAndCorners)); // end of a row, not a neighbour
        assert!(!g.adjacent(1, 1, Adjacency::SidesAndCorners));
        assert!(!g.adjacent(0, 1, Adjacency::Sides));
        assert!(!g.adjacent(24, 25, Adjacency::Sides));
        assert_eq!(g.neighbours(1, Adjacency::Sides), vec![2, 7]);
        assert_eq!(g.neighbours(1, Adjacency::SidesAndCorners), vec![2, 7, 8]);
        assert_eq!(g.neighbours(8, Adjacency::Sides), vec![2, 7, 9, 14]);
        assert_eq!(
            g.neighbours(8, Adjacency::SidesAndCorners),
            vec![1, 2, 3, 7, 9, 13, 14, 15]
        );
        assert_eq!(g.neighbours(24, Adjacency::Sides), vec![18, 23]);
        assert_eq!(g.neighbours(0, Adjacency::Sides), Vec::<u32>::new());
        assert_eq!(g.neighbours(99, Adjacency::Sides), Vec::<u32>::new());
        let single = SectorGrid::new(100, 100, 100, 1).unwrap();
        assert_eq!(
            single.neighbours(1, Adjacency::SidesAndCorners),
            Vec::<u32>::new()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn points_land_in_their_zone(x in 0..=180 * CM, y in 0..=120 * CM) {
            let g = battlefield();
            let point = p(x, y);
            let zone = g.zone_of(point).unwrap();
            prop_assert_eq!(Some(zone.sector), g.sector_of(point));
            prop_assert!((1..=9).contains(&zone.zone));
            prop_assert!(g.zone_bounds(zone).unwrap().contains(point));
            prop_assert!(g.sector_bounds(zone.sector).unwrap().contains(point));
            // The zone's centre is in the same zone.
            prop_assert_eq!(g.zone_of(g.zone_centre(zone).unwrap()), Some(zone));
        }

        #[test]
        fn adjacency_is_symmetric(a in 0u32..26, b in 0u32..26, corners in any::<bool>()) {
            let g = battlefield();
            let kind = if corners { Adjacency::SidesAndCorners } else { Adjacency::Sides };
            prop_assert_eq!(g.adjacent(a, b, kind), g.adjacent(b, a, kind));
            prop_assert_eq!(g.neighbours(a, kind).contains(&b), g.adjacent(a, b, kind));
        }
    }
}
