//! Whether the machine has a CPU to spare for a spin: the scheduler's view,
//! from the CPU time the kernel counts as idle (Linux's /proc/stat), taken
//! between compiles at most every [`WINDOW`].
//!
//! A spin pays only while the compiler it waits for runs on another CPU
//! that nobody else wants: then the caller's CPU stays busy, the compiler's
//! threads stay on theirs, and nobody is woken across CPUs. Where every CPU
//! is taken (by other processes compiling, by busy loops, by a build), the
//! spin takes the CPU the compiler or someone else needed and burns its
//! budget. So over the last window at least half a CPU must have been free:
//! idle, or spent by this process spinning (which it would give up). A lone
//! compile on an idle machine passes (about one CPU free, spinning or not:
//! measured), one beside two busy loops or another compiling process does
//! not (0.1–0.4).
//!
//! Elsewhere (macOS, the BSDs, Windows) nothing is read and the answer is
//! always yes: the spin's own pacing ([`super::spin`]) is the only guard.

#[cfg(target_os = "linux")]
pub(crate) use linux::cpu_to_spare;

#[cfg(not(target_os = "linux"))]
pub(crate) fn cpu_to_spare() -> bool {
    true
}

/// How old a verdict may be before the CPU times are read again.
pub const WINDOW: std::time::Duration = std::time::Duration::from_millis(100);

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{BufRead, BufReader};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use super::WINDOW;

    /// The CPU times at one moment.
    #[derive(Clone, Copy, Debug)]
    struct Sample {
        at: Instant,
        /// Idle and I/O-wait time of every CPU, in clock ticks.
        idle_ticks: u64,
        /// This process's CPU time spent spinning.
        spun: Duration,
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
    /// call, and any where the times cannot be read, say yes.
    pub(crate) fn cpu_to_spare() -> bool {
        // Only a lone caller asks; should two ever ask at once, the second
        // does not spin.
        let Ok(mut gate) = GATE.try_lock() else {
            return false;
        };
        let now = Instant::now();
        if gate.last.is_some_and(|last| now - last.at < WINDOW) {
            return gate.verdict;
        }
        let Some(sample) = sample(now) else {
            gate.last = None;
            gate.verdict = true;
            return true;
        };
        if let Some(last) = gate.last {
            gate.verdict = spare(&last, &sample, crate::sys::clock_ticks_per_second());
        }
        gate.last = Some(sample);
        gate.verdict
    }

    /// The CPU that must have been free (idle, or this process spinning)
    /// over a window, in CPUs.
    const FREE: f64 = 0.5;

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

    fn sample(at: Instant) -> Option<Sample> {
        let spun = crate::wait::spin::stats().spun;
        let idle_ticks = read_stat(BufReader::new(std::fs::File::open("/proc/stat").ok()?))?;
        Some(Sample {
            at,
            idle_ticks,
            spun,
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
            }
        }

        #[test]
        fn a_cpu_is_to_spare_while_half_of_one_was_idle_or_spun() {
            let start = Instant::now();
            let later = start + Duration::from_millis(100);
            // 100 ms, 100 ticks a second. A lone compile spinning: 3 ticks
            // idle and 70 ms spun, a CPU free; not spinning: 8 ticks idle.
            assert!(spare(&sample(start, 0, 0), &sample(later, 3, 70), 100));
            assert!(spare(&sample(start, 0, 0), &sample(later, 8, 0), 100));
            // Busy loops on every CPU: nothing idle, 10 ms spun.
            assert!(!spare(&sample(start, 0, 0), &sample(later, 0, 10), 100));
            // Another compiling process: 2 ticks idle, 20 ms spun.
            assert!(!spare(&sample(start, 0, 0), &sample(later, 2, 20), 100));
        }

        #[test]
        fn the_verdict_is_kept_for_a_window() {
            // The first call says yes; calls within a window give the same.
            let first = cpu_to_spare();
            assert_eq!(cpu_to_spare(), first);
        }
    }
}
