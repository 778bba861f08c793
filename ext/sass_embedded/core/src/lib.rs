//! The Ruby-free core of the sass-embedded host.
//!
//! The path of one compilation through this crate, in order:
//!
//! - [`protocol`]: the protobuf messages, generated from the vendored schema;
//! - [`framing`]: varint packet framing over the compiler's pipes;
//! - [`process`]: starting the compiler and describing how it ended;
//! - [`outbox`]: writing to the compiler, from any caller, never blocking;
//! - [`connection`]: one running compiler, read by the callers that wait on it;
//! - [`dispatcher`]: the routing table from compilation id to waiting caller,
//!   and who waits where; the requests owed answers; the multiplexed and
//!   wait_for modes;
//! - [`wait`]: what waiting callers sleep on, and how they are woken (the
//!   one place where the Linux and the portable mechanisms are chosen);
//! - [`compilation`]: the caller's handle on one compilation;
//! - [`executor`]: where background work runs (tokio, or a built-in thread);
//! - [`host`]: lazily started, restarted and closed connections;
//! - [`error`]: what can go wrong, in words a user can act on;
//! - `fork`: what a forked child does with the host it inherited (nothing);
//! - `sys`: the few system calls the standard library lacks (the crate's
//!   only `unsafe` code).
//!
//! Nothing here knows about Ruby; the extension crate adds a thin magnus layer.

#![deny(unsafe_code)]

pub mod compilation;
pub mod connection;
pub mod dispatcher;
pub mod error;
pub mod executor;
mod fork;
pub mod framing;
pub mod host;
mod outbox;
pub mod process;
pub mod protocol;
#[allow(unsafe_code)]
mod sys;
pub mod wait;

pub use compilation::{Compilation, Received, Step, VersionQuery};
pub use connection::Patience;
pub use error::{HostError, HostErrorKind};
pub use executor::ExecutorKind;
pub use host::{Host, HostConfig};
pub use process::CompilerCommand;
pub use wait::{Wait, Waker};
