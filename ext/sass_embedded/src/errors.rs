//! Turning Rust failures into Ruby exceptions: host errors into the classes
//! users of the established gem already rescue, and panics into a plain
//! `RuntimeError` (never Ruby's `fatal`, which is what magnus would make of a
//! panic that reached it).

use std::panic::{catch_unwind, AssertUnwindSafe};

use magnus::{prelude::*, value::Lazy, Error, RClass, Ruby, Value};
use sass_embedded_core::{HostError, HostErrorKind};

use crate::classes::sass_class;

/// `Sass::CompileError`.
pub(crate) static COMPILE_ERROR: Lazy<RClass> = Lazy::new(|ruby| sass_class(ruby, "CompileError"));

/// Resolves the classes now: a lazy lookup while an interrupt is pending
/// would fail (see `conversion::preload`).
pub fn preload(ruby: &Ruby) {
    Lazy::force(&COMPILE_ERROR, ruby);
}

/// The Ruby exception for a host error:
/// `SystemCallError` (`Errno::ENOENT`, ...) when the compiler cannot start,
/// `Errno::EPROTO` for protocol failures, `IOError` otherwise.
pub fn host_error(ruby: &Ruby, error: &HostError) -> Error {
    let message = error.to_string();
    match error.kind() {
        HostErrorKind::System(Some(code)) => {
            system_call_error(ruby, message, crate::gvl::ruby_errno(code))
        }
        HostErrorKind::System(None) => Error::new(ruby.exception_io_error(), message),
        HostErrorKind::Protocol => system_call_error(ruby, message, libc::EPROTO),
        HostErrorKind::Io | HostErrorKind::Closed | HostErrorKind::Compile => {
            Error::new(ruby.exception_io_error(), message)
        }
    }
}

/// What a compile that ended with `error` returns: a `Sass::CompileError`
/// (for the Ruby layer to raise) if the compiler failed on the compilation's
/// own input, else the host error raised.
pub fn compile_failure(ruby: &Ruby, error: &HostError) -> Result<Value, Error> {
    match error.kind() {
        HostErrorKind::Compile => compiler_failure(ruby, error),
        _ => Err(host_error(ruby, error)),
    }
}

/// How many lines of the compiler's own words a [`compiler_failure`] keeps.
const DETAIL_LINES: usize = 30;

/// A `Sass::CompileError` for a compilation the compiler failed on and
/// stopped (see [`HostError::CompilerFailed`]): the message says what
/// happened in Sass terms; the compiler's own words (a Dart stack trace)
/// follow in the formatted message, cut short, for debugging.
pub fn compiler_failure(ruby: &Ruby, error: &HostError) -> Result<Value, Error> {
    let message = error.to_string();
    let mut formatted = format!("Error: {message}");
    if let Some(detail) = error.detail() {
        let lines: Vec<&str> = detail.lines().collect();
        formatted.push_str("\n\nThe compiler reported:");
        for line in lines.iter().take(DETAIL_LINES) {
            formatted.push_str("\n  ");
            formatted.push_str(line);
        }
        if lines.len() > DETAIL_LINES {
            formatted.push_str(&format!(
                "\n  ... ({} more lines)",
                lines.len() - DETAIL_LINES
            ));
        }
    }
    ruby.get_inner(&COMPILE_ERROR).new_instance((
        ruby.str_new(&message),
        ruby.str_new(&formatted),
        ruby.qnil(),
        ruby.qnil(),
        ruby.ary_new(),
    ))
}

/// `SystemCallError.new(message, errno)`, which Ruby turns into the matching
/// `Errno::*` class.
fn system_call_error(ruby: &Ruby, message: String, errno: i32) -> Error {
    let class = ruby.exception_system_call_error();
    match class.new_instance((message.clone(), errno)) {
        Ok(exception) => Error::from(exception),
        Err(_) => Error::new(ruby.exception_io_error(), message),
    }
}

/// An `ArgumentError` with `message`.
pub fn argument_error(ruby: &Ruby, message: impl Into<String>) -> Error {
    Error::new(ruby.exception_arg_error(), message.into())
}

/// A `TypeError` with `message`.
pub fn type_error(ruby: &Ruby, message: impl Into<String>) -> Error {
    Error::new(ruby.exception_type_error(), message.into())
}

/// Runs the body of a Ruby-facing method, turning a panic into a
/// `RuntimeError` that says it is a bug of this gem.
pub fn guard<T>(ruby: &Ruby, body: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(Error::new(
                ruby.exception_runtime_error(),
                format!("sass-embedded internal error (please report it): {detail}"),
            ))
        }
    }
}
