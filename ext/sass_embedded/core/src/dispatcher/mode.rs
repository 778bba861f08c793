//! The two dispatch modes: how compilations share a compiler.
//!
//! - [`DispatchMode::Multiplexed`] (the default): any number of compilations
//!   run at once; every caller reads for everyone while it waits (see
//!   [`crate::connection`]).
//! - [`DispatchMode::WaitFor`] (the benchmark's baseline): a caller takes a
//!   process-wide [`super::wait_for`] baton for its whole compilation, so
//!   compilations run one at a time, the way a `waitFor`-style compiler
//!   blocks its whole event loop on each host callback.
//!
//! Both share the process, the framing, the routing table, the reading and
//! writing, and the failure rules; only the baton differs.

/// Which dispatch mode a host uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DispatchMode {
    /// Compilations run concurrently.
    #[default]
    Multiplexed,
    /// One compilation at a time, under a process-wide baton.
    WaitFor,
}

impl DispatchMode {
    /// Every mode, by name.
    pub const ALL: &'static [(&'static str, Self)] = &[
        ("multiplexed", Self::Multiplexed),
        ("wait_for", Self::WaitFor),
    ];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, mode)| *mode == self)
            .map_or("?", |(name, _)| name)
    }
}
