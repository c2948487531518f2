//! SIGINT and SIGTERM during a long command (`run`, `sim`): the first asks the command to stop
//! at a safe point and save what it has; a second one ends the process at once.

use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The exit status for a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// Call `handler` with the signal's number, on a thread of its own, at the first SIGINT or
/// SIGTERM; at the second, exit at once. When signals cannot be heard (no thread can be
/// started), they keep their default effect.
pub fn on_signal(handler: impl Fn(i32) + Send + Sync + 'static) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let handler = Arc::new(handler);
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut heard = false;
            for signal in signals.forever() {
                if heard {
                    std::process::exit(exit_code(signal));
                }
                heard = true;
                let handler = handler.clone();
                // The handler may wait (for the command to reach a safe point); a second
                // signal is still heard meanwhile.
                let _ = std::thread::Builder::new()
                    .name("interrupt".into())
                    .spawn(move || handler(signal));
            }
        });
}
