//! The spin's CPU gate: whether the machine has a CPU to spare for a spin,
//! in the scheduler's view, from the CPU time the kernel counts as idle
//! (Linux's /proc/stat), taken between compiles at most every [`WINDOW`].
//! The spin tells it how much CPU its spins took so far.
//!
//! A spin pays only while the compiler it waits for runs on another CPU
//! that nobody else wants: then the caller's CPU stays busy, the compiler's
//! threads stay on theirs, and nobody is woken across CPUs. Where every CPU
//! is taken (by other processes compiling, by busy loops, by a build), the
//! spin takes the CPU the compiler or someone else needed and burns its
//! budget. So over the last window three quarters of a CPU must have been
//! free: idle, or spent by this process spinning (which it would give up).
//! Measured over 100 ms windows on a 2-vCPU machine (docs/performance.md):
//! a lone compile, spinning or not, has 0.93–1.08 of a CPU free (the 10th
//! to the 90th percentile); with two processes compiling, 0 to 0.68. With
//! half a CPU as the bar (as first built) and a budget that follows the
//! answers, two processes both spun now and then, each taking the CPU the
//! other's compiler needed (60 µs of spinning a compile, 1.39× the wall
//! time without spinning). Beside two busy loops: 0.1–0.4.
//!
//! Where the process's cgroup has a CPU quota ([`quota`]: a container's
//! CPU limit), the machine's idle CPUs are not the process's to take: over
//! the window the quota must also have left a whole CPU unused by the
//! cgroup apart from this process's spinning. A spinning thread takes at
//! most one CPU, so a spin then never pushes the cgroup past its quota
//! (where the kernel would stop every process of it until the next period).
//! That also keeps a quota under two CPUs from spinning: a lone compile
//! itself uses more than the rest.
//!
//! Elsewhere (macOS, the BSDs, Windows) nothing is read and the answer is
//! always yes: the spin's own pacing ([`super::Pacing`]) is the only guard.

#[cfg(target_os = "linux")]
mod quota;

#[cfg(target_os = "linux")]
pub(crate) use linux::{cpu_to_spare, cpus, quota_cpus};

#[cfg(not(target_os = "linux"))]
pub(crate) fn cpu_to_spare(_spun: std::time::Duration) -> bool {
    true
}

/// How many CPUs the process may run on (where a quota is the gate's to
/// judge, not counting it).
#[cfg(not(target_os = "linux"))]
pub(crate) fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU quota the gate last saw, in CPUs (none elsewhere than Linux).
#[cfg(not(target_os = "linux"))]
pub(crate) fn quota_cpus() -> Option<f64> {
    None
}

/// How old a verdict may be before the CPU times are read again.
pub const WINDOW: std::time::Duration = std::time::Duration::from_millis(100);

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{BufRead, BufReader};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use super::quota::{Quota, Reading};
    use super::WINDOW;

    /// The CPU times at one moment.
    #[derive(Clone, Copy, Debug)]
    struct Sample {
        at: Instant,
        /// Idle and I/O-wait time of every CPU, in clock ticks.
        idle_ticks: u64,
        /// This process's CPU time spent spinning.
        spun: Duration,
        /// The cgroup's CPU quota and use, where one applies.
        quota: Option<Reading>,
    }

    struct Gate {
        last: Option<Sample>,
        verdict: bool,
    }

    static GATE: Mutex<Gate> = Mutex::new(Gate {
        last: None,
        verdict: true,
    });

    /// Whether a spin may take a CPU now (see the module docs). The first
    /// call, and any where the times cannot be read, say yes, unless a quota
    /// applies.
    pub(crate) fn cpu_to_spare(spun: Duration) -> bool {
        // Only a lone caller asks; should two ever ask at once, the second
        // does not spin.
        let Ok(mut gate) = GATE.try_lock() else {
            return false;
        };
        let now = Instant::now();
        if gate.last.is_some_and(|last| now - last.at < WINDOW) {
            return gate.verdict;
        }
        let Some(sample) = sample(now, spun) else {
            gate.last = None;
            gate.verdict = true;
            return true;
        };
        gate.verdict = match gate.last {
            Some(last) => {
                spare(&last, &sample, crate::sys::clock_ticks_per_second())
                    && quota_spare(&last, &sample)
            }
            // The first window: the machine is taken to have a CPU to spare,
            // a quota not until a window under it was seen.
            None => sample.quota.is_none(),
        };
        gate.last = Some(sample);
        gate.verdict
    }

    /// The CPU that must have been free (idle, or this process spinning)
    /// over a window, in CPUs (see the module docs).
    const FREE: f64 = 0.75;

    /// Whether, between `from` and `to`, [`FREE`] of a CPU was free.
    fn spare(from: &Sample, to: &Sample, ticks_per_second: u64) -> bool {
        let wall = (to.at - from.at).as_secs_f64();
        if wall <= 0.0 {
            return true;
        }
        let idle = to.idle_ticks.saturating_sub(from.idle_ticks) as f64 / ticks_per_second as f64;
        let spun = to.spun.saturating_sub(from.spun).as_secs_f64();
        (idle + spun) / wall >= FREE
    }

    /// The CPU of the quota that must have been free (unused by the cgroup,
    /// or this process spinning) over a window, in CPUs: a spinning thread's
    /// whole CPU.
    const QUOTA_FREE: f64 = 1.0;

    /// Whether, between `from` and `to`, the quota (if one applies) left
    /// [`QUOTA_FREE`] unused. A quota that just appeared says no until a
    /// window has been seen under it.
    fn quota_spare(from: &Sample, to: &Sample) -> bool {
        let Some(now) = to.quota else {
            return true;
        };
        let Some(before) = from.quota else {
            return false;
        };
        let wall = (to.at - from.at).as_secs_f64();
        if wall <= 0.0 {
            return true;
        }
        let used = now.used.saturating_sub(before.used).as_secs_f64();
        let spun = to.spun.saturating_sub(from.spun).as_secs_f64();
        now.cpus - (used - spun).max(0.0) / wall >= QUOTA_FREE
    }

    /// The quota last read, in thousandths of a CPU (0: none).
    static QUOTA_MILLICPUS: AtomicU64 = AtomicU64::new(0);

    /// The CPU quota the gate last saw, in CPUs.
    pub(crate) fn quota_cpus() -> Option<f64> {
        match QUOTA_MILLICPUS.load(Ordering::Relaxed) {
            0 => None,
            millicpus => Some(millicpus as f64 / 1000.0),
        }
    }

    /// How many CPUs the process may run on: its affinity mask's, not
    /// counting a quota (the standard library's count does), which the gate
    /// judges by what the cgroup uses.
    pub(crate) fn cpus() -> usize {
        crate::sys::affinity_cpus()
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn sample(at: Instant, spun: Duration) -> Option<Sample> {
        static QUOTA: OnceLock<Option<Quota>> = OnceLock::new();
        let idle_ticks = read_stat(BufReader::new(std::fs::File::open("/proc/stat").ok()?))?;
        let quota = QUOTA
            .get_or_init(Quota::find)
            .as_ref()
            .and_then(Quota::read);
        QUOTA_MILLICPUS.store(
            quota.map_or(0, |quota| (quota.cpus * 1000.0).round().max(1.0) as u64),
            Ordering::Relaxed,
        );
        Some(Sample {
            at,
            idle_ticks,
            spun,
            quota,
        })
    }

    /// From /proc/stat's first line: the idle and I/O-wait ticks of all
    /// CPUs (the long lines after it are not read).
    fn read_stat(stat: impl BufRead) -> Option<u64> {
        let total = stat.lines().next()?.ok()?;
        let mut fields = total.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        let times: Vec<u64> = fields
            .take(5)
            .map(|field| field.parse().ok())
            .collect::<Option<_>>()?;
        Some(times.get(3)? + times.get(4).copied().unwrap_or(0))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        const STAT: &str = "cpu  4705 356 584 3699176 23 0 12 0 0 0\n\
                            cpu0 1393 280 283 1849000 12 0 6 0 0 0\n\
                            cpu1 3312 76 301 1850176 11 0 6 0 0 0\n\
                            intr 123 4 5 6\nctxt 1990473\n";

        #[test]
        fn reads_the_idle_ticks() {
            assert_eq!(read_stat(STAT.as_bytes()), Some(3_699_176 + 23));
            assert_eq!(read_stat("intr 1 2\n".as_bytes()), None);
            assert!(
                read_stat(BufReader::new(std::fs::File::open("/proc/stat").unwrap())).is_some()
            );
        }

        fn sample(at: Instant, idle_ticks: u64, spun_ms: u64) -> Sample {
            Sample {
                at,
                idle_ticks,
                spun: Duration::from_millis(spun_ms),
                quota: None,
            }
        }

        fn quota(at: Instant, spun_ms: u64, cpus: f64, used_ms: u64) -> Sample {
            Sample {
                quota: Some(Reading {
                    cpus,
                    used: Duration::from_millis(used_ms),
                }),
                ..sample(at, 0, spun_ms)
            }
        }

        #[test]
        fn under_a_quota_a_whole_cpu_of_it_must_be_left_apart_from_spinning() {
            let start = Instant::now();
            let later = start + Duration::from_millis(100);
            // 100 ms under a quota of 2 CPUs. A lone compile: 65 ms used by
            // the cgroup, or 145 ms of which 80 spun.
            assert!(quota_spare(
                &quota(start, 0, 2.0, 0),
                &quota(later, 0, 2.0, 65)
            ));
            assert!(quota_spare(
                &quota(start, 0, 2.0, 0),
                &quota(later, 80, 2.0, 145)
            ));
            // Two processes compiling in the container: 130 ms used, 40 of
            // them this one's spinning; or with a busy loop beside it.
            assert!(!quota_spare(
                &quota(start, 0, 2.0, 0),
                &quota(later, 40, 2.0, 200)
            ));
            assert!(!quota_spare(
                &quota(start, 0, 2.0, 0),
                &quota(later, 0, 2.0, 165)
            ));
            // 1.5 CPUs: a lone compile leaves less than a CPU.
            assert!(!quota_spare(
                &quota(start, 0, 1.5, 0),
                &quota(later, 0, 1.5, 65)
            ));
            // No quota; one that just appeared.
            assert!(quota_spare(&sample(start, 0, 0), &sample(later, 0, 0)));
            assert!(!quota_spare(
                &sample(start, 0, 0),
                &quota(later, 0, 2.0, 10)
            ));
        }

        #[test]
        fn a_cpu_is_to_spare_while_three_quarters_of_one_was_idle_or_spun() {
            let start = Instant::now();
            let later = start + Duration::from_millis(100);
            // 100 ms, 100 ticks a second. A lone compile spinning: 3 ticks
            // idle and 90 ms spun, a CPU free; not spinning: 9 ticks idle.
            assert!(spare(&sample(start, 0, 0), &sample(later, 3, 90), 100));
            assert!(spare(&sample(start, 0, 0), &sample(later, 9, 0), 100));
            // Two processes compiling: 2 ticks idle and 50 ms spun.
            assert!(!spare(&sample(start, 0, 0), &sample(later, 2, 50), 100));
            // Busy loops on every CPU: nothing idle, 10 ms spun.
            assert!(!spare(&sample(start, 0, 0), &sample(later, 0, 10), 100));
            // Another compiling process: 2 ticks idle, 20 ms spun.
            assert!(!spare(&sample(start, 0, 0), &sample(later, 2, 20), 100));
        }

        #[test]
        fn the_verdict_is_kept_for_a_window() {
            // The first call says yes; calls within a window give the same.
            let first = cpu_to_spare(Duration::ZERO);
            assert_eq!(cpu_to_spare(Duration::ZERO), first);
        }
    }
}
