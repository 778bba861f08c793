//! The Unix system calls (see [`super`]).

use super::Interest;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::time::Duration;

/// Turns a `-1` return into the current `errno` as an error.
fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// A new non-blocking, close-on-exec eventfd with a counter of 0.
#[cfg(target_os = "linux")]
#[cfg_attr(
    any(feature = "portable-wait", feature = "reader-wait"),
    allow(dead_code)
)]
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd takes no pointers; on success it returns a new
    // descriptor that nothing else owns, so `OwnedFd` may take it.
    unsafe {
        let fd = check(libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// A new close-on-exec epoll instance.
#[cfg(target_os = "linux")]
#[cfg_attr(
    any(feature = "portable-wait", feature = "reader-wait"),
    allow(dead_code)
)]
pub fn epoll() -> io::Result<OwnedFd> {
    // SAFETY: epoll_create1 takes no pointers; on success it returns a new
    // descriptor that nothing else owns, so `OwnedFd` may take it.
    unsafe {
        let fd = check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Adds `fd` to the epoll instance `epoll`, level-triggered, for
/// readability: `epoll` is then readable while `fd` is.
#[cfg(target_os = "linux")]
#[cfg_attr(
    any(feature = "portable-wait", feature = "reader-wait"),
    allow(dead_code)
)]
pub fn epoll_add(epoll: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd.as_raw_fd() as u64,
    };
    // SAFETY: both descriptors are kept open by their borrows; `event` is a
    // valid epoll_event that the call only reads.
    unsafe {
        check(libc::epoll_ctl(
            epoll.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            fd.as_raw_fd(),
            &mut event,
        ))?;
    }
    Ok(())
}

/// How many bytes written into the pipe `fd` (either end) are still
/// unread (Linux's `FIONREAD` counts them from either end).
#[cfg(target_os = "linux")]
pub fn pipe_unread(pipe: &std::fs::File) -> io::Result<usize> {
    let fd = pipe.as_fd();
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD on a descriptor the borrow keeps open writes one int
    // through the pointer, which points to `unread`.
    unsafe {
        check(libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut unread))?;
    }
    Ok(unread.max(0) as usize)
}

/// Elsewhere `FIONREAD` on a pipe's write end counts nothing: unknown.
#[cfg(not(target_os = "linux"))]
pub fn pipe_unread(_pipe: &std::fs::File) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

/// A new pipe, both ends non-blocking and close-on-exec: (read end, write
/// end). (The portable mechanism's bells; the epoll one's tests.)
#[cfg_attr(
    all(target_os = "linux", not(feature = "portable-wait"), not(test)),
    allow(dead_code)
)]
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    #[cfg(target_os = "linux")]
    // SAFETY: `fds` is a valid array of two ints for the call to fill; on
    // success both are new descriptors that nothing else owns.
    let (read, write) = unsafe {
        check(libc::pipe2(
            fds.as_mut_ptr(),
            libc::O_CLOEXEC | libc::O_NONBLOCK,
        ))?;
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    #[cfg(not(target_os = "linux"))]
    // SAFETY: as above. (Without pipe2, a fork in another thread between
    // pipe and fcntl may leak the descriptors into that child until it
    // execs; the host's own children are spawned with them closed.)
    let (read, write) = unsafe {
        check(libc::pipe(fds.as_mut_ptr()))?;
        let pair = (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]));
        for fd in [&pair.0, &pair.1] {
            set_cloexec(fd.as_fd())?;
            set_nonblocking(fd.as_fd())?;
        }
        pair
    };
    Ok((read, write))
}

#[cfg(not(target_os = "linux"))]
fn set_cloexec(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the borrow keeps open, with integer
    // arguments only.
    unsafe {
        let flags = check(libc::fcntl(fd.as_raw_fd(), libc::F_GETFD))?;
        check(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFD,
            flags | libc::FD_CLOEXEC,
        ))?;
    }
    Ok(())
}

/// Sets `O_NONBLOCK` on the open file description of `fd`. For a pipe this
/// affects only this process's end.
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the borrow keeps open, with integer
    // arguments only.
    unsafe {
        let flags = check(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        check(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFL,
            flags | libc::O_NONBLOCK,
        ))?;
    }
    Ok(())
}

/// Clears `O_NONBLOCK` on the open file description of `fd` (the reader
/// thread's end of the compiler's stdout, see [`crate::wait`]).
#[cfg_attr(not(feature = "reader-wait"), allow(dead_code))]
pub fn set_blocking(file: &std::fs::File) -> io::Result<()> {
    let fd = file.as_fd();
    // SAFETY: fcntl on a descriptor the borrow keeps open, with integer
    // arguments only.
    unsafe {
        let flags = check(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        check(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFL,
            flags & !libc::O_NONBLOCK,
        ))?;
    }
    Ok(())
}

/// How many forks separate this process from the one that first asked (a
/// `pthread_atfork` handler counts them in each child).
static FORK_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn count_fork_in_child() {
    FORK_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// A number that changes in a forked child (and its children), so that
/// state made before a fork is recognised as the parent's without calling
/// `getpid` on every use. Comparisons are meaningful along one line of
/// forks: what was made where the generation was `n` belongs to this
/// process only while the generation is still `n`.
pub fn fork_generation() -> u64 {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: registers a child handler that only increments an atomic
        // (async-signal-safe, as code after fork must be); no pointers are
        // passed. A failure (ENOMEM) leaves the count at 0: forks are then
        // not noticed, as before this existed.
        unsafe {
            libc::pthread_atfork(None, None, Some(count_fork_in_child));
        }
    });
    FORK_GENERATION.load(std::sync::atomic::Ordering::Relaxed)
}

/// What a waiting caller or the built-in executor waits on: a descriptor.
pub type Waitable = std::os::fd::RawFd;

/// No descriptor: what `poll` skips.
pub const NO_WAITABLE: Waitable = -1;

/// `file` as the executor watches it.
pub fn waitable(file: &std::fs::File) -> io::Result<BorrowedWaitable<'_>> {
    Ok(file.as_fd())
}

/// A borrowed [`Waitable`], for the executor's watches.
pub type BorrowedWaitable<'a> = BorrowedFd<'a>;

/// An owned [`Waitable`].
pub type OwnedWaitable = OwnedFd;

/// One entry of a [`poll`]: a descriptor and the readiness asked for.
pub type PollFd = libc::pollfd;

/// The [`poll`] entry for `fd` and `interest`.
pub fn poll_fd(fd: Waitable, interest: Interest) -> PollFd {
    libc::pollfd {
        fd,
        events: match interest {
            Interest::Read => libc::POLLIN,
            Interest::Write => libc::POLLOUT,
        },
        revents: 0,
    }
}

/// Whether [`poll`] found `entry` ready (or in error).
pub fn is_ready(entry: &PollFd) -> bool {
    entry.revents != 0
}

/// The descriptor of an owned [`Waitable`].
pub fn raw(waitable: &OwnedWaitable) -> Waitable {
    waitable.as_raw_fd()
}

/// The errors that say the process ran out of descriptors.
pub const TOO_MANY_FILES: [i32; 2] = [libc::EMFILE, libc::ENFILE];

/// Waits until one of `fds` is ready (its `revents` are filled in), or
/// `timeout` passes (`None`: no limit). Returns how many are ready; an
/// interrupted wait (`EINTR`) returns 0.
pub fn poll(fds: &mut [PollFd], timeout: Option<Duration>) -> io::Result<usize> {
    let timeout = timeout.map_or(-1, |timeout| {
        // Round up, so a short positive timeout does not become a busy loop.
        let millis = timeout.as_nanos().div_ceil(1_000_000);
        libc::c_int::try_from(millis).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: `fds` is a valid, exclusively borrowed slice of pollfd structs
    // whose length is passed along with it.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
    match check(ready) {
        Ok(ready) => Ok(ready as usize),
        Err(error) if error.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(error) => Err(error),
    }
}

/// The calling thread's CPU time so far (zero where the clock is missing).
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, exclusively borrowed timespec for the call
    // to fill in; the clock id is a constant every supported Unix defines.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// The kernel's clock ticks a second, the unit of /proc/stat's times
/// (`USER_HZ`; 100 where it cannot say). Only Linux reads /proc/stat
/// (`wait::spin::gate`).
#[cfg(target_os = "linux")]
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks)
        .ok()
        .filter(|&ticks| ticks > 0)
        .unwrap_or(100)
}

/// How many CPUs this process's affinity mask allows (Linux
/// `sched_getaffinity`), or `None` if it cannot be read. Unlike the
/// standard library's `available_parallelism`, it does not count a cgroup's
/// CPU quota.
#[cfg(target_os = "linux")]
pub fn affinity_cpus() -> Option<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid, empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, exclusively borrowed cpu_set_t of the size
    // passed, for the kernel to fill in for this process (pid 0).
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return None;
    }
    // SAFETY: `set` was filled in by the kernel; CPU_COUNT only reads it.
    let count = unsafe { libc::CPU_COUNT(&set) };
    usize::try_from(count).ok().filter(|&count| count > 0)
}

/// Makes the kernel kill the child `command` starts when the thread that
/// starts it ends (Linux `PR_SET_PDEATHSIG`). The host starts compilers from
/// its executor's thread, which lives as long as the host, and which ends
/// with the process however the process ends (exit, `exit!`, a signal,
/// SIGKILL). Elsewhere this does nothing: compilers there end with their
/// input, or when the host closes them at exit.
#[cfg(target_os = "linux")]
pub fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;

    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: prctl, getppid and kill are. It
    // allocates nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the signal was armed.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// See the Linux version: elsewhere there is no such signal.
#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_command: &mut Command) {}

/// Registers `fd` with the current tokio runtime's reactor. Tokio asks its
/// caller to promise the descriptor stays open while registered; owning it
/// keeps that promise.
#[cfg(feature = "tokio")]
pub fn tokio_async_fd(
    fd: OwnedFd,
    interest: tokio::io::Interest,
) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: the `AsyncFd` owns `fd`, so the descriptor stays open and
    // refers to the same file description for as long as it is registered.
    unsafe {
        Ok(tokio::io::unix::AsyncFd::register_with_interest(
            fd, interest,
        )?)
    }
}
