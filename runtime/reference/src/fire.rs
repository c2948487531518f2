//! Hand-written Rust versions of two encoded procedures, used only by `sandtable bench` as
//! the speed reference the JIT is measured against. They draw from the same [`Dice`] in the
//! same order as the rules, so a benchmark can also check they agree.

use sandtable_runtime::rng::Dice;

fn roll(dice: &mut Dice, sides: u32) -> i64 {
    i64::from(dice.index(sides)) + 1
}

/// Platoon 7.a: opposed d10 + modifiers; 0 miss, 1 pinned down, 2 eliminated.
pub fn platoon_fire(
    dice: &mut Dice,
    fire_modifier: i64,
    target_modifier: i64,
    fortification: i64,
) -> u8 {
    let attack = roll(dice, 10) + fire_modifier;
    let defence = roll(dice, 10) + target_modifier + fortification;
    match attack - defence {
        ..=0 => 0,
        1..=4 => 1,
        _ => 2,
    }
}

/// Inputs of Dinky Dau 5.1 shooting.
#[derive(Debug, Clone, Copy)]
pub struct Shooting {
    pub dice: i64,
    /// 0 no cover, 1 medium, 2 heavy.
    pub cover: u8,
    pub firer_pinned: bool,
    pub point_blank: bool,
    /// The save target: 6, 5 or 4.
    pub save: i64,
    pub fleeting: bool,
    pub trail_column: bool,
    pub desperate_return_fire: bool,
}

/// Dinky Dau 5.1: a pool of d6 hitting on a modified 4+ (between 2+ and 7+), then one save
/// roll per hit; the hits that are not saved.
pub fn dinky_dau_shooting(dice: &mut Dice, s: &Shooting) -> i64 {
    let mut mods = 0;
    mods -= match s.cover {
        1 => 1,
        2 => 2,
        _ => 0,
    };
    if s.firer_pinned {
        mods -= 1;
    }
    if s.point_blank {
        mods += 1;
    }
    if s.fleeting {
        mods -= 1;
    }
    if s.trail_column {
        mods += 1;
    }
    if s.desperate_return_fire {
        mods -= 1;
    }
    let target = (4 - mods).clamp(2, 7);
    let mut hits = 0;
    for _ in 0..s.dice {
        if roll(dice, 6) >= target {
            hits += 1;
        }
    }
    let mut saves = 0;
    for _ in 0..hits {
        if roll(dice, 6) >= s.save {
            saves += 1;
        }
    }
    hits - saves
}
