//! The CPU quota of this process's cgroup, where one applies (a container's
//! `--cpus`, Kubernetes' CPU limit, systemd's `CPUQuota=`), and how much CPU
//! the cgroup has used: cgroup v2's `cpu.max` and `cpu.stat`, v1's
//! `cpu.cfs_quota_us` / `cpu.cfs_period_us` and `cpuacct.usage`.
//!
//! A container limited to 2 CPUs on a 64-CPU machine sees 62 idle CPUs in
//! /proc/stat, yet a spin beside its compiler there can take the quota's
//! last CPU, and then the kernel stops the whole cgroup (every process of
//! the container) until the next period: a spin must fit in what the quota
//! leaves. Which cgroup holds the quota is found once (the smallest quota
//! on the way from this process's cgroup up to the hierarchy's root, as a
//! parent's quota binds its children); the quota itself is read again at
//! every window, since a container's limit can be changed while it runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a cgroup's files are read (the file system, or a test's).
type Read<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// Where one cgroup's quota and use are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Quota {
    /// cgroup v2: the directory of the cgroup with the quota.
    V2(PathBuf),
    /// cgroup v1: the `cpu` controller's directory with the quota, and the
    /// `cpuacct` controller's directory of the same cgroup.
    V1 { cpu: PathBuf, cpuacct: PathBuf },
}

/// The quota, in CPUs, and the CPU time its cgroup used so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Reading {
    pub cpus: f64,
    pub used: Duration,
}

impl Quota {
    /// This process's quota, if one applies now.
    pub(super) fn find() -> Option<Self> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        Self::find_in(&cgroups, &mounts, |path| std::fs::read_to_string(path).ok())
    }

    /// The quota, from the contents of /proc/self/cgroup and
    /// /proc/self/mountinfo, reading the cgroups' files with `read`.
    fn find_in(
        cgroups: &str,
        mounts: &str,
        read: impl Fn(&Path) -> Option<String> + Copy,
    ) -> Option<Self> {
        // A v1 cpu controller, where one is mounted, is the one that
        // limits: the v2 hierarchy then holds no cpu controller.
        if let Some(cpu) = directory(cgroups, mounts, Some("cpu")) {
            let chosen = smallest(&cpu, read, v1_cpus)?;
            let cpuacct = if mount_has(mounts, "cpuacct", &cpu.mount) {
                chosen.clone()
            } else {
                let cpuacct = directory(cgroups, mounts, Some("cpuacct"))?;
                cpuacct.mount.join(chosen.strip_prefix(&cpu.mount).ok()?)
            };
            return Some(Self::V1 {
                cpu: chosen,
                cpuacct,
            });
        }
        let unified = directory(cgroups, mounts, None)?;
        smallest(&unified, read, v2_cpus).map(Self::V2)
    }

    /// The quota now and its cgroup's use; `None` where it no longer
    /// applies or cannot be read.
    pub(super) fn read(&self) -> Option<Reading> {
        self.read_with(|path| std::fs::read_to_string(path).ok())
    }

    fn read_with(&self, read: impl Fn(&Path) -> Option<String> + Copy) -> Option<Reading> {
        match self {
            Self::V2(dir) => {
                let cpus = v2_cpus(dir, &read)?;
                let stat = read(&dir.join("cpu.stat"))?;
                let micros = stat.lines().find_map(|line| {
                    let (key, value) = line.split_once(' ')?;
                    (key == "usage_usec").then(|| value.trim().parse().ok())?
                })?;
                Some(Reading {
                    cpus,
                    used: Duration::from_micros(micros),
                })
            }
            Self::V1 { cpu, cpuacct } => {
                let cpus = v1_cpus(cpu, &read)?;
                let nanos = read(&cpuacct.join("cpuacct.usage"))?.trim().parse().ok()?;
                Some(Reading {
                    cpus,
                    used: Duration::from_nanos(nanos),
                })
            }
        }
    }
}

/// A controller's hierarchy: where it is mounted, and this process's
/// cgroup directory in it.
struct Hierarchy {
    mount: PathBuf,
    dir: PathBuf,
}

impl std::ops::Deref for Hierarchy {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.dir
    }
}

/// This process's directory in the v1 hierarchy of `controller`, or, with
/// `None`, in the v2 one.
fn directory(cgroups: &str, mounts: &str, controller: Option<&str>) -> Option<Hierarchy> {
    let path = cgroups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let matches = match controller {
            Some(controller) => controllers.split(',').any(|c| c == controller),
            None => id == "0" && controllers.is_empty(),
        };
        matches.then_some(path)
    })?;
    mounts.lines().find_map(|line| {
        let (mount, fstype, options) = mount_fields(line)?;
        let wanted = match controller {
            Some(controller) => {
                fstype == "cgroup" && options.split(',').any(|option| option == controller)
            }
            None => fstype == "cgroup2",
        };
        if !wanted {
            return None;
        }
        // The mount's root is the cgroup it shows (in a cgroup namespace,
        // the container's own): this process's path is relative to it.
        let root = line.split(' ').nth(3)?;
        let relative = path.strip_prefix(root).unwrap_or(path);
        let mount = PathBuf::from(mount);
        let dir = mount.join(relative.trim_start_matches('/'));
        Some(Hierarchy { mount, dir })
    })
}

/// Whether the v1 hierarchy mounted at `mount` also holds `controller`.
fn mount_has(mounts: &str, controller: &str, mount: &Path) -> bool {
    mounts.lines().any(|line| {
        mount_fields(line).is_some_and(|(at, fstype, options)| {
            fstype == "cgroup"
                && Path::new(at) == mount
                && options.split(',').any(|option| option == controller)
        })
    })
}

/// A mountinfo line's mount point, file system type and super options.
fn mount_fields(line: &str) -> Option<(&str, &str, &str)> {
    let mount = line.split(' ').nth(4)?;
    let (_, after) = line.split_once(" - ")?;
    let mut fields = after.split(' ');
    Some((mount, fields.next()?, fields.nth(1)?))
}

/// Of `hierarchy`'s directory and its parents up to the mount, the one with
/// the smallest quota `cpus` reads, if any has one.
fn smallest(
    hierarchy: &Hierarchy,
    read: impl Fn(&Path) -> Option<String> + Copy,
    cpus: fn(&Path, Read<'_>) -> Option<f64>,
) -> Option<PathBuf> {
    hierarchy
        .dir
        .ancestors()
        .take_while(|dir| dir.starts_with(&hierarchy.mount))
        .filter_map(|dir| Some((cpus(dir, &read)?, dir)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, dir)| dir.to_path_buf())
}

/// cgroup v2's quota in `dir` (`cpu.max`: "max 100000" is none).
fn v2_cpus(dir: &Path, read: Read<'_>) -> Option<f64> {
    let max = read(&dir.join("cpu.max"))?;
    let mut fields = max.split_whitespace();
    let quota: f64 = fields.next()?.parse().ok()?;
    let period: f64 = fields.next()?.parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// cgroup v1's quota in `dir` (`cpu.cfs_quota_us` -1 is none).
fn v1_cpus(dir: &Path, read: Read<'_>) -> Option<f64> {
    let quota: f64 = read(&dir.join("cpu.cfs_quota_us"))?.trim().parse().ok()?;
    let period: f64 = read(&dir.join("cpu.cfs_period_us"))?.trim().parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
        33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    fn files(entries: &[(&str, &str)]) -> HashMap<PathBuf, String> {
        entries
            .iter()
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .collect()
    }

    #[test]
    fn a_v1_quota_is_read_from_the_cgroup_that_holds_the_smallest() {
        let cgroups = "2:cpuacct:/ci/job\n1:cpu:/ci/job\n0::/\n";
        let files = files(&[
            ("/sys/fs/cgroup/cpu/ci/job/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/ci/job/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpu/ci/cpu.cfs_quota_us", "150000\n"),
            ("/sys/fs/cgroup/cpu/ci/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpuacct/ci/cpuacct.usage", "2500000000\n"),
        ]);
        let read = |path: &Path| files.get(path).cloned();
        let quota = Quota::find_in(cgroups, V1_MOUNTS, read).unwrap();
        assert_eq!(
            quota,
            Quota::V1 {
                cpu: "/sys/fs/cgroup/cpu/ci".into(),
                cpuacct: "/sys/fs/cgroup/cpuacct/ci".into()
            }
        );
        assert_eq!(
            quota.read_with(read),
            Some(Reading {
                cpus: 1.5,
                used: Duration::from_millis(2500)
            })
        );
    }

    #[test]
    fn co_mounted_v1_controllers_share_a_directory() {
        let mounts = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        let cgroups = "4:cpu,cpuacct:/docker/abc\n";
        let files = files(&[
            (
                "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us",
                "200000",
            ),
            (
                "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us",
                "100000",
            ),
        ]);
        let quota = Quota::find_in(cgroups, mounts, |path| files.get(path).cloned()).unwrap();
        let dir = PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/docker/abc");
        assert_eq!(
            quota,
            Quota::V1 {
                cpu: dir.clone(),
                cpuacct: dir
            }
        );
    }

    #[test]
    fn a_v2_quota_in_a_cgroup_namespace_is_read_from_cpu_max_and_cpu_stat() {
        // Inside a container: the mount's root is the container's cgroup.
        let mounts = "29 22 0:26 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let cgroups = "0::/kubepods/pod1/app\n";
        let files = files(&[
            ("/sys/fs/cgroup/app/cpu.max", "max 100000\n"),
            ("/sys/fs/cgroup/cpu.max", "200000 100000\n"),
            (
                "/sys/fs/cgroup/cpu.stat",
                "usage_usec 7000\nuser_usec 5000\nsystem_usec 2000\n",
            ),
        ]);
        let read = |path: &Path| files.get(path).cloned();
        let quota = Quota::find_in(cgroups, mounts, read).unwrap();
        assert_eq!(quota, Quota::V2("/sys/fs/cgroup".into()));
        assert_eq!(
            quota.read_with(read),
            Some(Reading {
                cpus: 2.0,
                used: Duration::from_micros(7000)
            })
        );
    }

    #[test]
    fn no_quota_anywhere_is_none() {
        let cgroups = "1:cpu:/\n0::/\n";
        let files = files(&[
            ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000"),
            ("/sys/fs/cgroup/unified/cpu.max", "max 100000"),
        ]);
        assert_eq!(
            Quota::find_in(cgroups, V1_MOUNTS, |path| files.get(path).cloned()),
            None
        );
        let v2 = "29 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            Quota::find_in("0::/\n", v2, |path| files.get(path).cloned()),
            None
        );
        // This machine's own: whatever it has, finding it does not fail.
        let _ = Quota::find();
    }
}
