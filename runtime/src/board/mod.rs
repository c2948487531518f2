//! Board geometry for the game engine: where pieces are, how far apart, what lies between.
//!
//! Three kinds of board, one module each, named for what it owns (and [`bearing`], directions
//! on an open table):
//! - [`hex`]: hex grids labelled as printed in rulebooks (`S11`): distance, neighbours,
//!   routes, terrain on a route, cheapest movement paths;
//! - [`table`]: an open table for miniatures, in integer tenths of a millimetre: distance,
//!   bounded straight moves, line of sight against terrain shapes, length inside terrain;
//! - [`sectors`]: a table cut into numbered square sectors and zones.
//!
//! Everything here is generic and driven by data the engine reads from a ruleset: no game is
//! named, and terrain is an opaque [`TerrainId`] the ruleset assigns. No floating point is
//! used: rule decisions (in range or not, blocked or not) must come out the same on every
//! machine, so all geometry is exact integer arithmetic, and where a result is irrational
//! (a length) the rounding is stated next to the function. No function panics on any input;
//! values that cannot be represented are refused when built (constructors return errors), so
//! the arithmetic afterwards cannot overflow.

pub mod bearing;
pub mod hex;
pub(crate) mod isqrt;
pub mod sectors;
pub mod table;

/// A kind of terrain, numbered by the engine from the ruleset's terrain definitions. The
/// geometry only compares these numbers; it gives them no meaning.
pub type TerrainId = u32;

pub use hex::{Axial, Cube, HexCoord, HexError, HexGrid, HexLayout, Path};
pub use sectors::{Adjacency, SectorError, SectorGrid, ZoneRef};
pub use table::{Geometry, Point, Shape, TableError};
