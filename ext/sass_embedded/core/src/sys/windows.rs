//! The Windows system calls (see [`super`]). What a caller waits on is a
//! socket (the only handle both `WSAPoll` and, later, Ruby's own waits take):
//! bells are loopback socket pairs. The compiler's pipes are never waited
//! on: threads read and write them (see [`crate::wait`] and
//! [`crate::outbox`]).

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::windows::io::{
    AsRawHandle, AsRawSocket, BorrowedSocket, FromRawHandle, OwnedHandle, OwnedSocket, RawSocket,
};
use std::process::Child;
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, HANDLE};
use windows_sys::Win32::Networking::WinSock::{
    WSAPoll, INVALID_SOCKET, POLLRDNORM, POLLWRNORM, SOCKET_ERROR, WSAEMFILE, WSAPOLLFD,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Pipes::{CreatePipe, PeekNamedPipe};
use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};

use super::Interest;

/// What a waiting caller or the built-in executor waits on: a socket.
pub type Waitable = RawSocket;

/// No socket: what `poll` skips.
pub const NO_WAITABLE: Waitable = INVALID_SOCKET as Waitable;

/// A borrowed [`Waitable`], for the executor's watches.
pub type BorrowedWaitable<'a> = BorrowedSocket<'a>;

/// An owned [`Waitable`].
pub type OwnedWaitable = OwnedSocket;

/// One entry of a [`poll`]: a socket and the readiness asked for.
pub type PollFd = WSAPOLLFD;

/// The [`poll`] entry for `fd` and `interest`.
pub fn poll_fd(fd: Waitable, interest: Interest) -> PollFd {
    WSAPOLLFD {
        fd: fd as usize,
        events: match interest {
            Interest::Read => POLLRDNORM,
            Interest::Write => POLLWRNORM,
        },
        revents: 0,
    }
}

/// Whether [`poll`] found `entry` ready (or in error).
pub fn is_ready(entry: &PollFd) -> bool {
    entry.revents != 0
}

/// The socket of an owned [`Waitable`].
pub fn raw(waitable: &OwnedWaitable) -> Waitable {
    waitable.as_raw_socket()
}

/// The errors that say the process ran out of handles or sockets.
pub const TOO_MANY_FILES: [i32; 2] = [
    4, // ERROR_TOO_MANY_OPEN_FILES
    WSAEMFILE,
];

/// Waits until one of `fds` is ready (its `revents` are filled in), or
/// `timeout` passes (`None`: no limit). Returns how many are ready.
/// `WSAPoll` ignores entries whose socket is `INVALID_SOCKET`.
pub fn poll(fds: &mut [PollFd], timeout: Option<Duration>) -> io::Result<usize> {
    let timeout = timeout.map_or(-1, |timeout| {
        // Round up, so a short positive timeout does not become a busy loop.
        let millis = timeout.as_nanos().div_ceil(1_000_000);
        i32::try_from(millis).unwrap_or(i32::MAX)
    });
    let count = u32::try_from(fds.len()).unwrap_or(u32::MAX);
    // SAFETY: `fds` is a valid, exclusively borrowed slice of WSAPOLLFD
    // structs whose length is passed along with it.
    let ready = unsafe { WSAPoll(fds.as_mut_ptr(), count, timeout) };
    if ready == SOCKET_ERROR {
        return Err(io::Error::last_os_error());
    }
    Ok(usize::try_from(ready).unwrap_or(0))
}

/// A connected pair of non-blocking loopback sockets: (the end to wait on,
/// the end to write to). What a bell is made of.
pub fn socket_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let writer = TcpStream::connect(listener.local_addr()?)?;
    // Only the connection just made can arrive: nothing else knows the port
    // before the listener closes, and what else arrives is refused below.
    let (reader, peer) = listener.accept()?;
    if peer != writer.local_addr()? {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "another connection reached a bell's listener",
        ));
    }
    reader.set_nonblocking(true)?;
    writer.set_nonblocking(true)?;
    writer.set_nodelay(true)?;
    Ok((reader, writer))
}

/// How large the compiler's input pipe's buffer is (what the standard
/// library gives its own pipes).
const INPUT_PIPE_BUFFER: u32 = 64 * 1024;

/// A pipe for the compiler's stdin, neither end inheritable (the spawn
/// hands the child an inheritable copy of the read end): (read end, write
/// end). Blocking, not overlapped, as the child expects of its stdin.
pub fn input_pipe() -> io::Result<(File, File)> {
    let (mut read, mut write): (HANDLE, HANDLE) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: both out-pointers point to locals; no security attributes (so
    // neither handle is inherited). On success both are new handles that
    // nothing else owns, each wrapped once below.
    if unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), INPUT_PIPE_BUFFER) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: see above: fresh handles, owned from here on.
    let (read, write) = unsafe {
        (
            OwnedHandle::from_raw_handle(read),
            OwnedHandle::from_raw_handle(write),
        )
    };
    Ok((File::from(read), File::from(write)))
}

/// How many bytes wait in a pipe, unread, asked of its **read end** (an
/// anonymous pipe's write end cannot be asked here; the host keeps a copy
/// of the read end of the compiler's stdin for this).
pub fn pipe_unread(read_end: &File) -> io::Result<usize> {
    let mut unread: u32 = 0;
    // SAFETY: the borrow keeps the handle open; no buffer is read into (null,
    // 0), and the one out-value asked for points to a local.
    let ok = unsafe {
        PeekNamedPipe(
            read_end.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            &mut unread,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unread as usize)
}

/// There is no fork on Windows: one generation for ever.
pub fn fork_generation() -> u64 {
    0
}

/// Nothing: the compiler's pipes are blocking, and threads use them.
pub fn set_blocking(_pipe: &std::fs::File) -> io::Result<()> {
    Ok(())
}

/// A pipe cannot be waited on here: threads read and write the compiler's.
pub fn waitable(_file: &std::fs::File) -> io::Result<BorrowedWaitable<'_>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "Windows cannot wait on a pipe",
    ))
}

/// The calling thread's CPU time so far (zero if it cannot be read).
pub fn thread_cpu_time() -> Duration {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: GetCurrentThread returns a pseudo-handle that needs no closing;
    // the four FILETIMEs are valid, exclusively borrowed for the call.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return Duration::ZERO;
    }
    let ticks =
        |time: FILETIME| u64::from(time.dwHighDateTime) << 32 | u64::from(time.dwLowDateTime);
    // FILETIME counts 100-nanosecond ticks.
    Duration::from_nanos((ticks(kernel) + ticks(user)).saturating_mul(100))
}

/// Makes Windows kill `child` when this process ends, however it ends: the
/// child joins a job object that kills its processes when its last handle
/// closes, and the handle, never closed, closes only with this process.
/// (Windows's counterpart of Linux's `PR_SET_PDEATHSIG`.)
pub fn die_with_host(child: &Child) -> io::Result<()> {
    static JOB: std::sync::OnceLock<Result<usize, i32>> = std::sync::OnceLock::new();
    let job = JOB.get_or_init(|| {
        // SAFETY: no security attributes and no name: an anonymous job.
        let job: HANDLE = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is valid
        // (plain integers), then one flag is set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `job` is the job just made; `limits` is valid for the call
        // and its size is passed with it.
        let set = unsafe {
            SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            )
        };
        if set == 0 {
            let error = io::Error::last_os_error().raw_os_error().unwrap_or(0);
            // SAFETY: `job` is the handle made above, closed once.
            unsafe { CloseHandle(job) };
            return Err(error);
        }
        Ok(job as usize)
    });
    let job = (*job).map_err(io::Error::from_raw_os_error)? as HANDLE;
    // SAFETY: `job` is the process-wide job, never closed; the child's handle
    // is open while `child` is borrowed.
    if unsafe { AssignProcessToJobObject(job, child.as_raw_handle()) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
