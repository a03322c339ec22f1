//! `reclaimsim settings` and `profiles` are derived from the knob declarations
//! (issue #19): their JSON lists each setting's kernels, and docs/settings.md
//! is the current `settings --markdown`.

use std::process::Command;

fn reclaimsim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reclaimsim")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn docs_settings_md_is_current() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/settings.md")).unwrap();
    assert!(
        doc == reclaimsim(&["settings", "--markdown"]),
        "docs/settings.md is stale: run `reclaimsim settings --markdown > docs/settings.md`"
    );
}

#[test]
fn settings_json_gives_each_knobs_kernels() {
    let doc: serde_json::Value = serde_json::from_str(&reclaimsim(&["settings", "--json"])).unwrap();
    let find = |key: &str| doc["settings"].as_array().unwrap().iter().find(|s| s["key"] == key).unwrap().clone();
    let s = find("swapin_workingset");
    assert_eq!((s["since"].as_str(), s["until"].as_str()), (Some("v4.20"), Some("v6.0")));
    assert_eq!(s["type"], "bool");
    assert_eq!(find("vm.swappiness")["history"], "tunable");
    assert_eq!(find("cpu.access_ns")["since"], serde_json::Value::Null);
    assert_eq!(find("lru_balance")["since"], "v2.6");
}

#[test]
fn profiles_json_derives_flags_from_the_kernel_version() {
    let doc: serde_json::Value = serde_json::from_str(&reclaimsim(&["profiles", "--json"])).unwrap();
    let p = |name: &str| doc["profiles"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!(p("v3.9")["kernel"], "v3.9");
    assert_eq!(p("v3.9")["settings"]["dirty_throttle"], "iff-congested");
    assert_eq!(p("v3.9")["settings"]["vma_ra_enabled"], "0");
    assert_eq!(p("v5.8")["settings"]["vma_ra_enabled"], "1");
    assert_eq!(p("v5.9-prot")["patches"][1]["key"], "anon_workingset");
    assert_eq!(p("v6.12-mglru")["lru"], "mglru");
}
