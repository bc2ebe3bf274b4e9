//! Embeds the commit this extension is built from as `IBNETSIM_BUILD_COMMIT`,
//! so a results manifest names the code that computed it rather than whatever
//! repository the Python environment happens to sit in. A build outside a git
//! checkout (an sdist, a vendored copy) records "unknown".
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// Rebuilds when HEAD moves (a checkout) or the branch it names moves (a commit).
/// Only existing paths are given: cargo reruns the script on every build for a
/// missing one, and a loose ref that was packed simply shows up in packed-refs.
fn watch_head(dir: &Path) {
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { dir.join(p) }
    };
    let Some(git_dir) = git(dir, &["rev-parse", "--git-dir"]).map(abs) else { return };
    let common = git(dir, &["rev-parse", "--git-common-dir"]).map(abs).unwrap_or_else(|| git_dir.clone());
    let mut watched = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(branch));
    }
    for p in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let commit = git(&dir, &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=IBNETSIM_BUILD_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    watch_head(&dir);
}
