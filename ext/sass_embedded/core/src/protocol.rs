//! The Embedded Sass Protocol's messages, generated from the vendored
//! `proto/embedded_sass.proto` (protocol 3.3.0), and the few constants the
//! protocol defines outside the schema.
//!
//! The generated code is committed (`protocol/embedded_sass.rs`), so that a
//! build (a user's source gem install, an emulated arm64 build) compiles no
//! protobuf compiler: `tests/protocol_schema.rs` regenerates it with
//! prost-build and protox and fails if it differs from the schema's.
//!
//! What the compiler sends is decoded by [`decode_outbound`], which takes
//! nested values apart without recursing (see `nested.rs`).

#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod generated {
    include!("protocol/embedded_sass.rs");
}

pub use generated::*;

mod nested;
pub use nested::{decode_outbound, DecodeError};

/// The major version of the protocol this host speaks. A compiler that reports
/// another major version is refused at start.
pub const PROTOCOL_MAJOR: u64 = 3;

/// The protocol version this host was written against.
pub const PROTOCOL_VERSION: &str = "3.3.0";

/// The compilation id reserved for `VersionRequest` / `VersionResponse`.
pub const VERSION_COMPILATION_ID: u32 = 0;

/// The compilation id and request id reserved for errors that cannot be
/// attributed to a request.
pub const ERROR_ID: u32 = u32::MAX;

/// Parses the major component of a semver string such as `"3.3.0"`.
pub fn major_version(version: &str) -> Option<u64> {
    version.split('.').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_major_versions() {
        assert_eq!(major_version("3.3.0"), Some(3));
        assert_eq!(major_version("2.0.0-beta.1"), Some(2));
        assert_eq!(major_version("10"), Some(10));
        assert_eq!(major_version(""), None);
        assert_eq!(major_version("x.1"), None);
    }
}
