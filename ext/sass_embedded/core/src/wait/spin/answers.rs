//! How long a lone caller's answers take on this machine, learnt from the
//! answers this process sees, and the spin budget that follows them
//! ([`super::spin`] asks when `SASS_EMBEDDED_SPIN_US` is unset).
//!
//! A spin pays only if it lasts until the answer: one that gives up a moment
//! early has spent its CPU and still sleeps through the cross-CPU wake-ups
//! it was meant to avoid. How long a tiny compile takes the compiler differs
//! between machines by 2× and more (150–300 µs on two 2-vCPU VMs of the same
//! kind; more on a laptop on battery or a small cloud VM), and a stylesheet
//! with a loop takes it milliseconds. So no fixed budget fits: one that fits
//! one machine's tiny compiles misses another's nearly every time.
//!
//! Each answer a lone caller waited for (from its first wait after it wrote
//! until its next event: [`Answer`]) is recorded, whether it spun or slept.
//! Whether answers are short is judged by the time [`CAUGHT`] of the last
//! [`WINDOW`] came within: a percentile, not a mean, so one slow compile
//! among tiny ones (a first compile warming the compiler, a Bootstrap build
//! in a loop of small ones) does not stop the spinning. Where that time
//! passes [`LONG`], answers are long and nothing spins: the spin saves a
//! few wake-ups (tens of µs each) whatever the answer's length, but costs a
//! CPU for all of it, so beyond a couple of milliseconds it would double the
//! compile's CPU for a few percent of its time. Those slept answers keep
//! being recorded, so spinning starts again as soon as answers are short
//! again.
//!
//! Where answers are short, the budget covers twice that time, and every
//! recent answer up to twice [`LONG`] with a quarter to spare: a spin that
//! ends early costs far more than one allowed to last longer than needed. A
//! spin ends as soon as its answer comes, so the margin is spent only on the
//! rare answer that takes it, while every miss sleeps through the wake-ups
//! the spin was for, and the compiler's threads, woken across CPUs again,
//! answer the next compiles late too. The rare late answers are the
//! compiler's own pauses (a garbage collection: 1–2 ms every few dozen tiny
//! compiles on a 2-vCPU machine). Measured there (docs/performance.md): with
//! a quarter more than the percentile, 1 in 12 spins missed; with twice it,
//! about 1 in 100, and one compile at a time on another thread was still
//! 1.19× slower than with a fixed 2 ms budget, which catches the pauses.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many recent answers the budget follows.
pub const WINDOW: usize = 32;

/// The share of recent answers, in percent, a spin of the budget's length
/// (before its margin) would have caught.
pub const CAUGHT: usize = 90;

/// The budget before any answer was seen.
pub const FIRST: Duration = Duration::from_micros(250);

/// Answers longer than this (nine in ten of the recent ones) are not spun
/// for.
pub const LONG: Duration = Duration::from_millis(2);

/// The shortest: below it a spin cannot tell a quick answer from none.
pub const SHORTEST: Duration = Duration::from_micros(50);

/// The budget now, in µs; `u64::MAX` where answers are long.
static BUDGET_US: AtomicU64 = AtomicU64::new(FIRST.as_micros() as u64);

/// The last [`WINDOW`] answers, in µs, oldest overwritten first.
struct Recent {
    answers: [u32; WINDOW],
    len: usize,
    next: usize,
}

static RECENT: Mutex<Recent> = Mutex::new(Recent {
    answers: [0; WINDOW],
    len: 0,
    next: 0,
});

/// The adaptive budget: how long a lone caller should spin now, or `None`
/// where recent answers were too long to spin for.
pub fn budget() -> Option<Duration> {
    match BUDGET_US.load(Ordering::Relaxed) {
        u64::MAX => None,
        micros => Some(Duration::from_micros(micros)),
    }
}

/// Learns one answer a lone caller waited `took` for.
pub fn record(took: Duration) {
    // Only a lone caller records, so the lock is not contended; should two
    // ever meet, the second answer is not learnt.
    let Ok(mut recent) = RECENT.try_lock() else {
        return;
    };
    let micros = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
    let at = recent.next;
    recent.answers[at] = micros;
    recent.next = (at + 1) % WINDOW;
    recent.len = (recent.len + 1).min(WINDOW);
    let budget = budget_for(&recent.answers[..recent.len]);
    drop(recent);
    BUDGET_US.store(
        budget.map_or(u64::MAX, |budget| budget.as_micros() as u64),
        Ordering::Relaxed,
    );
}

/// The budget that answers taking `answers` µs call for (see the module
/// docs).
fn budget_for(answers: &[u32]) -> Option<Duration> {
    if answers.is_empty() {
        return Some(FIRST);
    }
    let mut sorted = [0u32; WINDOW];
    let sorted = &mut sorted[..answers.len()];
    sorted.copy_from_slice(answers);
    sorted.sort_unstable();
    let rank = (answers.len() * CAUGHT).div_ceil(100).max(1) - 1;
    let usual = Duration::from_micros(u64::from(sorted[rank]));
    if usual > LONG {
        return None;
    }
    let cap = LONG * 2;
    let latest_caught = sorted
        .iter()
        .rev()
        .map(|&micros| Duration::from_micros(u64::from(micros)))
        .find(|&answer| answer <= cap)
        .unwrap_or_default();
    Some(
        (usual * 2)
            .max(latest_caught + latest_caught / 4)
            .clamp(SHORTEST, cap),
    )
}

/// One answer a caller waits for: started at its first wait, learnt when
/// its event comes, if the caller was alone all along (a caller that
/// parked, or that had company, waited for other callers' answers too).
#[derive(Debug, Default)]
pub(crate) enum Answer {
    /// Not waiting.
    #[default]
    None,
    /// Waiting, alone, since then.
    Alone(Instant),
    /// Waiting, not alone at some point: not learnt.
    Shared,
}

impl Answer {
    /// The caller waits (again) for its answer; `alone`: as the lone caller
    /// watching the compiler.
    pub(crate) fn waits(&mut self, alone: bool) {
        *self = match (std::mem::take(self), alone) {
            (Self::None, true) => Self::Alone(Instant::now()),
            (Self::Alone(since), true) => Self::Alone(since),
            _ => Self::Shared,
        };
    }

    /// The caller's event came; learnt if it waited alone (and still is).
    pub(crate) fn came(&mut self, alone: bool) {
        if let (Self::Alone(since), true) = (std::mem::take(self), alone) {
            record(since.elapsed());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(answers: &[u32]) -> Option<u64> {
        budget_for(answers).map(|budget| budget.as_micros() as u64)
    }

    #[test]
    fn the_budget_is_twice_what_nine_in_ten_recent_answers_took() {
        assert_eq!(budget(&[]), Some(250));
        assert_eq!(budget(&[200]), Some(400));
        // Tiny compiles on a fast machine, and on a slow one.
        assert_eq!(budget(&[150; WINDOW]), Some(300));
        let slow: Vec<u32> = (0..WINDOW as u32).map(|i| 250 + i * 10).collect();
        // 29th of 32: 530 µs; the latest, 560, with a quarter: 700.
        assert_eq!(budget(&slow), Some(1_060));
        // A compile the compiler takes about a millisecond for.
        assert_eq!(budget(&[900; WINDOW]), Some(1_800));
    }

    #[test]
    fn the_compilers_own_pauses_are_waited_for_and_long_answers_are_not() {
        // A garbage collection of the compiler's among tiny compiles.
        let mut answers = [180u32; WINDOW];
        answers[7] = 1_500;
        assert_eq!(budget(&answers), Some(1_875));
        // Beside it, a Bootstrap build and the compiler's first compile:
        // too long to wait for, and too few to stop the spinning.
        answers[3] = 250_000;
        answers[17] = 40_000;
        assert_eq!(budget(&answers), Some(1_875));
        // Without the pause: twice the tiny answers.
        answers[7] = 180;
        assert_eq!(budget(&answers), Some(360));
        // A pause near twice LONG: the budget stops there.
        answers[7] = 3_900;
        assert_eq!(budget(&answers), Some(4_000));
    }

    #[test]
    fn long_answers_are_not_spun_for_and_short_ones_get_the_shortest_spin() {
        assert_eq!(budget(&[250_000; WINDOW]), None);
        assert_eq!(budget(&[2_001; WINDOW]), None);
        assert_eq!(budget(&[2_000; WINDOW]), Some(4_000));
        assert_eq!(budget(&[5; WINDOW]), Some(50));
        // A stylesheet that got long: nothing spins once 4 of the last 32
        // answers were long, whatever the rest.
        let mut answers = [180u32; WINDOW];
        answers[..4].fill(30_000);
        assert_eq!(budget(&answers), None);
        answers[..3].fill(180);
        assert_eq!(budget(&answers), Some(360));
    }

    #[test]
    fn only_an_answer_waited_for_alone_throughout_is_learnt() {
        let mut answer = Answer::default();
        answer.waits(true);
        answer.waits(true);
        assert!(matches!(answer, Answer::Alone(_)));
        answer.waits(false);
        assert!(matches!(answer, Answer::Shared));
        answer.came(true);
        assert!(matches!(answer, Answer::None));
        answer.waits(true);
        answer.came(false);
        assert!(matches!(answer, Answer::None));
    }
}
