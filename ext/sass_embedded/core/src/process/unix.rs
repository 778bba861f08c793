//! The compiler's process on Unix (see [`super`]): a process group of its
//! own, killed by the kernel with the host on Linux, non-blocking pipes, and
//! ends described by exit status or signal.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use super::StderrTail;
use crate::executor::{Executor, Interest};
use crate::fork::ForkLocal;

/// Before the spawn: a process group of its own (Ctrl-C in a terminal
/// reaches the Ruby program, not the compiler), and on Linux death with the
/// host ([`crate::sys::die_with_parent`]).
pub(super) fn configure(command: &mut Command) {
    command.process_group(0);
    crate::sys::die_with_parent(command);
}

/// After the spawn: the host's ends of the pipes never block a caller.
pub(super) fn prepare(_child: &Child, stdin: &Input, outputs: [&File; 2]) -> io::Result<()> {
    for pipe in [stdin, outputs[0], outputs[1]] {
        crate::sys::set_nonblocking(pipe.as_fd())?;
    }
    Ok(())
}

/// The compiler's stdin as the host holds it: the pipe's write end (how much
/// of it is unread, the write end itself tells).
pub type Input = File;

/// The child's stdin: a pipe the spawn makes ([`input`] takes the host's end).
pub(super) fn stdin() -> io::Result<(Stdio, Option<Input>)> {
    Ok((Stdio::piped(), None))
}

/// The host's end of the compiler's stdin, after the spawn.
pub(super) fn input(_made: Option<Input>, child: Option<ChildStdin>) -> Input {
    file(child.expect("stdin is piped"))
}

/// One of the child's pipes as a file.
pub(super) fn file(pipe: impl Into<std::os::fd::OwnedFd>) -> File {
    File::from(pipe.into())
}

/// Whether a process's ending tells a kill from outside: a signal says so.
pub const ENDING_SHOWS_A_KILL: bool = true;

/// Whether a signal ended the process.
pub(super) fn by_signal(status: ExitStatus) -> bool {
    status.signal().is_some()
}

/// Describes how a process ended, for error messages: "exited with status 1",
/// "was killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(signal) = status.signal() {
        match signal_name(signal) {
            Some(name) => format!("was killed by signal {signal} ({name})"),
            None => format!("was killed by signal {signal}"),
        }
    } else {
        format!("ended ({status})")
    }
}

/// The name of the signals a compiler is likely to die of.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// Reads `stderr` (non-blocking) until it closes, keeping its tail in
/// `tail`.
pub async fn capture_stderr(
    executor: &dyn Executor,
    stderr: File,
    tail: &Arc<Mutex<StderrTail>>,
) -> io::Result<()> {
    let pipe = ForkLocal::new(stderr);
    let watch = executor.watch(pipe.as_fd(), Interest::Read)?;
    let mut buf = vec![0u8; 8192];
    loop {
        match (&*pipe).read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => super::lock(tail).push(&buf[..n]),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                crate::executor::ready(&*watch).await?;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_exits_and_signals() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1 << 8)),
            "exited with status 1"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(libc::SIGKILL)),
            format!("was killed by signal {} (SIGKILL)", libc::SIGKILL)
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(libc::SIGSEGV)),
            format!("was killed by signal {} (SIGSEGV)", libc::SIGSEGV)
        );
    }
}
