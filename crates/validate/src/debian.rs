//! Debian kernel packages for `validate --kernel debian-5.10|6.1|6.12|7.2`:
//! found in their release's package lists (a private apt state per family,
//! [`crate::apt`]), fetched with `apt-get download` (with the `linux-binary-*`
//! and `linux-modules-*` packages newer images depend on), unpacked with
//! `dpkg-deb`, and cached (kernel image plus the zram modules, decompressed
//! and in load order) under `$XDG_CACHE_HOME/reclaimsim/kernels/PACKAGE/`.
//!
//! The packages ship no `modules.dep`: the load order comes from the
//! `depends=` entry of each module's `.modinfo` section.

use crate::apt::Apt;
use std::cmp::Ordering;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kernel family `--kernel` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family {
    /// `--kernel` value.
    pub name: &'static str,
    /// Package name: this prefix, an ABI or version part of digits, dots and
    /// `+deb` tags, then `-amd64`.
    prefix: &'static str,
    /// The Debian suites whose package lists carry it.
    suites: &'static [&'static str],
    /// The simulator profile for lru_gen off.
    pub classic: &'static str,
    /// The simulator profile for lru_gen on; `None`: the kernel has no MGLRU.
    pub mglru: Option<&'static str>,
    /// The kernel flushes memcg statistics rarely (pitfall 1): the simulator
    /// flushes as often as the guest's poller did, else it reads exact values.
    pub stale_stats: bool,
    /// The kernel's version (major, minor): scenarios of newer kernels' features are left out.
    pub version: (u32, u32),
}

/// The supported families, 2020-2026, each with the simulator profiles of its
/// kernel version (5.10: no MGLRU, per-CPU memcg statistics folded every 32
/// pages, no rstat, so exact reads).
pub const FAMILIES: &[Family] = &[
    Family {
        name: "debian-5.10",
        prefix: "linux-image-5.10.0-",
        suites: &["bullseye", "bullseye-security"],
        classic: "v5.10",
        mglru: None,
        stale_stats: false,
        version: (5, 10),
    },
    Family {
        name: "debian-6.1",
        prefix: "linux-image-6.1.0-",
        suites: &["bookworm", "bookworm-security"],
        classic: "v6.1-classic",
        mglru: Some("v6.1-mglru"),
        stale_stats: false,
        version: (6, 1),
    },
    Family {
        name: "debian-6.12",
        prefix: "linux-image-6.12.",
        suites: &["bookworm", "bookworm-security"],
        classic: "v6.12-classic",
        mglru: Some("v6.12-mglru"),
        stale_stats: true,
        version: (6, 12),
    },
    Family {
        name: "debian-7.2",
        prefix: "linux-image-7.2.",
        suites: &["sid"],
        classic: "v7.2-classic",
        mglru: Some("v7.2-mglru"),
        stale_stats: true,
        version: (7, 2),
    },
];

/// The modules the guest loads (with their dependencies), each with the cache
/// file listing them in load order: zram for swap, null_blk for block devices.
const ROOTS: [(&str, &str); 2] = [("zram", "modules.order"), ("null_blk", NULLB_ORDER)];
/// The load order of null_blk and its dependencies in the cache (added to
/// kernels cached before block devices were used).
const NULLB_ORDER: &str = "nullb.order";

impl Family {
    /// Looks a family up by its `--kernel` name.
    pub fn find(name: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.name == name)
    }

    /// The simulator profile with `lru_gen` on or off.
    pub fn profile(&self, lru_gen: bool) -> &'static str {
        if lru_gen {
            self.mglru.unwrap_or(self.classic)
        } else {
            self.classic
        }
    }

    /// True when `package` is a kernel image package of this family.
    pub fn matches(&self, package: &str) -> bool {
        package.strip_prefix(self.prefix).and_then(|r| r.strip_suffix("-amd64")).is_some_and(|mid| {
            !mid.is_empty()
                && mid.starts_with(|c: char| c.is_ascii_digit())
                && mid.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+')
        })
    }
}

/// Compares version-like strings: runs of digits numerically, the rest bytewise.
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut v = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                v.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        v
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                x.1.trim_start_matches('0')
                    .len()
                    .cmp(&y.1.trim_start_matches('0').len())
                    .then(x.1.trim_start_matches('0').cmp(y.1.trim_start_matches('0')))
            }
            _ => x.1.cmp(y.1),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

/// A kernel ready to boot.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The Debian package it came from.
    pub package: String,
    /// Its cache directory (kernel reports of earlier boots go to `runs/`).
    pub dir: PathBuf,
    /// `vmlinuz`.
    pub image: PathBuf,
    /// zram's module files, in load order.
    pub modules: Vec<PathBuf>,
    /// null_blk's module files (block devices in the guest), in load order.
    pub nullb_modules: Vec<PathBuf>,
}

/// The cache root: `$XDG_CACHE_HOME/reclaimsim/kernels`, else `~/.cache/...`.
pub fn cache_root() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(
            std::env::var_os("HOME")
                .ok_or("neither XDG_CACHE_HOME nor HOME is set: no cache directory for kernel packages")?,
        )
        .join(".cache"),
    };
    Ok(base.join("reclaimsim").join("kernels"))
}

/// The modules an order file of `dir` lists, if it exists and they all do.
fn ordered(dir: &Path, order_file: &str) -> Option<Vec<PathBuf>> {
    let order = fs::read_to_string(dir.join(order_file)).ok()?;
    let modules: Vec<PathBuf> = order.lines().filter(|l| !l.is_empty()).map(|l| dir.join(l)).collect();
    modules.iter().all(|m| m.exists()).then_some(modules)
}

/// The cached kernel in `dir`; its null_blk modules may be missing (empty).
fn load_cached(dir: &Path, package: &str) -> Option<Kernel> {
    let image = dir.join("vmlinuz");
    image.exists().then_some(())?;
    Some(Kernel {
        package: package.to_string(),
        dir: dir.to_path_buf(),
        image,
        modules: ordered(dir, ROOTS[0].1)?,
        nullb_modules: ordered(dir, ROOTS[1].1).unwrap_or_default(),
    })
}

/// The newest cached kernel of `family`, if any.
pub fn cached(family: &Family, root: &Path) -> Option<Kernel> {
    let mut names: Vec<String> = fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| family.matches(n))
        .collect();
    names.sort_by(|a, b| version_cmp(b, a));
    names.iter().find_map(|n| load_cached(&root.join(n), n))
}

/// The newest package of `family` in its release's package lists.
fn newest_package(family: &Family, apt: &Apt) -> Result<String, String> {
    let pattern = format!("^{}", family.prefix.replace('.', "\\."));
    let text = apt.run("apt-cache", &["search", "--names-only", &pattern], Path::new("/"))?;
    let mut names: Vec<&str> =
        text.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| family.matches(n)).collect();
    names.sort_by(|a, b| version_cmp(a, b));
    names.last().map(|s| s.to_string()).ok_or_else(|| {
        format!("the package lists of {} have no `{}*-amd64` package", family.suites.join(", "), family.prefix)
    })
}

/// The packages holding the image's files: `package` and, where it is split
/// (7.x), the `linux-binary-*` / `linux-modules-*` packages it depends on.
fn package_set(package: &str, apt: &Apt) -> Result<Vec<String>, String> {
    let show = apt.run("apt-cache", &["show", "--no-all-versions", package], Path::new("/"))?;
    Ok(std::iter::once(package.to_string()).chain(split_parts(&show)).collect())
}

/// The `linux-binary-*` and `linux-modules-*` names in the `Depends:` field of
/// `apt-cache show` text.
pub fn split_parts(show: &str) -> Vec<String> {
    let depends = show.lines().find_map(|l| l.strip_prefix("Depends:")).unwrap_or("");
    depends
        .split([',', '|'])
        .filter_map(|d| d.split_whitespace().next())
        .filter(|n| n.starts_with("linux-binary-") || n.starts_with("linux-modules-"))
        .map(str::to_string)
        .collect()
}

/// The `depends=` list of a module's `.modinfo` section.
pub fn module_depends(ko: &[u8]) -> Vec<String> {
    const KEY: &[u8] = b"\0depends=";
    let Some(at) = ko.windows(KEY.len()).position(|w| w == KEY) else { return Vec::new() };
    let rest = &ko[at + KEY.len()..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end]).split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// A module's name from its archive path (`.../lz4hc_compress.ko.xz` -> `lz4hc_compress`).
fn module_name(path: &str) -> Option<String> {
    let file = path.rsplit('/').next()?;
    let stem = file.strip_suffix(".ko.xz").or_else(|| file.strip_suffix(".ko"))?;
    Some(stem.replace('-', "_"))
}

/// Runs `dpkg-deb --fsys-tarfile DEB | tar ARGS` in `dir`.
fn tar(deb: &Path, args: &str, dir: &Path) -> Result<Vec<u8>, String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("dpkg-deb --fsys-tarfile \"$0\" | tar {args}"))
        .arg(deb)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("dpkg-deb/tar: {e}"))?;
    if !out.status.success() {
        return Err(format!("unpacking {}: {}", deb.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

/// True for the kernel image's archive path (`./boot/vmlinuz-VER`, 7.x:
/// `./usr/lib/modules/VER/vmlinuz`).
fn is_image(path: &str) -> bool {
    path.starts_with("./boot/vmlinuz-") || (path.contains("/modules/") && path.ends_with("/vmlinuz"))
}

/// Unpacks the packages `debs` into `dir`: `vmlinuz` (with `image`) and the
/// `roots` modules with their dependencies, decompressed; writes each root's
/// load order file after its modules (the cache entry is complete then).
fn unpack(debs: &[PathBuf], dir: &Path, image: bool, roots: &[(&str, &str)]) -> Result<(), String> {
    let mut members: Vec<(&Path, String)> = Vec::new();
    for deb in debs {
        let listing = String::from_utf8_lossy(&tar(deb, "-t", dir)?).into_owned();
        members.extend(listing.lines().map(|l| (deb.as_path(), l.to_string())));
    }
    if image {
        let (deb, image) =
            members.iter().find(|(_, l)| is_image(l)).ok_or("no kernel image (vmlinuz) in the packages")?;
        tar(deb, &format!("-xO '{image}' > vmlinuz"), dir)?;
    }
    for (root, order_file) in roots {
        unpack_modules(&members, dir, root, order_file)?;
    }
    Ok(())
}

/// Unpacks module `root` and its dependencies from `members` into `dir`, then
/// writes their load order to `order_file`.
fn unpack_modules(members: &[(&Path, String)], dir: &Path, root: &str, order_file: &str) -> Result<(), String> {
    let member_of = |name: &str| members.iter().find(|(_, l)| module_name(l).as_deref() == Some(name));
    // Depth-first: a module after everything it depends on.
    let mut order: Vec<String> = Vec::new();
    let mut stack: Vec<(String, bool)> = vec![(root.to_string(), false)];
    while let Some((name, deps_done)) = stack.pop() {
        let file = format!("{name}.ko");
        if order.contains(&file) {
            continue;
        }
        let (deb, member) = member_of(&name).ok_or_else(|| format!("no module `{name}` in the packages"))?;
        if !dir.join(&file).exists() {
            let decompress = if member.ends_with(".xz") { " | xz -dc" } else { "" };
            tar(deb, &format!("-xO '{member}'{decompress} > '{file}'"), dir)?;
        }
        if deps_done {
            order.push(file);
            continue;
        }
        let deps = module_depends(&fs::read(dir.join(&file)).map_err(|e| format!("{file}: {e}"))?);
        stack.push((name, true));
        stack.extend(deps.into_iter().filter(|m| !order.contains(&format!("{m}.ko"))).map(|m| (m, false)));
    }
    crate::write_atomic(&dir.join(order_file), (order.join("\n") + "\n").as_bytes())
}

/// The kernel of `family`: the newest cached one, else the newest package of
/// its release, downloaded and unpacked into the cache. Progress goes to stderr.
pub fn fetch(family: &Family) -> Result<Kernel, String> {
    let root = cache_root()?;
    let apt = || -> Result<Apt, String> {
        let apt = Apt::new(&root.join("apt").join(family.name), family.suites)?;
        apt.update(false)?;
        Ok(apt)
    };
    if let Some(k) = cached(family, &root) {
        if !k.nullb_modules.is_empty() {
            return Ok(k);
        }
        // Cached before block devices were used: the same package's null_blk modules.
        eprintln!("reclaimsim validate: fetching null_blk of {} into {}", k.package, k.dir.display());
        download_unpack(&apt()?, &root, &k.package, &k.dir, false, &ROOTS[1..])?;
        return load_cached(&k.dir, &k.package)
            .ok_or_else(|| format!("{}: incomplete after unpacking", k.dir.display()));
    }
    let apt = apt()?;
    let package = newest_package(family, &apt)?;
    let dir = root.join(&package);
    let partial = root.join(format!(".{package}.partial.{}", std::process::id()));
    eprintln!("reclaimsim validate: fetching {package} into {}", dir.display());
    let result = download_unpack(&apt, &root, &package, &partial, true, &ROOTS).and_then(|()| {
        fs::rename(&partial, &dir).map_err(|e| format!("{} -> {}: {e}", partial.display(), dir.display()))
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    result?;
    load_cached(&dir, &package).ok_or_else(|| format!("{}: incomplete after unpacking", dir.display()))
}

/// Downloads `package` (with its split parts) into a scratch directory under
/// `root`, unpacks the image (with `image`) and `roots` into `dir`, removes the
/// scratch directory.
fn download_unpack(
    apt: &Apt,
    root: &Path,
    package: &str,
    dir: &Path,
    image: bool,
    roots: &[(&str, &str)],
) -> Result<(), String> {
    let debs_dir = root.join(format!(".{package}.debs.{}", std::process::id()));
    for d in [dir, &debs_dir] {
        fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let result = (|| {
        let set = package_set(package, apt)?;
        let args: Vec<&str> = std::iter::once("download").chain(set.iter().map(String::as_str)).collect();
        // Lists older than the archive name removed files: read them again once.
        if apt.run("apt-get", &args, &debs_dir).is_err() {
            apt.update(true)?;
            apt.run("apt-get", &args, &debs_dir)?;
        }
        let debs: Vec<PathBuf> = fs::read_dir(&debs_dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "deb"))
            .collect();
        unpack(&debs, dir, image, roots)
    })();
    let _ = fs::remove_dir_all(&debs_dir);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_match_their_packages_only() {
        let (k61, k612) = (Family::find("debian-6.1").unwrap(), Family::find("debian-6.12").unwrap());
        assert!(k61.matches("linux-image-6.1.0-56-amd64"));
        assert!(!k61.matches("linux-image-6.1.0-56-rt-amd64"));
        assert!(!k61.matches("linux-image-6.1.0-56-amd64-dbg"));
        assert!(k612.matches("linux-image-6.12.117+deb12-amd64"));
        assert!(!k612.matches("linux-image-6.12-amd64"), "the meta-package");
        assert!(!k61.matches("linux-image-6.12.117+deb12-amd64"));
        let (k510, k72) = (Family::find("debian-5.10").unwrap(), Family::find("debian-7.2").unwrap());
        assert!(k510.matches("linux-image-5.10.0-46-amd64"));
        assert!(!k510.matches("linux-image-5.10.0-46-cloud-amd64"));
        assert!(k72.matches("linux-image-7.2.13+deb14-amd64"));
        assert!(!k72.matches("linux-image-7.3-amd64"));
        assert!(Family::find("debian-4.19").is_none());
        assert_eq!((k510.profile(false), k510.profile(true)), ("v5.10", "v5.10"), "5.10 has no MGLRU");
        assert_eq!((k72.profile(false), k72.profile(true)), ("v7.2-classic", "v7.2-mglru"));
        assert_eq!(k612.profile(true), "v6.12-mglru");
        assert_eq!(k61.profile(false), "v6.1-classic");
    }

    #[test]
    fn split_image_packages_and_their_parts() {
        let show = "Package: linux-image-7.2.13+deb14-amd64\nDepends: dracut | initramfs-tools (>= 0.120), linux-base-7.2.13+deb14-amd64 (= 7.2.13-1), linux-binary-7.2.13+deb14-amd64 (= 7.2.13-1), linux-modules-7.2.13+deb14-amd64 (= 7.2.13-1)\nSize: 1892\n";
        assert_eq!(split_parts(show), ["linux-binary-7.2.13+deb14-amd64", "linux-modules-7.2.13+deb14-amd64"]);
        assert!(split_parts("Depends: kmod, linux-base (>= 4.3~), initramfs-tools\n").is_empty());
        assert!(is_image("./boot/vmlinuz-5.10.0-46-amd64"));
        assert!(is_image("./usr/lib/modules/7.2.13+deb14-amd64/vmlinuz"));
        assert!(!is_image("./usr/lib/modules/7.2.13+deb14-amd64/kernel/vmlinuz.ko"));
    }

    #[test]
    fn versions_compare_numerically() {
        let mut v = vec!["linux-image-6.1.0-9-amd64", "linux-image-6.1.0-56-amd64", "linux-image-6.1.0-10-amd64"];
        v.sort_by(|a, b| version_cmp(a, b));
        assert_eq!(v, ["linux-image-6.1.0-9-amd64", "linux-image-6.1.0-10-amd64", "linux-image-6.1.0-56-amd64"]);
        assert_eq!(version_cmp("6.12.117+deb12", "6.12.99+deb12"), Ordering::Greater);
        assert_eq!(version_cmp("a1", "a1"), Ordering::Equal);
    }

    #[test]
    fn modinfo_depends_and_names() {
        let ko = b"\x7fELF....\0license=GPL\0depends=lz4hc_compress,lz4_compress\0retpoline=Y\0";
        assert_eq!(module_depends(ko), ["lz4hc_compress", "lz4_compress"]);
        assert!(module_depends(b"\0depends=\0name=zsmalloc\0").is_empty());
        assert!(module_depends(b"nothing").is_empty());
        assert_eq!(
            module_name("./lib/modules/6.12/kernel/lib/lz4/lz4hc_compress.ko.xz").as_deref(),
            Some("lz4hc_compress")
        );
        assert_eq!(module_name("./lib/modules/6.1/kernel/mm/zsmalloc.ko").as_deref(), Some("zsmalloc"));
        assert_eq!(module_name("./lib/modules/6.1/kernel/mm/"), None);
    }
}
