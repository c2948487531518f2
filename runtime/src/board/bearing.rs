//! Bearings on an open table: the direction from one point to another in whole degrees,
//! clockwise from the direction of the top edge (0 toward the top edge, 90 toward the right
//! edge, 180 toward the bottom edge, 270 toward the left edge).
//!
//! Rules that read a facing or an arc ("a 90 degree forward arc", "the rear arc, 180 degrees
//! behind the direction of march") keep a bearing on a piece and compare bearings. Like the
//! rest of the board geometry this is exact integer arithmetic, so a target on the edge of an
//! arc falls the same way on every machine: the bearing is rounded to the nearest degree
//! (half a degree rounds up, clockwise) by comparing the direction with the tangents of the
//! half degrees, written below as integers (tan scaled by 2^32, rounded; computed once to 40
//! digits). No floating point is used.

use super::table::Point;

/// `tan((k + 0.5) degrees) * 2^32`, rounded, for k in 0..90: the boundaries between whole
/// degrees inside a quarter turn.
const TAN_HALF_DEGREES: [i64; 90] = [
    37_481_612,
    112_467_677,
    187_522_322,
    262_691_453,
    338_021_257,
    413_558_313,
    489_349_712,
    565_443_172,
    641_887_163,
    718_731_033,
    796_025_137,
    873_820_972,
    952_171_326,
    1_031_130_419,
    1_110_754_067,
    1_191_099_847,
    1_272_227_273,
    1_354_197_987,
    1_437_075_955,
    1_520_927_688,
    1_605_822_471,
    1_691_832_610,
    1_779_033_704,
    1_867_504_930,
    1_957_329_363,
    2_048_594_314,
    2_141_391_701,
    2_235_818_457,
    2_331_976_973,
    2_429_975_579,
    2_529_929_081,
    2_631_959_344,
    2_736_195_935,
    2_842_776_839,
    2_951_849_240,
    3_063_570_399,
    3_178_108_618,
    3_295_644_319,
    3_416_371_248,
    3_540_497_818,
    3_668_248_612,
    3_799_866_077,
    3_935_612_425,
    4_075_771_779,
    4_220_652_607,
    4_370_590_473,
    4_525_951_175,
    4_687_134_322,
    4_854_577_424,
    5_028_760_595,
    5_210_211_959,
    5_399_513_909,
    5_597_310_356,
    5_804_315_174,
    6_021_322_075,
    6_249_216_194,
    6_488_987_746,
    6_741_748_219,
    7_008_749_628,
    7_291_407_577,
    7_591_328_996,
    7_910_345_722,
    8_250_555_412,
    8_614_371_703,
    9_004_586_193,
    9_424_445_583,
    9_877_748_526,
    10_368_968_296,
    10_903_409_688,
    11_487_411_846,
    12_128_613_490,
    12_836_304_173,
    13_621_895_952,
    14_499_566_593,
    15_487_151_743,
    16_607_406_286,
    17_889_826_291,
    19_373_345_505,
    21_110_438_703,
    23_173_569_809,
    25_665_712_514,
    28_738_297_216,
    32_623_515_503,
    37_696_444_158,
    44_604_940_815,
    54_572_733_798,
    70_222_094_564,
    98_370_923_986,
    164_018_183_765,
    492_154_504_798,
];

/// The bearing from `from` to `to` in whole degrees, 0..=359, clockwise from the direction of
/// the top edge (`y` grows down the table); 0 when the points coincide.
pub fn bearing(from: Point, to: Point) -> i64 {
    // Differences of coordinates within ±MAX_COORD fit easily in i64.
    let (mut x, mut y) = (to.x() - from.x(), to.y() - from.y());
    if x == 0 && y == 0 {
        return 0;
    }
    // Turn the direction a quarter turn anticlockwise until it lies in the first quarter
    // (toward the top edge, up to but not including the right edge): x >= 0, y < 0. Each
    // turn adds 90 degrees to the bearing.
    let mut quarters = 0;
    while !(x >= 0 && y < 0) {
        (x, y) = (y, -x);
        quarters += 1;
    }
    // In the first quarter the bearing is atan(x / -y); count the half degrees it has
    // passed: tan((k + 0.5) deg) <= x / -y  <=>  x * 2^32 >= -y * T[k] (exact in i128).
    let ahead = i128::from(-y);
    let across = i128::from(x) << 32;
    let degrees = TAN_HALF_DEGREES
        .iter()
        .take_while(|&&t| across >= ahead * i128::from(t))
        .count() as i64;
    (quarters * 90 + degrees) % 360
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: i64, y: i64) -> Point {
        Point::new(x, y).unwrap()
    }

    #[test]
    fn the_four_edges_and_the_diagonals() {
        let o = p(0, 0);
        assert_eq!(bearing(o, p(0, -100)), 0);
        assert_eq!(bearing(o, p(100, -100)), 45);
        assert_eq!(bearing(o, p(100, 0)), 90);
        assert_eq!(bearing(o, p(100, 100)), 135);
        assert_eq!(bearing(o, p(0, 100)), 180);
        assert_eq!(bearing(o, p(-100, 100)), 225);
        assert_eq!(bearing(o, p(-100, 0)), 270);
        assert_eq!(bearing(o, p(-100, -100)), 315);
        assert_eq!(bearing(o, o), 0);
    }

    #[test]
    fn rounds_to_the_nearest_degree() {
        // atan(1/2) = 26.565 degrees; atan(2) = 63.435.
        assert_eq!(bearing(p(0, 0), p(1, -2)), 27);
        assert_eq!(bearing(p(0, 0), p(2, -1)), 63);
        // Just anticlockwise of the top edge's direction: 359.97 rounds to 360, that is 0.
        assert_eq!(bearing(p(0, 0), p(-1, -2_000)), 0);
        // 1 in 100 off the right edge's direction, below it: 90.57 rounds to 91.
        assert_eq!(bearing(p(0, 0), p(100, 1)), 91);
        // Far corners of the largest table.
        assert_eq!(
            bearing(p(-10_000_000, 10_000_000), p(10_000_000, -10_000_000)),
            45
        );
    }

    #[test]
    fn every_whole_degree_comes_back() {
        // Points on a circle of radius 10^6 at each whole degree (taken from the table of
        // tangents: tan(k deg) lies between the half degrees around it).
        for k in 0..360_i64 {
            let rad = (k as f64).to_radians();
            let (x, y) = (
                (rad.sin() * 1e6).round() as i64,
                (-rad.cos() * 1e6).round() as i64,
            );
            assert_eq!(bearing(p(0, 0), p(x, y)), k, "{k} degrees");
        }
    }
}
