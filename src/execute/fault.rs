//! Fault injection for the fault suite (tests/faults.rs), so that kill points are chosen by
//! progress rather than time. With `EAVPIVOT_FAULT_PAUSE=<point>` a run stops at that point —
//! a step of the write path (`created`, `loaded`, `commit` (just before COMMIT), `committed`, `swapped`) or a share of the
//! streamed source rows (`stream:<percent>`) — says so on stderr, and waits: to be killed, or,
//! once the file `EAVPIVOT_FAULT_RESUME` names exists, to go on (after the test ended one of
//! its connections on the server), for at most a minute. Inert when the variable is unset.

use std::time::Duration;

/// The pause point asked for, if any.
pub fn asked() -> Option<String> {
    std::env::var("EAVPIVOT_FAULT_PAUSE").ok()
}

/// Stop at the write path's step `point` when asked to.
pub fn pause_at(point: &str) {
    if asked().as_deref() == Some(point) {
        wait(point);
    }
}

/// Say where the run stopped and wait there. A blocking wait: the whole process stops,
/// reading task and all, as a kill would find it.
pub fn wait(label: &str) {
    eprintln!("eavpivot: paused at {label} (EAVPIVOT_FAULT_PAUSE)");
    let resume = std::env::var_os("EAVPIVOT_FAULT_RESUME").map(std::path::PathBuf::from);
    for _ in 0..1_200 {
        if resume.as_ref().is_some_and(|f| f.exists()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
