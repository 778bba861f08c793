//! Spinning before sleeping: how a lone caller waits for an answer that is
//! probably a moment away.
//!
//! A tiny compile takes the compiler 150–300 µs. If the caller goes to sleep
//! for it, its CPU goes idle, and the compiler's threads (an I/O thread and
//! two workers that hand the compile to each other) and then the caller are
//! each woken on whichever CPU is idle: on two CPUs, mostly the *other* one,
//! paying a cross-CPU wake-up and a cold cache at every hop. Measured on a
//! 2-vCPU machine (see docs/performance.md): 1–2 CPU migrations of the
//! compiler per compile and 270–330 µs per compile. If the caller instead
//! keeps its CPU busy until the answer comes, the compiler settles on the
//! other CPU and stays there, and the caller sees the answer without being
//! woken: no migrations, 170–200 µs per compile.
//!
//! So the watcher spins, looking at its descriptors without blocking, for at
//! most [`budget`] before it sleeps as usual. The budget follows how long
//! this process's answers take ([`answers`]: twice what nine in ten of the
//! recent ones took, or the longest of them up to 4 ms, and nothing where
//! they take milliseconds);
//! `SASS_EMBEDDED_SPIN_US` sets a fixed one instead (0 turns spinning off).
//! And it spins only where that costs nobody anything:
//!
//! - it is the only caller in the process with a compile or version request
//!   in flight ([`Caller`] counts them), so no other caller of this host
//!   could use the CPU it holds;
//! - the process may run on at least two CPUs (on one, spinning would take
//!   the CPU the compiler needs);
//! - it is a thread, not a fiber under a scheduler (whose other fibers need
//!   the thread): the runtime decides that (see `Wait::Spin`);
//! - a CPU is free for it ([`gate`]: on Linux, three quarters of a CPU was idle
//!   or spun by this process over the last 100 ms, and a whole one of the
//!   process's CPU quota, where one applies). A spin pays only while another
//!   CPU is idle for the compiler; where every CPU is busy (several
//!   processes compiling, other work), the answer comes late, the spin
//!   burns its whole budget, and its CPU is taken from the compiler it
//!   waits for or from someone else. Each process sees only its own
//!   callers, so it asks the scheduler's view;
//! - its spins catch their answers ([`Pacing`]): where answers come later
//!   than the budget, spinning all but stops (a probe every [`MAX_PAUSE`] +
//!   1 waits) until one catches again.
//!
//! The compiler writes a packet's length and its body in two writes, so a
//! spin often catches the length alone. The caller then reads on for the
//! body, for at most [`settle`] (a sixteenth of its spin's budget: the two
//! writes are microseconds apart), instead of waiting a second time: one
//! wait per answer, not two (measured: 1.9 waits per tiny compile before, 1.0
//! after; 6–8% less wall time and host CPU per compile).
//!
//! The runtime spins without holding anything another thread needs (Ruby
//! releases its GVL), and stops when it is interrupted: at once, or, where
//! only a signal can interrupt it (Ruby's only thread), within the budget.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod answers;
pub mod gate;

use super::{wait_readable, Fds};

/// The most `SASS_EMBEDDED_SPIN_US` may ask for: spinning longer than a
/// few milliseconds never pays.
const MAX_BUDGET: Duration = Duration::from_millis(5);

/// How many callers are in flight, and in which fork generation (the upper
/// 32 bits): a forked child starts counting afresh, since the callers it
/// inherited from the parent's other threads never end in it.
static CALLERS: AtomicU64 = AtomicU64::new(0);

fn pack(generation: u64, count: u64) -> u64 {
    (generation << 32) | (count & 0xffff_ffff)
}

fn generation_of(packed: u64) -> u64 {
    packed >> 32
}

fn current_generation() -> u64 {
    crate::fork::generation() & 0xffff_ffff
}

/// One caller in flight (a compilation's or a version request's), counted
/// from its registration until it is dropped.
#[derive(Debug)]
pub(crate) struct Caller {
    generation: u64,
}

impl Caller {
    pub(crate) fn enter() -> Self {
        let generation = current_generation();
        let _ = CALLERS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |packed| {
            let count = if generation_of(packed) == generation {
                packed & 0xffff_ffff
            } else {
                0
            };
            Some(pack(generation, count + 1))
        });
        Self { generation }
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        let generation = self.generation;
        // A caller from before a fork (dropped in the child) counts nothing
        // there.
        let _ = CALLERS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |packed| {
            (generation_of(packed) == generation && packed & 0xffff_ffff > 0).then(|| packed - 1)
        });
    }
}

/// How many callers are in flight in this process.
pub(crate) fn callers() -> u64 {
    let packed = CALLERS.load(Ordering::Acquire);
    if generation_of(packed) == current_generation() {
        packed & 0xffff_ffff
    } else {
        0
    }
}

/// How long the watcher may spin now: `Some` only for a lone caller on a
/// machine with two CPUs or more, one of them to spare now
/// ([`gate`]), a budget that is not 0 (answers that are not long,
/// where it follows them), and spins that have been catching their answers
/// ([`Pacing`]).
pub(crate) fn budget() -> Option<Duration> {
    if callers() > 1 {
        return None;
    }
    WAITS.fetch_add(1, Ordering::Relaxed);
    let budget = match configured() {
        Ok(Budget::Fixed(budget)) if !budget.is_zero() => budget,
        Ok(Budget::Answers) => match answers::budget() {
            Some(budget) => budget,
            None => {
                LONG.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        },
        Ok(Budget::Fixed(_)) | Err(_) => return None,
    };
    if !gate::cpu_to_spare(spun()) {
        DECLINED.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let spin = PACING.spin_now();
    if !spin {
        PACED.fetch_add(1, Ordering::Relaxed);
    }
    spin.then_some(budget)
}

/// How long a caller whose spin of `budget` just caught the compiler's
/// output reads on for the rest of a packet the compiler is half way through
/// writing (see the module's documentation): the second write comes
/// microseconds after the first (1–3 µs measured, on a quiet machine and
/// beside two busy loops), so a sixteenth of the budget, which follows how
/// fast this machine answers, is room enough; one that comes later than that
/// is waited for as usual. The caller reads where it looks for its answer,
/// which a Ruby runtime does holding its lock (the GVL): no other thread of
/// the process waits on it longer than this, once per answer.
pub(crate) fn settle(budget: Duration) -> Duration {
    budget / 16
}

/// The variable that sets the budget, in whole microseconds.
pub const BUDGET_VARIABLE: &str = "SASS_EMBEDDED_SPIN_US";

/// What sets the spin's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Budget {
    /// `SASS_EMBEDDED_SPIN_US` (0: never spin; so on a single CPU).
    Fixed(Duration),
    /// How long recent answers took ([`answers`]): the default.
    Answers,
}

/// The budget's rule, from `SASS_EMBEDDED_SPIN_US` or the default, or no
/// spin on a single CPU; read once. An error says what is wrong with the
/// variable (the runtime raises it when a host is made: see
/// [`check_configuration`]), and then nothing spins.
fn configured() -> Result<Budget, &'static str> {
    static BUDGET: OnceLock<Result<Budget, String>> = OnceLock::new();
    let budget = BUDGET.get_or_init(|| {
        let budget = parse_budget(std::env::var(BUDGET_VARIABLE).ok().as_deref())?;
        Ok(if gate::cpus() < 2 {
            Budget::Fixed(Duration::ZERO)
        } else {
            budget
        })
    });
    budget.as_ref().copied().map_err(String::as_str)
}

/// The budget `value` of `SASS_EMBEDDED_SPIN_US` asks for: unset or empty,
/// the one recent answers call for; whole microseconds up to [`MAX_BUDGET`]
/// (more is cut to it); 0 turns spinning off. Anything else is refused,
/// since a budget that was meant and silently not taken is worse than an
/// error.
fn parse_budget(value: Option<&str>) -> Result<Budget, String> {
    let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) else {
        return Ok(Budget::Answers);
    };
    match value.parse::<u64>() {
        Ok(micros) => Ok(Budget::Fixed(Duration::from_micros(micros).min(MAX_BUDGET))),
        Err(_) => Err(format!(
            "{BUDGET_VARIABLE} must be a whole number of microseconds to spin before sleeping \
             (0 turns spinning off, at most {}), got {value:?}",
            MAX_BUDGET.as_micros()
        )),
    }
}

/// Whether `SASS_EMBEDDED_SPIN_US` is well formed: the runtime asks when it
/// makes a host, and raises the error.
pub fn check_configuration() -> Result<(), String> {
    configured().map(|_| ()).map_err(str::to_owned)
}

/// The longest pause between spins, in waits: the probe rate once spins
/// keep missing.
pub const MAX_PAUSE: u32 = 63;

/// How often to spin, from what recent spins caught. A spin that misses
/// right after one that caught changes nothing: the budget is meant to
/// outlast nearly every answer, and pausing after one late answer would
/// send the next waits to sleep, where the compiler's threads go cold and
/// migrate, and their answers come late too. Each further miss in a row
/// doubles the pause (the number of waits that do not spin before the next
/// one does) plus one, up to [`MAX_PAUSE`]; one that catches its answer
/// ends the pause. So where answers take longer than the budget (a fixed
/// budget too short for them, slow callbacks) spinning drifts to a probe
/// every [`MAX_PAUSE`] + 1 waits instead of burning its budget at every
/// wait, and where they come within it, every wait spins. (A busy machine
/// is the CPU gate's to judge, [`gate`]: a probe after a pause meets
/// a compiler gone cold, which catches less often than a run of spins does,
/// so the catches alone would judge an idle machine busy.) A spin stopped
/// by an interrupt says nothing either way.
pub struct Pacing {
    /// Spins that missed in a row, up to the last.
    misses: AtomicU32,
    /// Waits left before the next spin.
    left: AtomicU32,
}

static PACING: Pacing = Pacing::new();

impl Pacing {
    pub const fn new() -> Self {
        Self {
            misses: AtomicU32::new(0),
            left: AtomicU32::new(0),
        }
    }

    /// Whether this wait spins; else one wait of the pause is used up.
    /// (Only a lone caller asks, so the counters see no contention.)
    pub fn spin_now(&self) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_err()
    }

    /// A spin ended, having caught its answer or not.
    pub fn record(&self, caught: bool) {
        let misses = if caught {
            0
        } else {
            self.misses.load(Ordering::Relaxed).saturating_add(1)
        };
        self.misses.store(misses, Ordering::Relaxed);
        // 0, 0, 1, 3, 7, ... waits of pause after 0, 1, 2, 3, 4, ... misses.
        let pause = 1u32
            .checked_shl(misses.saturating_sub(1))
            .map_or(MAX_PAUSE, |doubled| (doubled - 1).min(MAX_PAUSE));
        self.left.store(pause, Ordering::Relaxed);
    }
}

impl Default for Pacing {
    fn default() -> Self {
        Self::new()
    }
}

/// What spinning cost and caught so far in this process (see [`stats`]).
static SPINS: AtomicU64 = AtomicU64::new(0);
static CAUGHT: AtomicU64 = AtomicU64::new(0);
static SPUN_NANOS: AtomicU64 = AtomicU64::new(0);
static DECLINED: AtomicU64 = AtomicU64::new(0);
static LONG: AtomicU64 = AtomicU64::new(0);
static PACED: AtomicU64 = AtomicU64::new(0);
static WAITS: AtomicU64 = AtomicU64::new(0);

/// What the spins of this process did so far: how many there were, how many
/// saw a descriptor become readable before their budget ran out, the CPU
/// time they took in all (the spinning thread's, not the wall time, which
/// also counts while another thread had the CPU), and how many waits did not
/// spin for want of a free CPU, for answers too long or for spins that
/// missed; and what a lone caller's spin would be
/// given now, and the CPU quota the gate judges by. For the benchmark, which
/// reports the host's CPU with and without it, and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub spins: u64,
    pub caught: u64,
    pub spun: Duration,
    /// Waits of a lone caller that did not spin because no CPU was free
    /// ([`gate`]).
    pub declined: u64,
    /// The budget a lone caller's spin would have now, CPU and pacing
    /// aside: `SASS_EMBEDDED_SPIN_US`'s, or the one recent answers call for
    /// ([`answers`]); `None` if nothing would spin.
    pub budget: Option<Duration>,
    /// The process's CPU quota, in CPUs, as the gate last read it
    /// ([`gate`]); `None` where none applies (or none was read yet).
    pub quota: Option<f64>,
    /// Waits of a lone caller that did not spin because recent answers took
    /// too long to spin for ([`answers`]: a busy or slow machine, or long
    /// compiles).
    pub long: u64,
    /// Waits of a lone caller that did not spin because recent spins missed
    /// ([`Pacing`]).
    pub paced: u64,
    /// Waits of a lone caller that asked whether to spin ([`budget`]):
    /// with a budget set, each spun (or, a fiber's, waited in its
    /// scheduler) or was declined, long or paced. An answer routed before
    /// its caller looked (as a reader thread can route it) is no wait.
    pub waits: u64,
}

/// The CPU time this process's spins took so far.
fn spun() -> Duration {
    Duration::from_nanos(SPUN_NANOS.load(Ordering::Relaxed))
}

/// The spins of this process so far.
pub fn stats() -> Stats {
    Stats {
        spins: SPINS.load(Ordering::Relaxed),
        caught: CAUGHT.load(Ordering::Relaxed),
        spun: spun(),
        declined: DECLINED.load(Ordering::Relaxed),
        budget: match configured() {
            Ok(Budget::Fixed(budget)) => Some(budget).filter(|budget| !budget.is_zero()),
            Ok(Budget::Answers) => answers::budget(),
            Err(_) => None,
        },
        quota: gate::quota_cpus(),
        long: LONG.load(Ordering::Relaxed),
        paced: PACED.load(Ordering::Relaxed),
        waits: WAITS.load(Ordering::Relaxed),
    }
}

/// Looks at `fds` without blocking until one is readable (`true`), `budget`
/// has passed or `stop` is set (`false`).
pub fn until_readable(fds: Fds, budget: Duration, stop: &AtomicBool) -> bool {
    let start = Instant::now();
    let cpu_start = crate::sys::thread_cpu_time();
    let caught = loop {
        if wait_readable(fds, Some(Duration::ZERO)).unwrap_or(true) {
            break true;
        }
        if stop.load(Ordering::Relaxed) || start.elapsed() >= budget {
            break false;
        }
        std::hint::spin_loop();
    };
    if caught || !stop.load(Ordering::Relaxed) {
        PACING.record(caught);
    }
    SPINS.fetch_add(1, Ordering::Relaxed);
    CAUGHT.fetch_add(u64::from(caught), Ordering::Relaxed);
    let spun = crate::sys::thread_cpu_time().saturating_sub(cpu_start);
    SPUN_NANOS.fetch_add(
        u64::try_from(spun.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    caught
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wait::Bell;

    #[test]
    fn a_spin_ends_when_a_descriptor_becomes_readable() {
        let bell = std::sync::Arc::new(Bell::new().unwrap());
        let ringer = {
            let bell = bell.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                bell.ring();
            })
        };
        let never = AtomicBool::new(false);
        assert!(until_readable(
            Fds::one(bell.fd()),
            Duration::from_secs(10),
            &never
        ));
        ringer.join().unwrap();
    }

    #[test]
    fn spins_are_counted_with_what_they_caught_and_cost() {
        let bell = Bell::new().unwrap();
        let never = AtomicBool::new(false);
        let before = stats();
        let budget = Duration::from_millis(1);
        assert!(!until_readable(Fds::one(bell.fd()), budget, &never));
        bell.ring();
        assert!(until_readable(
            Fds::one(bell.fd()),
            Duration::from_secs(10),
            &never
        ));
        let after = stats();
        assert_eq!(after.spins - before.spins, 2);
        assert_eq!(after.caught - before.caught, 1);
        // Windows counts a thread's CPU time in clock ticks (10 to 16 ms),
        // and under Wine a spin's polls run mostly in the wineserver: there
        // the count only must not go back.
        if cfg!(windows) {
            assert!(after.spun >= before.spun);
        } else {
            assert!(after.spun > before.spun);
        }
    }

    #[test]
    fn a_spin_ends_at_its_budget_or_when_stopped() {
        let bell = Bell::new().unwrap();
        let never = AtomicBool::new(false);
        let start = Instant::now();
        assert!(!until_readable(
            Fds::one(bell.fd()),
            Duration::from_millis(2),
            &never
        ));
        assert!(start.elapsed() >= Duration::from_millis(2));
        let stopped = AtomicBool::new(true);
        assert!(!until_readable(
            Fds::one(bell.fd()),
            Duration::from_secs(3600),
            &stopped
        ));
    }

    #[test]
    fn spinning_goes_on_while_spins_catch_and_backs_off_while_they_miss() {
        let pacing = Pacing::new();
        let spins =
            |pacing: &Pacing, waits: usize| (0..waits).filter(|_| pacing.spin_now()).count();
        // Fresh, and while every spin catches: every wait spins.
        assert_eq!(spins(&pacing, 10), 10);
        pacing.record(true);
        assert_eq!(spins(&pacing, 10), 10);
        // The first miss in a row pauses nothing; each further one doubles
        // the pause (plus one): 1, 3, 7, ... up to MAX_PAUSE.
        let mut pauses = Vec::new();
        for _ in 0..9 {
            pacing.record(false);
            let pause = (0..).take_while(|_| !pacing.spin_now()).count();
            pauses.push(pause);
        }
        assert_eq!(pauses, [0, 1, 3, 7, 15, 31, 63, 63, 63]);
        assert_eq!(MAX_PAUSE, 63);
        // A probe that catches ends the pause: every wait spins again.
        pacing.record(true);
        assert_eq!(spins(&pacing, 10), 10);
    }

    #[test]
    fn answers_slower_than_the_budget_leave_a_probe_every_sixty_four_waits() {
        let pacing = Pacing::new();
        let mut spun = 0;
        for _ in 0..6400 {
            if pacing.spin_now() {
                spun += 1;
                pacing.record(false);
            }
        }
        // 0, 1, 3, 7, 15, 31 waits of pause, then 63: 106 spins in 6400 waits.
        assert!((100..=110).contains(&spun), "{spun} of 6400 waits spun");
    }

    #[test]
    fn the_budget_variable_is_whole_microseconds_or_an_error() {
        assert_eq!(parse_budget(None), Ok(Budget::Answers));
        assert_eq!(parse_budget(Some("")), Ok(Budget::Answers));
        let fixed = |micros| Ok(Budget::Fixed(Duration::from_micros(micros)));
        assert_eq!(parse_budget(Some(" 80 ")), fixed(80));
        assert_eq!(parse_budget(Some("0")), fixed(0));
        assert_eq!(parse_budget(Some("999999")), Ok(Budget::Fixed(MAX_BUDGET)));
        for bad in ["fast", "1.5", "-3", "250us"] {
            let error = parse_budget(Some(bad)).unwrap_err();
            assert!(
                error.contains("SASS_EMBEDDED_SPIN_US must be a whole number"),
                "{error}"
            );
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn callers_are_counted_and_a_second_one_stops_the_spinning() {
        // Other tests of this process may hold callers: count from here.
        let before = callers();
        let first = Caller::enter();
        assert_eq!(callers(), before + 1);
        let second = Caller::enter();
        assert_eq!(callers(), before + 2);
        assert_eq!(budget(), None);
        drop(first);
        drop(second);
        assert_eq!(callers(), before);
    }

    #[test]
    fn a_caller_from_another_fork_generation_is_not_counted() {
        let stale = Caller {
            generation: current_generation() + 1,
        };
        let before = callers();
        drop(stale);
        assert_eq!(callers(), before);
    }
}
