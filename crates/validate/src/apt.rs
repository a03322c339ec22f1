//! A private apt state per Debian release: the kernel of a release other than
//! the host's (bullseye's 5.10, sid's 7.2) is found by reading that release's
//! package lists. The archive addresses and signing key come from the host's
//! own apt sources (`/etc/apt/sources.list{,.d/*}`); the suites are the
//! family's. The state lives in the kernel cache (`apt/NAME/`): its
//! `sources.list`, package lists and apt's caches; the system's apt state is
//! neither read for packages nor changed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A Debian archive the host's apt sources name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archive {
    /// The archive's URI.
    pub uri: String,
    /// Its suites name a `-security` suite.
    pub security: bool,
    /// `Signed-By` of the source entry, if any.
    pub signed_by: Option<String>,
}

/// The Debian archives in apt source text: deb822 stanzas (`Types`, `URIs`,
/// `Suites`, `Signed-By`) and one-line `deb [options] URI SUITE ...` entries.
pub fn archives(text: &str) -> Vec<Archive> {
    let mut out: Vec<Archive> = Vec::new();
    let mut add = |uris: &[&str], suites: &[&str], signed_by: Option<String>| {
        let security = suites.iter().any(|s| s.ends_with("-security"));
        for uri in uris {
            let a = Archive { uri: uri.trim_end_matches('/').to_string(), security, signed_by: signed_by.clone() };
            if !out.contains(&a) {
                out.push(a);
            }
        }
    };
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')).map(str::trim))
        };
        if let (Some(types), Some(uris), Some(suites)) = (field("Types"), field("URIs"), field("Suites")) {
            if types.split_whitespace().any(|t| t == "deb") {
                let suites: Vec<&str> = suites.split_whitespace().collect();
                add(&uris.split_whitespace().collect::<Vec<_>>(), &suites, field("Signed-By").map(str::to_string));
            }
        }
    }
    for line in text.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("deb ") else { continue };
        let (options, rest) = match rest.trim_start().strip_prefix('[') {
            Some(r) => r.split_once(']').unwrap_or(("", "")),
            None => ("", rest),
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.len() >= 2 {
            let signed_by = options.split_whitespace().find_map(|o| o.strip_prefix("signed-by=")).map(str::to_string);
            add(&words[..1], &words[1..2], signed_by);
        }
    }
    out
}

/// The host's apt source text: `sources.list` and every `.list` / `.sources`
/// file in `sources.list.d`.
fn host_sources() -> String {
    let mut text = fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
    let mut files: Vec<PathBuf> = fs::read_dir("/etc/apt/sources.list.d")
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|x| x == "list" || x == "sources")) {
        text += "\n\n";
        text += &fs::read_to_string(f).unwrap_or_default();
    }
    text
}

/// The `sources.list` for `suites` (a suite ending in `-security` goes to
/// the security archive), from the host's archives; `None` when the host names
/// no Debian archive (one whose URI ends in `/debian`).
pub fn sources_list(host: &[Archive], suites: &[&str]) -> Option<String> {
    let main = host.iter().find(|a| !a.security && a.uri.ends_with("/debian"))?;
    let security = host.iter().find(|a| a.security && a.uri.ends_with("/debian-security"));
    let mut out = String::new();
    for suite in suites {
        let a = if suite.ends_with("-security") { security } else { Some(main) };
        if let Some(a) = a {
            let opt = a.signed_by.as_ref().map(|k| format!("[signed-by={k}] ")).unwrap_or_default();
            out += &format!("deb {opt}{} {suite} main\n", a.uri);
        }
    }
    Some(out)
}

/// apt tools run against the private state in `dir`.
pub struct Apt {
    dir: PathBuf,
}

impl Apt {
    /// The state for `suites` in `dir`, its `sources.list` (re)written from
    /// the host's archives.
    pub fn new(dir: &Path, suites: &[&str]) -> Result<Apt, String> {
        let list = sources_list(&archives(&host_sources()), suites)
            .ok_or("the host's apt sources name no Debian archive (a URI ending in /debian)")?;
        for sub in ["lists/partial", "cache/archives/partial"] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let path = dir.join("sources.list");
        if fs::read_to_string(&path).ok().as_deref() != Some(list.as_str()) {
            crate::write_atomic(&path, list.as_bytes())?;
            // Lists of other suites would be read too: start afresh.
            let _ = fs::remove_dir_all(dir.join("lists"));
            fs::create_dir_all(dir.join("lists/partial")).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        Ok(Apt { dir: dir.to_path_buf() })
    }

    fn options(&self) -> Vec<String> {
        let d = self.dir.display();
        vec![
            format!("-oDir::Etc::SourceList={d}/sources.list"),
            "-oDir::Etc::SourceParts=/nonexistent".into(),
            format!("-oDir::State::Lists={d}/lists"),
            format!("-oDir::Cache={d}/cache"),
            "-oAPT::Sandbox::User=root".into(),
            "-oAPT::Architecture=amd64".into(),
        ]
    }

    /// Runs `tool` (`apt-get`, `apt-cache`) with the private state in `cwd`.
    pub fn run(&self, tool: &str, args: &[&str], cwd: &Path) -> Result<String, String> {
        let out = Command::new(tool)
            .args(self.options())
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("`{tool}`: {e}"))?;
        if !out.status.success() {
            return Err(format!("`{tool} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `apt-get update` unless the package lists are there already (`force`: always).
    pub fn update(&self, force: bool) -> Result<(), String> {
        let have = fs::read_dir(self.dir.join("lists"))
            .map(|d| d.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().ends_with("_Packages")))
            .unwrap_or(false);
        if force || !have {
            eprintln!("reclaimsim validate: reading the package lists ({})", self.dir.join("sources.list").display());
            self.run("apt-get", &["-q", "update"], Path::new("/"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEB822: &str = "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/k.gpg\n\nTypes: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/k.gpg\n\nTypes: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n";

    #[test]
    fn archives_from_both_formats() {
        let a = archives(DEB822);
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(a[0].uri, "http://mirror.example/debian");
        assert!(!a[0].security && a[1].security);
        assert_eq!(a[1].signed_by.as_deref(), Some("/usr/share/keyrings/k.gpg"));
        let one = archives("# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://m.example/debian/ bullseye main\ndeb http://m.example/debian-security bullseye-security main\n");
        assert_eq!(
            one[0],
            Archive { uri: "http://m.example/debian".into(), security: false, signed_by: Some("/k.gpg".into()) }
        );
        assert_eq!(one[1], Archive { uri: "http://m.example/debian-security".into(), security: true, signed_by: None });
    }

    #[test]
    fn a_release_sources_list_from_the_host_archives() {
        let list = sources_list(&archives(DEB822), &["bullseye", "bullseye-security"]).unwrap();
        assert_eq!(
            list,
            "deb [signed-by=/usr/share/keyrings/k.gpg] http://mirror.example/debian bullseye main\n\
             deb [signed-by=/usr/share/keyrings/k.gpg] http://mirror.example/debian-security bullseye-security main\n"
        );
        assert_eq!(sources_list(&archives(DEB822), &["sid"]).unwrap().lines().count(), 1);
        assert!(sources_list(&archives("deb http://x.example/ubuntu jammy main\n"), &["sid"]).is_none());
    }
}
