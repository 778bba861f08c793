//! The host's errors: why a compilation could not be run to its end. Each says
//! what happened in words a user can act on (the compiler's command, its exit
//! status or signal, the tail of its stderr), and has a [`HostErrorKind`] that
//! the Ruby layer maps to the exception classes Ruby users already rescue.

use std::fmt;

/// How the Ruby layer should surface a [`HostError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostErrorKind {
    /// An operating system error with this errno (`SystemCallError`).
    System(Option<i32>),
    /// The compiler went away (`IOError`).
    Io,
    /// The protocol was broken or is incompatible (`Errno::EPROTO`).
    Protocol,
    /// The compiler was closed by its owner (`IOError`, "closed compiler").
    Closed,
    /// The compiler failed on the compilation's own input and stopped: the
    /// compilation failed, as Sass would report it (`Sass::CompileError`).
    Compile,
}

/// Why the host could not complete a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// The compiler could not be started.
    Spawn {
        /// The command line that was tried.
        command: String,
        /// The OS error number, if there was one.
        errno: Option<i32>,
        /// The OS error's description.
        message: String,
    },
    /// The compiler exited, was killed, or closed its output.
    Exited {
        /// The compiler's command line.
        command: String,
        /// "exited with status 1", "was killed by signal 9 (SIGKILL)", ...
        status: String,
        /// The last lines the compiler wrote to stderr.
        stderr: String,
        /// Where in what the host wrote to the compiler it stopped reading,
        /// if known (Linux): requests written from there on never reached it.
        unread_from: Option<u64>,
    },
    /// The compiler sent something the protocol does not allow, or reported
    /// that the host did.
    Protocol {
        /// The compiler's command line.
        command: String,
        /// What was wrong.
        message: String,
        /// The last lines the compiler wrote to stderr.
        stderr: String,
    },
    /// The compiler speaks a protocol version this host does not.
    IncompatibleVersion {
        /// The compiler's command line.
        command: String,
        /// The protocol version the compiler reported.
        protocol_version: String,
        /// The compiler's own version.
        compiler_version: String,
    },
    /// Reading from or writing to the compiler failed.
    Io {
        /// The compiler's command line.
        command: String,
        /// The failure.
        message: String,
    },
    /// The compiler was closed by its owner.
    Closed,
    /// The compiler reported an error of its own about this compilation and
    /// stopped (Dart Sass does so when the stylesheet overflows its stack,
    /// for example).
    CompilerFailed {
        /// The compiler's command line.
        command: String,
        /// The error's type (`INTERNAL`, `PARAMS`).
        kind: String,
        /// The compiler's message (for a crash, with its stack trace).
        message: String,
    },
    /// The compiler stopped because of another compilation (see
    /// [`HostError::CompilerFailed`]); this one was fine and can run again.
    StoppedByOther {
        /// The compiler's command line.
        command: String,
        /// The compilation id of the compilation that stopped it.
        culprit: u32,
        /// The compiler's message about it.
        message: String,
    },
    /// The process forked while the compilation ran, and the child tried to
    /// go on with it: the compilation, its compiler and its pipes belong to
    /// the parent.
    Forked,
}

impl HostError {
    /// The kind of Ruby exception this error becomes.
    pub fn kind(&self) -> HostErrorKind {
        match self {
            Self::Spawn { errno, .. } => HostErrorKind::System(*errno),
            Self::Exited { .. } | Self::Io { .. } => HostErrorKind::Io,
            Self::Protocol { .. } | Self::IncompatibleVersion { .. } => HostErrorKind::Protocol,
            Self::Closed => HostErrorKind::Closed,
            Self::CompilerFailed { .. } => HostErrorKind::Compile,
            Self::StoppedByOther { .. } | Self::Forked => HostErrorKind::Io,
        }
    }

    /// Whether the compilation that got this error may simply run again on
    /// another compiler: it was not the cause.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::StoppedByOther { .. })
    }

    /// Whether the compiler died or its pipes broke (as opposed to its
    /// reporting an error, breaking the protocol or being closed): a
    /// compilation it had answered nothing of may run again elsewhere.
    pub fn is_death(&self) -> bool {
        matches!(self, Self::Exited { .. } | Self::Io { .. })
    }

    /// Whether a compilation whose request was written at byte `sent_at` of
    /// the compiler's input (`None`: it was not written) never reached the
    /// compiler that ended with this error: it may run on another compiler
    /// as if nothing happened.
    pub fn never_reached(&self, sent_at: Option<u64>) -> bool {
        match self {
            Self::Exited { unread_from, .. } => match sent_at {
                None => true,
                Some(at) => unread_from.is_some_and(|from| at >= from),
            },
            Self::Io { .. } => sent_at.is_none(),
            _ => false,
        }
    }

    /// Whether the process ran out of descriptors (`EMFILE`, `ENFILE`)
    /// starting a compiler: a compile may wait for one to free up instead.
    pub fn is_out_of_descriptors(&self) -> bool {
        matches!(
            self,
            Self::Spawn {
                errno: Some(errno),
                ..
            } if crate::sys::TOO_MANY_FILES.contains(errno)
        )
    }

    /// For [`HostError::CompilerFailed`], the compiler's own words (its
    /// message and stack trace): kept for debugging, not the message.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Self::CompilerFailed { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// Whether a compiler's error message is a Dart stack overflow.
fn is_stack_overflow(message: &str) -> bool {
    message.to_ascii_lowercase().contains("stack overflow")
}

/// Appends the compiler's stderr tail, indented, if there is one.
fn write_stderr(f: &mut fmt::Formatter<'_>, stderr: &str) -> fmt::Result {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        return f.write_str("; it wrote nothing to stderr");
    }
    f.write_str("; its last lines on stderr:")?;
    for line in stderr.lines() {
        write!(f, "\n  {line}")?;
    }
    Ok(())
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn {
                command, message, ..
            } => write!(
                f,
                "could not start the Sass compiler `{command}`: {message}"
            ),
            Self::Exited {
                command,
                status,
                stderr,
                ..
            } => {
                write!(f, "the Sass compiler `{command}` {status}")?;
                write_stderr(f, stderr)
            }
            Self::Protocol {
                command,
                message,
                stderr,
            } => {
                write!(
                    f,
                    "the Sass compiler `{command}` broke the protocol: {message}"
                )?;
                write_stderr(f, stderr)
            }
            Self::IncompatibleVersion {
                command,
                protocol_version,
                compiler_version,
            } => write!(
                f,
                "the Sass compiler `{command}` (version {compiler_version}) speaks Embedded Sass \
                 Protocol {protocol_version}, but this host needs protocol {}.x",
                crate::protocol::PROTOCOL_MAJOR
            ),
            Self::Io { command, message } => {
                write!(
                    f,
                    "lost the connection to the Sass compiler `{command}`: {message}"
                )
            }
            Self::Closed => f.write_str("closed compiler"),
            Self::Forked => f.write_str(
                "this compilation was started before the process forked and belongs to the \
                 parent: a forked child cannot go on with it (compile again in the child)",
            ),
            Self::CompilerFailed { message, kind, .. } if is_stack_overflow(message) => write!(
                f,
                "Stack overflow: the stylesheet recursed or nested too deeply for the Sass \
                 compiler (a @mixin or @function that calls itself without end, or thousands \
                 of nested blocks or parentheses); the compiler stopped ({kind} error)"
            ),
            Self::CompilerFailed { message, kind, .. } => write!(
                f,
                "the Sass compiler could not compile this stylesheet and stopped ({kind} error): \
                 {}",
                message.lines().next().unwrap_or_default()
            ),
            Self::StoppedByOther {
                command, culprit, ..
            } => write!(
                f,
                "the Sass compiler `{command}` stopped because of another compilation \
                 (compilation {culprit}) before this one finished"
            ),
        }
    }
}

impl std::error::Error for HostError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_command_status_and_stderr() {
        let error = HostError::Exited {
            command: "/opt/sass --embedded".into(),
            status: "was killed by signal 9 (SIGKILL)".into(),
            stderr: "line one\nline two\n".into(),
            unread_from: None,
        };
        assert_eq!(
            error.to_string(),
            "the Sass compiler `/opt/sass --embedded` was killed by signal 9 (SIGKILL); \
             its last lines on stderr:\n  line one\n  line two"
        );
        assert_eq!(error.kind(), HostErrorKind::Io);

        let error = HostError::Protocol {
            command: "sass".into(),
            message: "garbage".into(),
            stderr: String::new(),
        };
        assert_eq!(
            error.to_string(),
            "the Sass compiler `sass` broke the protocol: garbage; it wrote nothing to stderr"
        );
        assert_eq!(error.kind(), HostErrorKind::Protocol);
        assert_eq!(HostError::Closed.to_string(), "closed compiler");
    }
}
