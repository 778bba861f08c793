//! The compiler child process: how it is started, how its stderr is kept, and
//! how its end is described.
//!
//! The compiler runs in the directory its command names (the Ruby layer
//! gives a directory of the gem's own, as the established gem does: Dart
//! Sass prints a file relative to its working directory when that is
//! shorter, so in a directory no user file lives under, every path it prints
//! stays absolute), or in `/` if that directory is gone; never in the
//! caller's, which may vanish under it. It runs in a process group of its own
//! (so Ctrl-C in a terminal interrupts the Ruby program, which then decides,
//! instead of killing the compiler under compilations that are still
//! running), with all three standard streams piped. Its stdin and stdout carry
//! the protocol; its stderr is kept as a bounded tail for error messages. On
//! Linux the kernel kills it when the host's process ends, however that ends
//! (see [`crate::sys::die_with_parent`]); the host must start it from a
//! thread that lives as long as the host.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::HostError;
use crate::executor::Executor;

// What differs by OS: how the child is started and its pipes prepared, how
// its end is described, how its stderr is read. Chosen here and nowhere else.
#[cfg(unix)]
#[path = "unix.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

pub use os::{capture_stderr, describe_exit, Input, ENDING_SHOWS_A_KILL};

/// The command that starts a compiler: the program and the arguments before
/// `--embedded`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Arguments given before `--embedded` (for example a Dart snapshot).
    pub args: Vec<OsString>,
    /// The compiler's working directory (`/` when it does not exist).
    pub directory: PathBuf,
}

impl CompilerCommand {
    /// A command that runs `program` with no extra arguments, in `/`.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            directory: PathBuf::from("/"),
        }
    }

    /// Where the compiler is started: its directory if that is one, else `/`.
    fn working_directory(&self) -> &Path {
        if self.directory.is_dir() {
            &self.directory
        } else {
            Path::new("/")
        }
    }
}

impl fmt::Display for CompilerCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            write!(f, " {}", arg.to_string_lossy())?;
        }
        f.write_str(" --embedded")
    }
}

/// A started compiler: the child (for waiting and killing) and its pipes.
#[derive(Debug)]
pub struct SpawnedCompiler {
    /// The child process.
    pub child: Child,
    /// The compiler's stdin: where packets are written.
    pub stdin: Input,
    /// The compiler's stdout: where packets are read.
    pub stdout: File,
    /// The compiler's stderr.
    pub stderr: File,
}

/// Starts the compiler in embedded mode.
pub fn spawn(command: &CompilerCommand) -> Result<SpawnedCompiler, HostError> {
    // The compiler runs elsewhere, so a relative path is made absolute
    // against this process's working directory first (bare names are looked
    // up in PATH as usual).
    let program = if command.program.is_relative() && command.program.components().count() > 1 {
        std::env::current_dir()
            .map(|dir| dir.join(&command.program))
            .unwrap_or_else(|_| command.program.clone())
    } else {
        command.program.clone()
    };
    let failed = |error: std::io::Error| HostError::Spawn {
        command: command.to_string(),
        errno: error.raw_os_error(),
        message: error.to_string(),
    };
    let (child_stdin, made) = os::stdin().map_err(failed)?;
    let mut builder = Command::new(program);
    builder
        .args(&command.args)
        .arg("--embedded")
        .current_dir(command.working_directory())
        .stdin(child_stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    os::configure(&mut builder);
    let mut child = builder.spawn().map_err(failed)?;
    // The three pipes were requested above, so they are present.
    let stdin = os::input(made, child.stdin.take());
    let stdout = os::file(child.stdout.take().expect("stdout is piped"));
    let stderr = os::file(child.stderr.take().expect("stderr is piped"));
    if let Err(error) = os::prepare(&child, &stdin, [&stdout, &stderr]) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(failed(error));
    }
    Ok(SpawnedCompiler {
        child,
        stdin,
        stdout,
        stderr,
    })
}

/// The last lines a compiler wrote to stderr, bounded in lines and bytes so a
/// compiler that floods stderr costs constant memory.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
    bytes: usize,
    partial: Vec<u8>,
}

impl StderrTail {
    /// How many lines are kept.
    pub const MAX_LINES: usize = 20;
    /// How many bytes of complete lines are kept at most.
    pub const MAX_BYTES: usize = 4096;
    /// Longer lines are cut to this many bytes.
    pub const MAX_LINE: usize = 512;

    /// A shared, empty tail.
    pub fn shared() -> Arc<Mutex<Self>> {
        Arc::default()
    }

    /// Adds bytes as they were read from the pipe.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.extend_partial(&bytes[..end]);
            let line = std::mem::take(&mut self.partial);
            self.push_line(line);
            bytes = &bytes[end + 1..];
        }
        self.extend_partial(bytes);
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = Self::MAX_LINE.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn push_line(&mut self, line: Vec<u8>) {
        let line = String::from_utf8_lossy(&line)
            .trim_end_matches('\r')
            .to_owned();
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > Self::MAX_LINES || self.bytes > Self::MAX_BYTES {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    /// The kept lines, including an unfinished last line.
    pub fn snapshot(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        if !self.partial.is_empty() {
            text.push_str(&String::from_utf8_lossy(&self.partial));
            text.push('\n');
        }
        text
    }
}

/// A running compiler: the child, its command line and the tail of its
/// stderr. Knows how to wait for its end, asynchronously (on the executor)
/// or blocking (on a caller's thread), and how to describe it.
#[derive(Debug)]
pub struct CompilerProcess {
    child: Mutex<Child>,
    pid: u32,
    stderr: Arc<Mutex<StderrTail>>,
    /// Set once all of stderr was read.
    stderr_done: AtomicBool,
    command: String,
}

/// How a compiler ended: the description, and whether a signal ended it.
pub type Ending = (String, bool);

/// How often an exit is checked for while waiting for one.
const EXIT_POLL: Duration = Duration::from_millis(5);

impl CompilerProcess {
    /// Wraps a started child whose stderr is read into `stderr`.
    pub fn new(child: Child, command: String, stderr: Arc<Mutex<StderrTail>>) -> Self {
        Self {
            pid: child.id(),
            child: Mutex::new(child),
            stderr,
            stderr_done: AtomicBool::new(false),
            command,
        }
    }

    /// The compiler's command line, for messages.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The compiler's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The last lines the compiler wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        lock(&self.stderr).snapshot()
    }

    /// Records that stderr was read to its end.
    pub fn mark_stderr_done(&self) {
        self.stderr_done.store(true, Ordering::Release);
    }

    /// How the compiler ended, if it has.
    pub fn try_ending(&self) -> Option<Ending> {
        match lock(&self.child).try_wait() {
            Ok(Some(status)) => Some((describe_exit(status), os::by_signal(status))),
            Ok(None) => None,
            Err(error) => Some((format!("could not be waited for ({error})"), false)),
        }
    }

    /// Sends SIGKILL (does nothing if the compiler was already reaped).
    pub fn kill(&self) {
        let _ = lock(&self.child).kill();
    }

    /// Kills the compiler and reaps it; how it ended.
    fn kill_and_reap(&self) -> Ending {
        self.kill();
        // SIGKILL ends a process promptly; reaping it leaves no zombie.
        let status = lock(&self.child)
            .wait()
            .map(describe_exit)
            .unwrap_or_else(|error| format!("could not be waited for ({error})"));
        (
            format!("closed its output but kept running, so it was killed ({status})"),
            false,
        )
    }

    /// How the compiler ended if it has, or, once `deadline` has passed, how
    /// it ended after being killed; `None` means keep waiting.
    fn ending_by(&self, deadline: Instant) -> Option<Ending> {
        self.try_ending()
            .or_else(|| (Instant::now() >= deadline).then(|| self.kill_and_reap()))
    }

    /// Waits on the executor for the compiler to exit, killing it after
    /// `grace`.
    pub async fn ending(&self, executor: &dyn Executor, grace: Duration) -> Ending {
        let deadline = Instant::now() + grace;
        loop {
            if let Some(ending) = self.ending_by(deadline) {
                return ending;
            }
            executor.sleep(EXIT_POLL).await;
        }
    }

    /// Waits on this thread for the compiler to exit, killing it after
    /// `grace`.
    pub fn ending_blocking(&self, grace: Duration) -> Ending {
        let deadline = Instant::now() + grace;
        loop {
            if let Some(ending) = self.ending_by(deadline) {
                return ending;
            }
            std::thread::sleep(EXIT_POLL);
        }
    }

    /// Waits on the executor, at most `grace`, until all of stderr was read.
    pub async fn stderr_settled(&self, executor: &dyn Executor, grace: Duration) {
        let deadline = Instant::now() + grace;
        while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < deadline {
            executor.sleep(EXIT_POLL).await;
        }
    }
}

/// Locks a mutex whose data stays valid even if a holder panicked.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_last_lines_within_bounds() {
        let mut tail = StderrTail::default();
        tail.push(b"first\nsec");
        tail.push(b"ond\r\nthird");
        assert_eq!(tail.snapshot(), "first\nsecond\nthird\n");

        for i in 0..1000 {
            tail.push(format!("flood {i}\n").as_bytes());
        }
        let snapshot = tail.snapshot();
        assert_eq!(snapshot.lines().count(), StderrTail::MAX_LINES);
        assert!(snapshot.ends_with("flood 999\n"), "{snapshot}");

        tail.push(&[b'x'; 10_000]);
        tail.push(b"\n");
        let last = tail.snapshot().lines().last().unwrap().to_owned();
        assert_eq!(last.len(), StderrTail::MAX_LINE);
    }

    #[test]
    fn spawn_failure_names_the_command() {
        let command = CompilerCommand::new("/nonexistent/sass");
        let error = spawn(&command).unwrap_err();
        // ENOENT on Unix, ERROR_FILE_NOT_FOUND or ERROR_PATH_NOT_FOUND on Windows.
        assert!(
            matches!(
                error.kind(),
                crate::error::HostErrorKind::System(Some(2 | 3))
            ),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("/nonexistent/sass --embedded"),
            "{error}"
        );
    }
}
