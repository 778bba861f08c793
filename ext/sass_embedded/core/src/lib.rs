//! The Ruby-free core of the sass-embedded host.
//!
//! The path of one compilation through this crate, in order:
//!
//! - [`protocol`]: the protobuf messages, generated from the vendored schema;
//! - [`framing`]: varint packet framing over the compiler's pipes;
//! - [`process`]: starting the compiler and describing how it ended;
//! - [`connection`]: one running compiler and its reader and writer tasks;
//! - [`dispatcher`]: the routing table from compilation id to waiting caller;
//! - [`compilation`]: the caller's handle on one compilation;
//! - [`host`]: lazily started, restarted and closed connections;
//! - [`error`]: what can go wrong, in words a user can act on.
//!
//! Nothing here knows about Ruby; the extension crate adds a thin magnus layer.

pub mod compilation;
pub mod connection;
pub mod dispatch;
pub mod dispatcher;
pub mod error;
pub mod framing;
pub mod host;
pub mod process;
pub mod protocol;

pub use compilation::{Compilation, Received, VersionQuery};
pub use error::{HostError, HostErrorKind};
pub use host::{Host, HostConfig};
pub use process::CompilerCommand;
