//! The sass-embedded Ruby extension: a thin magnus layer over the Ruby-free
//! `sass-embedded-core`.
//!
//! - [`host`]: `Sass::Embedded::Host`, the native half of `Sass::Compiler`;
//! - [`session`]: one compilation driven on the calling Ruby thread;
//! - [`conversion`]: protobuf messages to and from Ruby objects;
//! - [`waiting`]: how a compile waits on the calling thread or fiber;
//! - [`gvl`]: Ruby's fd wait, releasing the GVL and running interrupts (the
//!   only `unsafe`);
//! - [`errors`]: host errors and panics as Ruby exceptions;
//! - [`classes`]: the gem's Ruby classes, looked up by name.

#![deny(unsafe_code)]

mod classes;
mod conversion;
mod errors;
#[allow(unsafe_code)]
mod gvl;
mod host;
mod session;
mod waiting;

use magnus::{Error, Ruby};

#[magnus::init]
fn init(ruby: &Ruby) -> Result<(), Error> {
    host::RubyHost::define(ruby)?;
    errors::preload(ruby);
    conversion::preload(ruby)?;
    conversion::define(ruby)?;
    waiting::preload(ruby);
    Ok(())
}
