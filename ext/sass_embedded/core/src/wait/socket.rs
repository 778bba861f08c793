//! Bells made of loopback socket pairs (see [`super`]): Windows's, where a
//! socket is what `WSAPoll` (and Ruby) can wait on.

use std::io::{self, Write};
use std::net::TcpStream;
use std::os::windows::io::{AsRawSocket, AsSocket, BorrowedSocket};

use crate::sys::{self, Waitable};

/// A socket that becomes readable when it is rung (the read end of a
/// connected loopback pair). Ringing is one `send` to the other end, safe
/// from any thread.
#[derive(Debug)]
pub struct Bell {
    read: TcpStream,
    write: TcpStream,
}

impl Bell {
    /// A new, silent bell.
    pub fn new() -> io::Result<Self> {
        let (read, write) = sys::socket_pair()?;
        Ok(Self { read, write })
    }

    /// The socket to wait on (readable once rung).
    pub fn fd(&self) -> Waitable {
        self.read.as_raw_socket()
    }

    /// The same socket, borrowed.
    pub fn as_fd(&self) -> BorrowedSocket<'_> {
        self.read.as_socket()
    }

    /// Rings: the socket becomes readable until taken or drained.
    pub fn ring(&self) {
        // A full buffer means it is readable already.
        let _ = (&self.write).write(&[1]);
    }

    /// Silences the bell (consumes every ring so far); whether it had been
    /// rung.
    pub fn take(&self) -> bool {
        super::consume(&self.read)
    }

    /// Silences the bell.
    pub fn drain(&self) {
        self.take();
    }
}
