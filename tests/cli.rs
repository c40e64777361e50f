//! The `talus` binary end to end: `run` on the CPU and on the GPU, output files, error exit codes.
//! The GPU test needs a Vulkan driver (lavapipe is enough; `.ci/run` installs it) and fails without one.

use std::path::Path;
use std::process::{Command, Output};

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).env("NO_COLOR", "1").output().expect("run the talus binary")
}

fn scene(name: &str) -> String {
    format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Minimal XML well-formedness check: declaration, balanced start/end tags with quoted
/// attributes, one root element. Returns the root element's name.
fn check_xml(doc: &str) -> Result<String, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut root: Option<String> = None;
    let mut rest = doc;
    while let Some(lt) = rest.find('<') {
        let between = &rest[..lt];
        if stack.is_empty() && !between.trim().is_empty() {
            return Err(format!("text outside the root element: {between:?}"));
        }
        if between.contains('>') {
            return Err(format!("stray '>' in text {between:?}"));
        }
        let gt = rest[lt..].find('>').ok_or("unterminated tag")? + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(pi) = tag.strip_prefix('?') {
            if !pi.ends_with('?') {
                return Err(format!("bad processing instruction <{tag}>"));
            }
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("</{name}> without a start tag"))?;
            if open != name.trim() {
                return Err(format!("</{name}> closes <{open}>"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let body = tag.trim_end_matches('/');
        let name: String = body.chars().take_while(|c| !c.is_whitespace()).collect();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == ':') {
            return Err(format!("bad element name in <{tag}>"));
        }
        // attributes: name="value" pairs
        let mut attrs = body[name.len()..].trim();
        while !attrs.is_empty() {
            let eq = attrs.find('=').ok_or(format!("attribute without value in <{tag}>"))?;
            let after = attrs[eq + 1..].trim_start();
            if !after.starts_with('"') {
                return Err(format!("unquoted attribute in <{tag}>"));
            }
            let close = after[1..].find('"').ok_or(format!("unterminated attribute in <{tag}>"))?;
            if after[1..1 + close].contains('<') {
                return Err(format!("'<' in attribute value in <{tag}>"));
            }
            attrs = after[close + 2..].trim_start();
        }
        if stack.is_empty() {
            if root.is_some() {
                return Err("more than one root element".into());
            }
            root = Some(name.clone());
        }
        if !self_closing {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed elements {stack:?}"));
    }
    if !rest.trim().is_empty() {
        return Err("text after the root element".into());
    }
    root.ok_or("no root element".into())
}

fn check_run_outputs(out: &Path, particles: usize, backend: &str) {
    // energy.csv: header with every required column, a row at step 0 and at every output.
    let csv = std::fs::read_to_string(out.join("energy.csv")).expect("energy.csv");
    let mut lines = csv.lines();
    let header = lines.next().expect("header");
    assert_eq!(
        header,
        "step,time,kinetic,kinetic_translational,kinetic_rotational,gravitational,strain,slip,dashpot,stiffness_work,wall_work,inserted,removed,total"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let steps: Vec<u64> = rows.iter().map(|r| r[0].parse().expect("step")).collect();
    assert_eq!(steps, vec![0, 25, 50], "two_ball_elastic outputs every 25 steps");
    for r in &rows {
        assert_eq!(r.len(), header.split(',').count());
        for v in &r[1..] {
            let x: f64 = v.parse().unwrap_or_else(|_| panic!("number in energy.csv: {v}"));
            assert!(x.is_finite());
        }
    }

    // summary.json
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("summary.json")).expect("summary JSON");
    for key in ["backend", "adapter", "particles", "steps", "dt", "simulated_time", "wall_seconds", "particle_steps_per_second", "contacts", "energies", "scene", "time_step"] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}: {summary}");
    }
    for key in ["kinetic", "kinetic_translational", "kinetic_rotational", "gravitational", "strain", "slip", "dashpot", "stiffness_work", "wall_work", "inserted", "removed", "total"] {
        assert!(summary["energies"][key].is_number(), "summary.json energies lack {key}");
    }
    assert_eq!(summary["backend"], backend);
    assert_eq!(summary["particles"], particles);
    assert_eq!(summary["steps"], 50);
    assert_eq!(summary["scene"]["name"], "two_ball_elastic");
    assert_eq!(summary["time_step"]["choice"], "explicit");
    // The last energy row is the summary's final energies.
    let total_column = header.split(',').position(|c| c == "total").expect("total column");
    let last_total: f64 = rows.last().unwrap()[total_column].parse().unwrap();
    assert_eq!(last_total, summary["energies"]["total"].as_f64().unwrap());

    // particles.pvd lists the snapshots; every .vtu is well-formed XML with the right point count.
    let pvd = std::fs::read_to_string(out.join("particles.pvd")).expect("particles.pvd");
    assert_eq!(check_xml(&pvd).unwrap_or_else(|e| panic!("particles.pvd: {e}")), "VTKFile");
    assert!(pvd.contains("type=\"Collection\""));
    let files: Vec<&str> = pvd.split("file=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    assert!(!files.is_empty(), "no DataSet in the .pvd");
    for f in files {
        let vtu = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(check_xml(&vtu).unwrap_or_else(|e| panic!("{f}: {e}")), "VTKFile");
        assert!(vtu.contains("type=\"UnstructuredGrid\""));
        assert!(vtu.contains(&format!("NumberOfPoints=\"{particles}\"")), "{f}: wrong NumberOfPoints");
        for name in ["id", "radius", "velocity", "angular_velocity", "force", "torque", "position", "connectivity", "offsets", "types"] {
            assert!(vtu.contains(&format!("Name=\"{name}\"")), "{f}: no DataArray {name}");
        }
    }
}

#[test]
fn run_cpu_writes_all_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = talus(&["run", &scene("two_ball_elastic.json"), "--backend", "cpu", "--steps", "50", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "exit {:?}\nstderr: {}", o.status, text(&o.stderr));
    assert!(text(&o.stderr).contains("dt = 2e-7 s (explicit)"), "time step not printed: {}", text(&o.stderr));
    check_run_outputs(&out, 2, "cpu");
}

#[test]
fn bad_scene_exits_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(scene("two_ball_elastic.json")).unwrap();
    let bad = original.replace("\"density\": 2500", "\"density\": -2500");
    assert_ne!(bad, original);
    let path = dir.path().join("bad.json");
    std::fs::write(&path, bad).unwrap();
    let o = talus(&["run", path.to_str().unwrap(), "--backend", "cpu", "--out", dir.path().join("out").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.starts_with("talus: "), "{err}");
    assert!(err.contains("density"), "the error should name the key: {err}");
    // A missing file is an error too.
    let o = talus(&["run", dir.path().join("missing.json").to_str().unwrap(), "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Needs a GPU adapter (lavapipe counts). Fails — does not skip — without one.
#[test]
fn run_gpu_writes_all_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = talus(&["run", &scene("two_ball_elastic.json"), "--backend", "gpu", "--steps", "50", "--out", out.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "`talus run --backend gpu` failed (this test needs a Vulkan driver; `.ci/run` installs lavapipe)\nstderr: {}",
        text(&o.stderr)
    );
    check_run_outputs(&out, 2, "gpu");
}

#[test]
fn info_lists_cpu_threads_and_ranks() {
    let o = talus(&["info"]);
    assert!(o.status.success(), "stderr: {}", text(&o.stderr));
    assert!(text(&o.stdout).contains("CPU threads:"));
    // the rank count: one in a build without the `mpi` feature (tests/mpi.rs runs it under mpirun)
    if !cfg!(feature = "mpi") {
        assert!(text(&o.stdout).contains("MPI ranks: 1 (built without the `mpi` feature"), "{}", text(&o.stdout));
    }
}

/// The CPU backend's copies of its force pass (`src/cpu/isa.rs`: AVX-512 and AVX2 where the
/// CPU has them, portable everywhere) give the same results bit for bit: `settle_box` (one
/// preset, the inlined pair loop), `mixed_models_box` (the model dispatch) and `tablet_pour`
/// (rigid bodies, whose rotation drifts run in SIMD lanes in the same copies), their energy and
/// wall-load files compared byte for byte. `talus bench` names the copy that ran, so the test
/// also checks that `TALUS_CPU_ISA` picked it, and that a bad value is refused.
#[test]
fn force_pass_copies_agree_bit_for_bit() {
    let with_isa = |isa: &str, args: &[&str]| Command::new(env!("CARGO_BIN_EXE_talus")).args(args).env("NO_COLOR", "1").env("TALUS_CPU_ISA", isa).output().expect("run the talus binary");
    #[cfg(target_arch = "x86_64")]
    let (has_avx2, has_avx512) = (std::arch::is_x86_feature_detected!("avx2"), std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl"));
    #[cfg(not(target_arch = "x86_64"))]
    let (has_avx2, has_avx512) = (false, false);
    let widest = if has_avx512 { "AVX-512" } else if has_avx2 { "AVX2" } else { "portable" };
    let copies = [("auto", widest), ("avx2", if has_avx2 { "AVX2" } else { "portable" }), ("portable", "portable")];
    for (isa, named) in copies {
        let o = with_isa(isa, &["bench", "--scene", &scene("settle_box.json"), "--steps", "2", "--warmup", "0", "--backend", "cpu"]);
        assert!(o.status.success(), "stderr: {}", text(&o.stderr));
        let named = format!("{named} force pass");
        assert!(text(&o.stdout).contains(&named), "TALUS_CPU_ISA={isa}: expected {named:?} in\n{}", text(&o.stdout));
    }
    // (tablet_pour: the rigid bodies' rotation drift runs in SIMD lanes, `cpu::rigid::kick_drift`)
    for (name, steps) in [("settle_box.json", "3000"), ("mixed_models_box.json", "2000"), ("tablet_pour.json", "1000")] {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<Vec<Vec<u8>>> = copies
            .iter()
            .map(|(isa, _)| {
                let out = dir.path().join(isa);
                let o = with_isa(isa, &["run", &scene(name), "--backend", "cpu", "--steps", steps, "--no-progress", "--out", out.to_str().unwrap()]);
                assert!(o.status.success(), "{name}, TALUS_CPU_ISA={isa}: stderr: {}", text(&o.stderr));
                ["energy.csv", "walls.csv"].iter().map(|f| std::fs::read(out.join(f)).unwrap()).collect()
            })
            .collect();
        assert!(files[0][0].len() > 500, "{name}: energy.csv too short to compare");
        for (copy, got) in copies.iter().zip(&files).skip(1) {
            assert!(*got == files[0], "{name}: the {} and {} force passes wrote different energy or wall files", copies[0].1, copy.1);
        }
    }
    let o = with_isa("avx9", &["bench", "--scene", &scene("settle_box.json"), "--steps", "2", "--backend", "cpu"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("TALUS_CPU_ISA") && text(&o.stderr).contains("avx9"), "{}", text(&o.stderr));
}

/// The force pass's shader variants compute the same bits: shaders compiled without naga's
/// runtime checks (`TALUS_GPU_SHADER_CHECKS=0`) and the force pass issuing its loads early
/// (`TALUS_GPU_EARLY_LOADS=1`), and the force pass with every contact law and the energy
/// booking compiled in (`TALUS_GPU_SPECIALISE=0`; by default each scene's pipelines keep only
/// the one contact and adhesion model its pairs have), and the force pass reading each
/// particle's own state again at each contact (`TALUS_GPU_RELOAD_OWN=1`, a GPU's default;
/// lavapipe's is 0), and list slots placed by SIMD group with early loads
/// (`TALUS_GPU_SLOT_PLACES=1`: records, shares and incoming entries laid out column by column,
/// the place read beside the partner word), all layout rows of `benches/gpu_peers.sh`. Every
/// file of a GPU
/// run (energies, wall loads, snapshots, checkpoint) is byte-identical to the default run's, on
/// scenes that between them run every pass of a step: plane walls, mesh walls, liquid bridges,
/// rigid clumps, and grains inserted on the device (hopper_discharge's first 0.01 s: two
/// exchanges, about 400 grains). A bad value is an error naming the variable.
#[test]
fn shader_variants_write_the_same_bytes() {
    let run_with = |name: &str, steps: &str, env: &[(&str, &str)], out: &std::path::Path, extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_talus"))
            .args(["run", &scene(name), "--backend", "gpu", "--steps", steps, "--no-progress", "--out", out.to_str().unwrap()])
            .args(extra)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}, {env:?}: stderr: {}", text(&o.stderr));
    };
    let run = |name: &str, steps: &str, env: &[(&str, &str)], out: &std::path::Path| run_with(name, steps, env, out, &[]);
    // the run's energies, wall loads and checkpoint, and its snapshots (particles, bodies)
    let files = |dir: &std::path::Path| -> Vec<(String, Vec<u8>)> {
        let list = |d: &std::path::Path, prefix: &str| -> Vec<String> {
            std::fs::read_dir(d).map(|r| r.map(|e| format!("{prefix}{}", e.unwrap().file_name().into_string().unwrap())).collect()).unwrap_or_default()
        };
        let mut names: Vec<String> = list(dir, "").into_iter().chain(list(&dir.join("snapshots"), "snapshots/")).filter(|f| f.ends_with(".csv") || f.ends_with(".vtu") || f.ends_with(".talus")).collect();
        names.sort();
        names.into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
    };
    // (lavapipe, a CPU device, keeps the own state in registers by default; a GPU reads it again)
    // (slots placed by SIMD group, with early loads: the place read beside the partner word)
    let variants: [&[(&str, &str)]; 5] = [
        &[("TALUS_GPU_SHADER_CHECKS", "0")],
        &[("TALUS_GPU_EARLY_LOADS", "1")],
        &[("TALUS_GPU_SPECIALISE", "0")],
        &[("TALUS_GPU_RELOAD_OWN", "1")],
        &[("TALUS_GPU_SLOT_PLACES", "1"), ("TALUS_GPU_EARLY_LOADS", "1")],
    ];
    for (name, steps) in [("settle_box.json", "600"), ("rotating_drum.json", "500"), ("wet_granules.json", "600"), ("tablet_pour.json", "600"), ("hopper_discharge.json", "1100")] {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("default");
        run(name, steps, &[], &base);
        let a = files(&base);
        let has = |end: &str| a.iter().any(|(f, _)| f.ends_with(end));
        assert!(has("energy.csv") && has("walls.csv") && has("checkpoint.talus") && (name == "settle_box.json" || a.iter().any(|(f, _)| f.ends_with(".vtu") && !f.contains("_0000000000"))), "{name}: {:?}", a.iter().map(|(f, _)| f).collect::<Vec<_>>());
        for (k, env) in variants.iter().enumerate() {
            let out = dir.path().join(format!("variant{k}"));
            run(name, steps, env, &out);
            let b = files(&out);
            assert_eq!(a.iter().map(|(f, _)| f).collect::<Vec<_>>(), b.iter().map(|(f, _)| f).collect::<Vec<_>>(), "{name}, {env:?}: different files");
            for ((f, x), (_, y)) in a.iter().zip(&b) {
                assert!(x == y, "{name}: {f} differs with {env:?}");
            }
        }
    }
    // the scene's contact code only, against every law and adhesion model compiled in
    // (`TALUS_GPU_SPECIALISE=0`): the same bits
    let dir = tempfile::tempdir().unwrap();
    let same_as_every_law = |name: &str, steps: &str, extra: &[&str], what: &str| {
        let (own, every) = (dir.path().join(format!("{what}_own")), dir.path().join(format!("{what}_every")));
        run_with(name, steps, &[], &own, extra);
        run_with(name, steps, &[("TALUS_GPU_SPECIALISE", "0")], &every, extra);
        let (a, b) = (files(&own), files(&every));
        assert!(a.len() >= 2 && a.len() == b.len(), "{:?}", a.iter().map(|(f, _)| f).collect::<Vec<_>>());
        for ((f, x), (g, y)) in a.iter().zip(&b) {
            assert!(f == g && x == y, "{name} ({what}): {f} differs with every law and adhesion model compiled in");
        }
    };
    // a scene that books no energy: its force pass compiled without the booking
    same_as_every_law("settle_box.json", "600", &["--set", "energy_tracking=false"], "untracked");
    // a scene whose pairs mix `hooke` and `hertz`: those two laws only (`ContactVariant::models`)
    same_as_every_law("mixed_models_box.json", "600", &[], "two laws");
    // JKR adhesion (wet_granules above has liquid bridges): that adhesion model only
    same_as_every_law("cohesive_heap.json", "400", &[], "jkr");
    for var in ["TALUS_GPU_SHADER_CHECKS", "TALUS_GPU_EARLY_LOADS", "TALUS_GPU_SPECIALISE", "TALUS_GPU_RELOAD_OWN", "TALUS_GPU_SLOT_PLACES"] {
        let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", &scene("settle_box.json"), "--backend", "gpu", "--steps", "2", "--no-progress"]).env(var, "no").output().unwrap();
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains(var) && text(&o.stderr).contains("`no`"), "{}", text(&o.stderr));
    }
}

/// `talus info --shaders` hands every pass of the step to the driver: on lavapipe (which
/// compiles them but reports no statistics) each is listed as compiled; a driver with
/// VK_KHR_pipeline_executable_properties lists its statistics instead.
#[test]
fn info_shaders_compiles_every_pass_on_the_driver() {
    for checks in ["1", "0"] {
        let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["info", "--shaders"]).env("TALUS_GPU_SHADER_CHECKS", checks).output().unwrap();
        let out = text(&o.stdout);
        assert!(o.status.success(), "stderr: {}\n{out}", text(&o.stderr));
        let (_, passes) = out.split_once("Compiled passes on").unwrap_or_else(|| panic!("{out}"));
        assert!(passes.contains(if checks == "1" { "with naga's runtime checks" } else { "without naga's runtime checks" }), "{passes}");
        for p in talus::gpu::shader_stats::STEP_PASSES {
            let line = passes.lines().find(|l| l.trim_start().starts_with(&format!("{} ", p.label))).unwrap_or_else(|| panic!("no line for {} in\n{passes}", p.label));
            assert!(line.contains("compiled; the driver reports no statistics") || line.contains("subgroup"), "{line}");
        }
        let forces = passes.lines().find(|l| l.trim_start().starts_with("forces ")).unwrap();
        assert!(forces.contains(&format!("workgroup {:>3}", talus::layout::consts::WORKGROUP_SIZE)), "{forces}");
    }
}

/// The AMD compiler without an AMD GPU: Mesa's RADV offers a null device with
/// `RADV_FORCE_FAMILY` (no GPU, no wgpu device: `talus info --shaders` opens none), and it
/// has VK_KHR_pipeline_executable_properties. So here the statistics are really read
/// (`shader_stats::read_statistics`): every pass compiled by ACO for an RX 6800-class GPU
/// (navi21), with its VGPRs, and none spilling registers to memory. The choices that are there
/// for the registers do what they are for on this compiler: reading the own state again at each
/// contact (`TALUS_GPU_RELOAD_OWN`, a GPU's default) takes fewer VGPRs than keeping it, and a
/// force pass compiled for one adhesion model fewer instructions than one for every model
/// (`forces+anyglue`, a scene mixing adhesion models or `TALUS_GPU_SPECIALISE=0`).
#[test]
fn info_shaders_reads_the_amd_compilers_statistics() {
    let icd = std::fs::read_dir("/usr/share/vulkan/icd.d")
        .ok()
        .and_then(|d| d.flatten().map(|e| e.path()).find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("radeon_icd"))))
        .expect("RADV's ICD in /usr/share/vulkan/icd.d (apt-get install mesa-vulkan-drivers)");
    // the statistics of every pass of `talus info --shaders` with `env`, by pass label
    let compiled = |env: &[(&str, &str)]| -> Vec<(String, String)> {
        let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["info", "--shaders"]).env("RADV_FORCE_FAMILY", "navi21").env("VK_DRIVER_FILES", &icd).env("VK_ICD_FILENAMES", &icd).envs(env.iter().copied()).output().unwrap();
        let out = text(&o.stdout);
        assert!(o.status.success(), "stderr: {}\n{out}", text(&o.stderr));
        let (_, passes) = out.split_once("Compiled passes on").unwrap_or_else(|| panic!("{out}"));
        assert!(passes.contains("RADV NAVI21"), "{passes}");
        talus::gpu::shader_stats::STEP_PASSES
            .iter()
            .map(|p| {
                let line = passes.lines().find(|l| l.trim_start().starts_with(&format!("{} ", p.label))).unwrap_or_else(|| panic!("no line for {} in\n{passes}", p.label));
                (p.label.to_string(), line.to_string())
            })
            .collect()
    };
    let statistic = |line: &str, name: &str| -> f64 {
        let at = line.find(&format!(" {name} ")).unwrap_or_else(|| panic!("no {name} in {line}"));
        line[at + name.len() + 2..].split([',', ' ']).next().unwrap().parse().unwrap_or_else(|_| panic!("{name} in {line}"))
    };
    let default = compiled(&[]);
    for (_, line) in &default {
        assert!(line.contains("subgroup 64"), "{line}");
        let vgprs = statistic(line, "VGPRs");
        assert!(vgprs > 0.0 && vgprs <= 256.0, "{line}");
        assert_eq!(statistic(line, "Spilled VGPRs"), 0.0, "{line}");
        assert!(statistic(line, "Instructions") > 0.0, "{line}");
    }
    let of = |passes: &[(String, String)], label: &str, name: &str| statistic(&passes.iter().find(|(l, _)| l == label).unwrap().1, name);
    let kept = compiled(&[("TALUS_GPU_RELOAD_OWN", "0")]);
    for label in ["forces", "forces+untracked", "forces+mesh"] {
        assert!(of(&default, label, "VGPRs") < of(&kept, label, "VGPRs"), "{label}: own state read again {} VGPRs, kept {}", of(&default, label, "VGPRs"), of(&kept, label, "VGPRs"));
    }
    let every = of(&default, "forces+anyglue", "Instructions");
    for label in ["forces+adhesion", "forces+jkr"] {
        assert!(of(&default, label, "Instructions") < every, "{label}: one adhesion model {} instructions, every one {every}", of(&default, label, "Instructions"));
    }
}

/// `talus info | head -1`: a report read through a pipe that is closed before it is written
/// ends as a Unix tool does (SIGPIPE), not with a panic and status 101.
#[cfg(unix)]
#[test]
fn info_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus")).arg("info").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // the read end closed before the report's first line
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // 13 = SIGPIPE
    assert_eq!(out.status.signal(), Some(13), "status {:?}: {err}", out.status);
}

/// `talus bench --ids shuffled` numbers the same bed at random: the same grains and contacts as
/// placed; on the GPU the report says how the device lays them out (cell order, the force
/// pass's schedule taken where the runs differ), and the environment switches of
/// `benches/gpu_peers.sh`'s layout rows change what it says. A clump bench refuses it.
#[test]
fn bench_ids_shuffled_and_the_gpu_layout() {
    let dir = tempfile::tempdir().unwrap();
    let json = |name: &str| dir.path().join(format!("{name}.json"));
    let bench = |name: &str, backend: &str, ids: &str, env: &[(&str, &str)]| {
        let path = json(name);
        let args = ["bench", "--backend", backend, "--packing", "bed", "--particles", "2000", "--steps", "2", "--warmup", "0", "--ids", ids, "--json", path.to_str().unwrap()];
        let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(args).envs(env.iter().copied()).output().unwrap();
        assert!(o.status.success(), "{name}: stderr: {}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        (v, text(&o.stdout))
    };
    let (placed, _) = bench("cpu_placed", "cpu", "placed", &[]);
    let (shuffled, out) = bench("cpu_shuffled", "cpu", "shuffled", &[]);
    assert!(out.contains("bed, hertz, ids shuffled"), "{out}");
    assert_eq!(placed["particles"], shuffled["particles"]);
    assert_eq!(placed["contacts_per_particle"], shuffled["contacts_per_particle"], "the shuffled bed is not the same bed");
    assert!(shuffled["gpu_layout"].is_null());
    // --untracked: the same bed and contacts, with every pair's energy booking off
    for backend in ["cpu", "gpu"] {
        let path = json(&format!("{backend}_untracked"));
        let o = talus(&["bench", "--backend", backend, "--packing", "bed", "--particles", "2000", "--steps", "2", "--warmup", "0", "--untracked", "--json", path.to_str().unwrap()]);
        assert!(o.status.success(), "stderr: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("bed, hertz, untracked"), "{}", text(&o.stdout));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["contacts_per_particle"], placed["contacts_per_particle"], "{backend}: the untracked bed is not the same bed");
    }
    // --adhesion: the same bed with liquid bridges, on both backends the same contacts (a
    // bridge counts from touch to rupture, so at least the dry bed's); the GPU's force pass
    // compiled for that adhesion model
    let mut wet = Vec::new();
    for backend in ["cpu", "gpu"] {
        let path = json(&format!("{backend}_capillary"));
        let o = talus(&["bench", "--backend", backend, "--packing", "bed", "--model", "hertz_mindlin", "--adhesion", "capillary", "--particles", "2000", "--steps", "2", "--warmup", "0", "--json", path.to_str().unwrap()]);
        assert!(o.status.success(), "stderr: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("bed, hertz_mindlin with capillary adhesion"), "{}", text(&o.stdout));
        wet.push(serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&path).unwrap()).unwrap());
    }
    assert_eq!(wet[0]["contacts_per_particle"], wet[1]["contacts_per_particle"]);
    assert!(wet[0]["contacts_per_particle"].as_f64().unwrap() >= placed["contacts_per_particle"].as_f64().unwrap(), "{} {}", wet[0], placed);
    assert_eq!(wet[1]["gpu_layout"]["contact_adhesion"], "capillary", "{}", wet[1]);
    assert_eq!(wet[1]["gpu_layout"]["contact_model"], "hertz_mindlin");
    for (args, says) in [(["--adhesion", "jkr", "--model", "hertz"], "adhesion jkr replaces the Hertz spring of contact model hertz_mindlin and needs that model, got hertz"), (["--adhesion", "glue", "--model", "hertz"], "unknown adhesion `glue`")] {
        let o = talus(&["bench", "--packing", "bed", "--particles", "100", "--steps", "1", args[0], args[1], args[2], args[3]]);
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains(says), "{}", text(&o.stderr));
    }

    let (gpu, out) = bench("gpu_shuffled", "gpu", "shuffled", &[]);
    assert!(out.contains("gpu layout            stored in cell order"), "{out}");
    assert_eq!(gpu["gpu_layout"]["cell_order"], true);
    assert_eq!(gpu["gpu_layout"]["schedule"], "taken", "{out}");
    let (gpu, _) = bench("gpu_placed", "gpu", "placed", &[]);
    assert_eq!(gpu["gpu_layout"]["schedule"], "on, not taken (the runs are alike)");
    let (gpu, out) = bench("gpu_plain", "gpu", "shuffled", &[("TALUS_GPU_BALANCE", "0"), ("TALUS_GPU_CELL_ORDER", "0")]);
    assert!(out.contains("stored in id order; force-pass schedule off"), "{out}");
    assert_eq!(gpu["gpu_layout"]["cell_order"], false);
    assert_eq!(gpu["gpu_layout"]["schedule"], "off");
    assert_eq!(gpu["gpu_layout"]["shader_checks"], true);
    let (gpu, out) = bench("gpu_unchecked", "gpu", "shuffled", &[("TALUS_GPU_SHADER_CHECKS", "0")]);
    assert!(out.contains("force-pass schedule taken; shaders without naga's runtime checks"), "{out}");
    assert_eq!(gpu["gpu_layout"]["shader_checks"], false);
    assert_eq!(gpu["gpu_layout"]["early_loads"], false);
    let (gpu, out) = bench("gpu_early", "gpu", "shuffled", &[("TALUS_GPU_EARLY_LOADS", "1")]);
    assert!(out.contains("force-pass schedule taken; force pass with early loads"), "{out}");
    assert_eq!(gpu["gpu_layout"]["early_loads"], true);

    // clumps are shuffled body by body: the same bodies and contacts; on the GPU stored body by
    // body in cell order
    let clumps = |name: &str, backend: &str, ids: &str| {
        let path = json(name);
        let o = talus(&["bench", "--backend", backend, "--packing", "clumps", "--particles", "2000", "--steps", "40", "--warmup", "0", "--ids", ids, "--json", path.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: stderr: {}", text(&o.stderr));
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let (placed, shuffled) = (clumps("clumps_placed", "cpu", "placed"), clumps("clumps_shuffled", "cpu", "shuffled"));
    assert_eq!(placed["particles"], shuffled["particles"]);
    assert_eq!(placed["contacts_per_particle"], shuffled["contacts_per_particle"], "the shuffled clumps are not the same clumps");
    assert_eq!(clumps("clumps_gpu", "gpu", "shuffled")["gpu_layout"]["cell_order"], true);
    // the rotating drum (a turning mesh): the same grains on both backends, and the GPU's contacts
    // within a few percent of the CPU's after 40 steps
    let drum = |backend: &str| {
        let path = json(&format!("drum_{backend}"));
        let o = talus(&["bench", "--backend", backend, "--packing", "drum", "--model", "hertz_mindlin", "--particles", "2000", "--steps", "40", "--warmup", "0", "--json", path.to_str().unwrap()]);
        assert!(o.status.success(), "drum {backend}: stderr: {}", text(&o.stderr));
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let (cpu, gpu) = (drum("cpu"), drum("gpu"));
    assert_eq!(cpu["particles"], gpu["particles"]);
    assert_eq!(gpu["scene"], "drum, hertz_mindlin");
    let (c, g) = (cpu["contacts_per_particle"].as_f64().unwrap(), gpu["contacts_per_particle"].as_f64().unwrap());
    assert!(c > 0.5 && (c - g).abs() <= 0.03 * c, "drum contacts per particle: CPU {c}, GPU {g}");
    let o = talus(&["bench", "--ids", "random"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("random"), "{}", text(&o.stderr));
}

/// `talus bench --steps 0` times nothing: an error naming the option, not a rate of 0.
#[test]
fn bench_refuses_zero_steps() {
    let o = talus(&["bench", "--backend", "cpu", "--particles", "100", "--steps", "0"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--steps 0"), "{}", text(&o.stderr));
}

/// `talus bench --scene FILE --from T` with T after the scene's end is refused at once, naming
/// the end (the CPU reference would otherwise run the scene on to T: a typo's hours).
#[test]
fn bench_scene_from_after_the_end_is_refused() {
    let o = talus(&["bench", "--backend", "cpu", "--scene", &scene("two_ball_elastic.json"), "--from", "1e9", "--steps", "2"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("--from 1000000000 s is after the end of") && err.contains("two_ball_elastic.json"), "{err}");
}

/// The scripts of a lent GPU's call run end to end here, so that the rare call never finds
/// them broken: `benches/device_pack.sh` packs two binaries (gzipped) and the Vulkan loader,
/// and `benches/device_gpu.sh` unpacks them and runs `benches/gpu_peers.sh` on lavapipe
/// (`ANY_ADAPTER=1`: no NVIDIA adapter asked for; a 2,000-grain bed, DEME off), whose table has
/// the bed's row with the "before" binary's column and both binaries' per-pass times, the bed
/// with the slots placed, and the turning drum's row.
#[test]
fn device_scripts_run_end_to_end_on_lavapipe() {
    let root = env!("CARGO_MANIFEST_DIR");
    let bin = env!("CARGO_BIN_EXE_talus");
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("device");
    let pack = Command::new("bash").arg(format!("{root}/benches/device_pack.sh")).env("TALUS", bin).env("TALUS_OLD", bin).env("DEVICE_DIR", &device).output().unwrap();
    assert!(pack.status.success(), "device_pack.sh: {}{}", text(&pack.stdout), text(&pack.stderr));
    for f in ["talus.gz", "talus_old.gz", "lib/libvulkan.so.1", "commit"] {
        assert!(device.join(f).is_file(), "device_pack.sh packed no {f}");
    }
    let work = dir.path().join("work");
    let vars = [("ANY_ADAPTER", "1"), ("DEME", "0"), ("NBED", "2000"), ("W", "2"), ("S", "4"), ("CASES", "bed1M drum1M"), ("OLD_CASES", "bed1M drum1M"), ("LAYOUT_AB", ""), ("UNTRACKED", ""), ("PROFILE", "1")];
    let call = Command::new("bash").arg(format!("{root}/benches/device_gpu.sh")).arg(&work).env("DEVICE_DIR", &device).envs(vars).output().unwrap();
    let said = format!("{}{}", text(&call.stdout), text(&call.stderr));
    assert!(call.status.success(), "device_gpu.sh: {said}");
    let table = std::fs::read_to_string(work.join("table.md")).unwrap_or_else(|e| panic!("no table.md ({e}): {said}"));
    let row = table.lines().find(|l| l.starts_with("| bed1M |")).unwrap_or_else(|| panic!("no bed1M row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | case | N | timed steps | tracked | untracked | before: tracked | before: untracked | …
    let rate = |k: usize| cells[k].parse::<f64>().unwrap_or_else(|_| panic!("cell {k} of `{row}` is no rate"));
    assert!(rate(4) > 0.0 && rate(6) > 0.0, "{row}");
    assert_eq!(cells[2], "2028", "{row}");
    assert!(table.contains("|  | passes, ms/step") && table.contains("|  | before: passes, ms/step"), "{table}");
    // the bed again with the slots placed (PLACED's default), its rate and passes
    assert!(table.contains("|  | slots placed by SIMD group (TALUS_GPU_SLOT_PLACES=1): ") && table.contains("|  | slots placed: passes, ms/step"), "{table}");
    assert!(table.contains("|  | access model: ") && table.contains("|  | slots placed: access model: "), "{table}");
    // the turning drum, new and "before" binary (the same one here)
    let row = table.lines().find(|l| l.starts_with("| drum1M |")).unwrap_or_else(|| panic!("no drum1M row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(cells[4].parse::<f64>().is_ok_and(|r| r > 0.0) && cells[6].parse::<f64>().is_ok_and(|r| r > 0.0), "{row}");
}
