//! Debian kernel packages for `validate --kernel debian-6.1|debian-6.12`:
//! found with `apt-cache`, fetched with `apt-get download`, unpacked with
//! `dpkg-deb`, and cached (kernel image plus the zram modules, decompressed
//! and in load order) under `$XDG_CACHE_HOME/reclaimsim/kernels/PACKAGE/`.
//!
//! The packages ship no `modules.dep`: the load order comes from the
//! `depends=` entry of each module's `.modinfo` section.

use std::cmp::Ordering;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A kernel family `--kernel` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family {
    /// `--kernel` value.
    pub name: &'static str,
    /// Package name: this prefix, an ABI or version part of digits, dots and
    /// `+deb` tags, then `-amd64`.
    prefix: &'static str,
    /// The simulator profile family (`v6.1`, `v6.12`): `-classic` / `-mglru` appended.
    pub profile: &'static str,
    /// The kernel flushes memcg statistics rarely (pitfall 1): the simulator
    /// flushes as often as the guest's poller did, else it reads exact values.
    pub stale_stats: bool,
}

/// The supported families.
pub const FAMILIES: &[Family] = &[
    Family { name: "debian-6.1", prefix: "linux-image-6.1.0-", profile: "v6.1", stale_stats: false },
    Family { name: "debian-6.12", prefix: "linux-image-6.12.", profile: "v6.12", stale_stats: true },
];

/// The module the guest needs (with its dependencies).
const ROOT_MODULE: &str = "zram";

impl Family {
    /// Looks a family up by its `--kernel` name.
    pub fn find(name: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.name == name)
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
    /// Module files, in load order.
    pub modules: Vec<PathBuf>,
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

const ORDER_FILE: &str = "modules.order";

fn load_cached(dir: &Path, package: &str) -> Option<Kernel> {
    let order = fs::read_to_string(dir.join(ORDER_FILE)).ok()?;
    let modules: Vec<PathBuf> = order.lines().filter(|l| !l.is_empty()).map(|l| dir.join(l)).collect();
    let image = dir.join("vmlinuz");
    (image.exists() && modules.iter().all(|m| m.exists())).then(|| Kernel {
        package: package.to_string(),
        dir: dir.to_path_buf(),
        image,
        modules,
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

fn tool(name: &str, args: &[&str], dir: &Path) -> Result<Vec<u8>, String> {
    let out = Command::new(name)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{name}`: {e}"))?;
    if !out.status.success() {
        return Err(format!("`{name} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

/// The newest package of `family` the package manager knows.
fn newest_package(family: &Family) -> Result<String, String> {
    let out = tool(
        "apt-cache",
        &["search", "--names-only", &format!("^{}", family.prefix.replace('.', "\\."))],
        Path::new("/"),
    )?;
    let text = String::from_utf8_lossy(&out);
    let mut names: Vec<&str> =
        text.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| family.matches(n)).collect();
    names.sort_by(|a, b| version_cmp(a, b));
    names.last().map(|s| s.to_string()).ok_or_else(|| {
        format!(
            "apt-cache knows no `{}*-amd64` package (a Debian system with bookworm or later sources is needed)",
            family.prefix
        )
    })
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

/// Unpacks `deb` into `dir`: `vmlinuz` and `ROOT_MODULE` with its dependencies,
/// decompressed; writes the load order last (the cache entry is complete then).
fn unpack(deb: &Path, dir: &Path) -> Result<(), String> {
    let d = deb.to_str().ok_or("non-UTF-8 path")?;
    let tar = |args: &str| -> Result<Vec<u8>, String> {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("dpkg-deb --fsys-tarfile \"$0\" | tar {args}"))
            .arg(d)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("dpkg-deb/tar: {e}"))?;
        if !out.status.success() {
            return Err(format!("unpacking {d}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(out.stdout)
    };
    let listing = String::from_utf8_lossy(&tar("-t")?).into_owned();
    let image =
        listing.lines().find(|l| l.starts_with("./boot/vmlinuz-")).ok_or_else(|| format!("{d}: no boot/vmlinuz-*"))?;
    tar(&format!("-xO '{image}' > vmlinuz"))?;
    let path_of = |name: &str| listing.lines().find(|l| module_name(l).as_deref() == Some(name)).map(str::to_string);
    // Depth-first: a module after everything it depends on.
    let mut order: Vec<String> = Vec::new();
    let mut stack: Vec<(String, bool)> = vec![(ROOT_MODULE.to_string(), false)];
    while let Some((name, deps_done)) = stack.pop() {
        let file = format!("{name}.ko");
        if order.contains(&file) {
            continue;
        }
        let member = path_of(&name).ok_or_else(|| format!("{d}: no module `{name}`"))?;
        if !dir.join(&file).exists() {
            let decompress = if member.ends_with(".xz") { " | xz -dc" } else { "" };
            tar(&format!("-xO '{member}'{decompress} > '{file}'"))?;
        }
        if deps_done {
            order.push(file);
            continue;
        }
        let deps = module_depends(&fs::read(dir.join(&file)).map_err(|e| format!("{file}: {e}"))?);
        stack.push((name, true));
        stack.extend(deps.into_iter().filter(|m| !order.contains(&format!("{m}.ko"))).map(|m| (m, false)));
    }
    crate::write_atomic(&dir.join(ORDER_FILE), (order.join("\n") + "\n").as_bytes())
}

/// The kernel of `family`: the newest cached one, else the newest package,
/// downloaded and unpacked into the cache. Progress goes to stderr.
pub fn fetch(family: &Family) -> Result<Kernel, String> {
    let root = cache_root()?;
    if let Some(k) = cached(family, &root) {
        return Ok(k);
    }
    let package = newest_package(family)?;
    let dir = root.join(&package);
    let partial = root.join(format!(".{package}.partial.{}", std::process::id()));
    fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    eprintln!("reclaimsim validate: fetching {package} into {}", dir.display());
    let result = (|| {
        tool("apt-get", &["download", &package], &partial)?;
        let deb = fs::read_dir(&partial)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
            .ok_or("apt-get download left no .deb")?;
        unpack(&deb, &partial)?;
        fs::remove_file(&deb).map_err(|e| e.to_string())?;
        fs::rename(&partial, &dir).map_err(|e| format!("{} -> {}: {e}", partial.display(), dir.display()))
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    result?;
    load_cached(&dir, &package).ok_or_else(|| format!("{}: incomplete after unpacking", dir.display()))
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
        assert!(Family::find("debian-5.10").is_none());
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
