//! The compiler's process on Windows (see [`super`]): no console window, a
//! process group of its own (a console's Ctrl-C reaches the Ruby program,
//! not the compiler), in a job that Windows kills with the host's process
//! ([`crate::sys::die_with_host`]); blocking pipes, used by threads (the
//! reader thread, the outbox's writer, the stderr reader below); ends
//! described by exit code, an exception code (`0xC0000005`, ...) standing
//! for Unix's signal.

use std::fs::File;
use std::io::{self, Read};
use std::os::windows::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use super::StderrTail;
use crate::executor::{Executor, Signal};

/// `CREATE_NO_WINDOW`: a console program started from a GUI gets no window.
const CREATE_NO_WINDOW: u32 = 0x0800_0000;
/// `CREATE_NEW_PROCESS_GROUP`: Ctrl-C in the host's console is not sent to it.
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;

/// Before the spawn: no window, a process group of its own.
pub(super) fn configure(command: &mut Command) {
    command.creation_flags(CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP);
}

/// After the spawn: the child joins the job that dies with the host.
pub(super) fn prepare(child: &Child, _stdin: &Input, _outputs: [&File; 2]) -> io::Result<()> {
    crate::sys::die_with_host(child)
}

/// The compiler's stdin as the host holds it: the pipe's write end, and a
/// copy of its read end, because only a read end can say how many bytes
/// wait unread ([`crate::sys::pipe_unread`]). The copy also keeps the pipe
/// whole after the compiler dies, so what it never read is still there to
/// count (the outbox drops it when it closes the input).
#[derive(Debug)]
pub struct Input {
    /// Where packets are written.
    pub pipe: File,
    /// The read end, never read: asked how much is unread.
    pub unread: File,
}

/// The child's stdin: a pipe made here (the spawn gives the child an
/// inheritable copy of the read end), and the host's [`Input`].
pub(super) fn stdin() -> io::Result<(Stdio, Option<Input>)> {
    let (read, write) = crate::sys::input_pipe()?;
    let unread = read.try_clone()?;
    Ok((
        Stdio::from(read),
        Some(Input {
            pipe: write,
            unread,
        }),
    ))
}

/// The host's end of the compiler's stdin, after the spawn.
pub(super) fn input(made: Option<Input>, _child: Option<ChildStdin>) -> Input {
    made.expect("the input pipe is made before the spawn")
}

/// One of the child's pipes as a file.
pub(super) fn file(pipe: impl Into<std::os::windows::io::OwnedHandle>) -> File {
    File::from(pipe.into())
}

/// Whether a process's ending tells a kill from outside: not here, where
/// `TerminateProcess` leaves whatever exit code its caller chose (Ruby's
/// `Process.kill(:KILL)` 0, `taskkill /F` and Task Manager 1).
pub const ENDING_SHOWS_A_KILL: bool = false;

/// Whether the process died of an exception (an NTSTATUS error code as its
/// exit code: an access violation, a stack overflow), Windows's nearest to
/// a signal.
pub(super) fn by_signal(status: ExitStatus) -> bool {
    status.code().is_some_and(is_exception)
}

fn is_exception(code: i32) -> bool {
    (code as u32) >= 0xC000_0000
}

/// Describes how a process ended, for error messages: "exited with status
/// 1", "crashed with exception 0xC0000005 (access violation)". A compiler
/// the host killed (`TerminateProcess`) exits with status 1.
pub fn describe_exit(status: ExitStatus) -> String {
    match status.code() {
        Some(code) if is_exception(code) => {
            let code = code as u32;
            match exception_name(code) {
                Some(name) => format!("crashed with exception {code:#010X} ({name})"),
                None => format!("crashed with exception {code:#010X}"),
            }
        }
        Some(code) => format!("exited with status {code}"),
        None => format!("ended ({status})"),
    }
}

/// The names of the exceptions a compiler is likely to die of.
fn exception_name(code: u32) -> Option<&'static str> {
    Some(match code {
        0xC000_0005 => "access violation",
        0xC000_001D => "illegal instruction",
        0xC000_0094 => "integer division by zero",
        0xC000_00FD => "stack overflow",
        0xC000_0409 => "stack buffer overrun",
        0xC000_013A => "Ctrl-C",
        _ => return None,
    })
}

/// Reads `stderr` until it closes, keeping its tail in `tail`: on a thread
/// of its own with blocking reads (no pipe can be waited on here), which
/// wakes this task when it is done.
pub async fn capture_stderr(
    _executor: &dyn Executor,
    mut stderr: File,
    tail: &Arc<Mutex<StderrTail>>,
) -> io::Result<()> {
    let done = Arc::new(Signal::default());
    let (tail, finished) = (tail.clone(), done.clone());
    let reader = std::thread::Builder::new()
        .name("sass-stderr".into())
        .spawn(move || {
            let mut buf = vec![0u8; 8192];
            let read = loop {
                match stderr.read(&mut buf) {
                    Ok(0) => break Ok(()),
                    Ok(n) => super::lock(&tail).push(&buf[..n]),
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    // A broken pipe is how Windows says the writer is gone.
                    Err(error) if error.kind() == io::ErrorKind::BrokenPipe => break Ok(()),
                    Err(error) => break Err(error),
                }
            };
            finished.notify();
            read
        })?;
    done.wait().await;
    reader
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the stderr reader panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::process::ExitStatusExt;

    #[test]
    fn describes_exits_and_exceptions() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1)),
            "exited with status 1"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(0xC000_0005)),
            "crashed with exception 0xC0000005 (access violation)"
        );
        assert!(by_signal(ExitStatus::from_raw(0xC000_00FD)));
        assert!(!by_signal(ExitStatus::from_raw(1)));
    }
}
